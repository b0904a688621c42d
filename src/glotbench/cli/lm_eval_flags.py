"""lm-evaluation-harness flags typed on ``glotbench run``: rewritten to glotbench's spelling before
click parses the command line, or refused in one line naming glotbench's spelling
(docs/coming-from-lm-eval.md lists the table).

Both ``--flag VALUE`` and ``--flag=VALUE`` are read. Only ``run``'s arguments are rewritten
(:class:`glotbench.cli.LazyGroup` calls :func:`translate`), and only up to a bare ``--``.
"""

from __future__ import annotations

from glotbench.errors import GlotbenchError

VALUE = object()  # the flag's own value goes here

# lm-eval flag -> the glotbench arguments it becomes (VALUE: the value typed after it), or the
# one line that refuses it. A flag mapped to () is accepted and changes nothing.
LM_EVAL_FLAGS: dict[str, tuple | str] = {
    "--model_args": ("--model-args", VALUE),  # KEY=VALUE,KEY=VALUE, read the same way
    "--output_path": ("--output", VALUE),
    "--num_fewshot": ("--num-fewshot", VALUE),
    "--gen_kwargs": ("--gen-kwargs", VALUE),  # KEY=VALUE,KEY=VALUE (glotbench's names: max_tokens, stop)
    "--apply_chat_template": ("--model-args", "chat=true"),  # chat is glotbench's default where the model has a template
    "--log_samples": (),  # glotbench always writes every sample (RUN_DIR/samples.jsonl)
    "--batch_size": "--batch_size: glotbench batches by itself; use --concurrency N (requests in flight) or, "
                    "for hf: models, --model-args batch_size=N",
    "--include_path": "--include_path: lm-eval task YAMLs are converted first (glotbench tasks import-lm-eval "
                      "FILE_OR_DIR --output DIR), then run by file (--tasks DIR/TASK.yaml) or found by setting "
                      "GLOTBENCH_TASKS_PATH=DIR",
}
TAKES_VALUE = {"--model_args", "--output_path", "--num_fewshot", "--gen_kwargs", "--batch_size", "--include_path"}


def translate(args: list[str]) -> list[str]:
    """``run``'s arguments with every lm-eval flag rewritten; GlotbenchError (one line) for a refused one."""
    out: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return out + args[i:]
        flag, eq, inline = arg.partition("=")
        rule = LM_EVAL_FLAGS.get(flag)
        if rule is None:
            out.append(arg)
            i += 1
            continue
        if isinstance(rule, str):
            raise GlotbenchError(rule)
        if flag in TAKES_VALUE:
            if eq:
                value = inline
            elif i + 1 < len(args):
                value, i = args[i + 1], i + 1
            else:
                raise GlotbenchError(f"{flag} needs a value (glotbench's spelling: {rule[0]})")
        elif eq or (flag == "--apply_chat_template" and i + 1 < len(args) and not args[i + 1].startswith("-")):
            # lm-eval's --apply_chat_template NAME picks a named template of the tokenizer
            raise GlotbenchError(f"{flag} NAME: glotbench takes a Jinja template file instead: --chat-template FILE")
        else:
            value = None
        if flag == "--model_args" and any(p.strip().startswith("pretrained=") for p in value.split(",")):
            name = next(p.split("=", 1)[1] for p in value.split(",") if p.strip().startswith("pretrained="))
            raise GlotbenchError(f"--model_args pretrained={name}: glotbench names the model in --model "
                                 f"(--model hf:{name}); pass the other keys as --model-args KEY=VALUE")
        out.extend(value if part is VALUE else part for part in rule)
        i += 1
    return out
