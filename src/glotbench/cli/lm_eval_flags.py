"""lm-evaluation-harness flags typed on ``glotbench run``: rewritten to glotbench's spelling before
click parses the command line, or refused in one line naming glotbench's spelling
(docs/coming-from-lm-eval.md lists the table).

Both ``--flag VALUE`` and ``--flag=VALUE`` are read. Only ``run``'s arguments are rewritten
(:class:`glotbench.cli.LazyGroup` calls :func:`translate`), and only up to a bare ``--``.
"""

from __future__ import annotations

import re

from glotbench.errors import GlotbenchError

VALUE = object()  # the flag's own value goes here

# lm-eval flag -> the glotbench arguments it becomes (VALUE: the value typed after it), or the
# one line that refuses it. A flag mapped to () is accepted and changes nothing.
LM_EVAL_FLAGS: dict[str, tuple | str] = {
    "--model_args": ("--model-args", VALUE),  # KEY=VALUE,KEY=VALUE, read the same way
    "--output_path": ("--output", VALUE),
    "--num_fewshot": ("--num-fewshot", VALUE),
    "--gen_kwargs": ("--gen-kwargs", VALUE),  # KEY=VALUE,KEY=VALUE, GEN_KEYS renamed
    "--apply_chat_template": ("--model-args", "chat=true"),  # chat is glotbench's default where the model has a template
    "--log_samples": (),  # glotbench always writes every sample (RUN_DIR/samples.jsonl)
    "--batch_size": "--batch_size: glotbench batches by itself; use --concurrency N (requests in flight) or, "
                    "for hf: models, --model-args batch_size=N",
    "--include_path": "--include_path: lm-eval task YAMLs are converted first (glotbench tasks import "
                      "FILE_OR_DIR --output DIR), then run by file (--tasks DIR/TASK.yaml) or found by setting "
                      "GLOTBENCH_TASKS_PATH=DIR",
}
GEN_KEYS = {"max_gen_toks": "max_tokens", "until": "stop"}  # --gen_kwargs keys lm-eval names otherwise
# the accepted flags that take a value: those whose glotbench arguments use it (a refused flag is refused first)
TAKES_VALUE = {flag for flag, rule in LM_EVAL_FLAGS.items() if isinstance(rule, tuple) and VALUE in rule}
_GEN_KEY = re.compile(rf"(^|,)\s*({'|'.join(map(re.escape, GEN_KEYS))})=")


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
            raise GlotbenchError(f"{flag} NAME: glotbench takes a Jinja template file instead: --set chat_template=FILE")
        else:
            value = None
        pretrained = [p.split("=", 1)[1] for p in (value or "").split(",") if p.strip().startswith("pretrained=")]
        if flag == "--model_args" and pretrained:
            raise GlotbenchError(f"--model_args pretrained={pretrained[0]}: glotbench names the model in --model "
                                 f"(--model hf:{pretrained[0]}); pass the other keys as --model-args KEY=VALUE")
        if flag == "--gen_kwargs":
            value = _GEN_KEY.sub(lambda m: f"{m.group(1)}{GEN_KEYS[m.group(2)]}=", value)
        out.extend(value if part is VALUE else part for part in rule)
        i += 1
    return out
