"""Walk the whole task tree shipped inside the installed lm-eval wheel: how many task files
`glotbench tasks import-lm-eval` converts, how many it refuses (and why), per family; and, for the
families asked for, whether glotbench builds the same prompts as lm-eval's own ConfigurableTask.

Per family (a folder under lm_eval/tasks) it counts YAML files, task files, group files, converted,
refused; the merged keys of every file (include chains) are also compared with lm-eval's own loader
(``lm_eval.tasks._yaml_loader.load_yaml``). For the families in --compare, each converted task gets a
few synthetic records in the record shape its templates ask for (every variable the doc_to_* Jinja
templates read, as text, a field named as doc_to_target as an option index, a field named as
doc_to_choice as a list): lm-eval's ConfigurableTask builds its requests on them (dataset_path
pointed at the local JSON, --num_fewshot 2 when the task has a few-shot source, fewshot seed 1234),
glotbench's converted task (loaded from the written YAML) builds its prompt and option continuations,
and the two are compared byte for byte on every record. A task whose synthetic records lm-eval itself
cannot render is counted as "no records" (not compared), not as a difference.

    python bench/lmeval_zoo.py                       # conversion counts for the whole tree + the compare families
    python bench/lmeval_zoo.py --compare belebele,xnli --limit 20
    python bench/lmeval_zoo.py --lm-eval-hooks       # process_docs / !function doc_to_* run as lm-eval's code

Needs lm-eval (pip install --no-deps lm-eval) and datasets. Not a unit test: the whole tree takes minutes.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GLOTBENCH_OFFLINE", "1")

MULTILINGUAL = ["belebele", "xnli", "okapi", "mgsm", "xcopa", "xstorycloze", "xwinograd", "paws-x", "cmmlu",
                "translation", "lambada_multilingual"]
N_RECORDS = 4


def _variables(template) -> tuple[set[str], dict[str, set[str]]]:
    """Top-level names a Jinja template reads, and the attributes read off each (``choices.text``)."""
    import jinja2
    from jinja2 import nodes

    if not isinstance(template, str):
        return set(), {}
    try:
        ast = jinja2.Environment().parse(template)
    except jinja2.TemplateSyntaxError:
        return set(), {}
    from jinja2 import meta

    names = set(meta.find_undeclared_variables(ast))
    attrs: dict[str, set[str]] = collections.defaultdict(set)
    for g in ast.find_all(nodes.Getattr):
        if isinstance(g.node, nodes.Name) and g.attr not in ("strip", "split", "replace", "lower", "upper", "format",
                                                                 "index", "join", "startswith", "endswith"):
            attrs[g.node.name].add(g.attr)
    for g in ast.find_all(nodes.Getitem):  # translation["de"]: a mapping read by key
        if isinstance(g.node, nodes.Name) and isinstance(g.arg, nodes.Const) and isinstance(g.arg.value, str):
            attrs[g.node.name].add("[" + g.arg.value)
    return names, attrs


FLAVORS = ("text", "target digits", "target ints", "target letters")


# Record shapes of datasets whose fields only lm-eval's Python hooks read (process_docs, !function
# doc_to_*), which the templates cannot tell: the dataset's own fields, by task folder
def _shape_arc(i, tag, src=None):
    return {"id": f"{tag}{i}", "instruction": f"Kérdés {tag} {i}?", **{f"option_{x}": f"{x} válasz {i}" for x in "abcde"},
            "answer": "ABCDE"[i % 5]}


def _shape_hellaswag(i, tag, src=None):
    return {"ind": i, "activity_label": f"Tevékenység {i}", "ctx_a": f"Egy ember [title] {tag} {i}.", "ctx_b": "aztán",
            "endings": [f"vég {j} {i}." for j in range(4)], "label": str(i % 4)}


def _shape_truthfulqa(i, tag, src=None):
    return {"question": f"Kérdés {tag} {i}?", "mc1_targets_choices": [f"igaz {i}", "hamis"], "mc1_targets_labels": [1, 0],
            "mc2_targets_choices": [f"igaz {i}", "is igaz", "hamis"], "mc2_targets_labels": [1, 1, 0]}


def _shape_xcopa(i, tag, src=None):
    return {"premise": f"A férfi {tag} {i} megbetegedett.", "choice1": f"Gombát evett {i}.", "choice2": "Futott.",
            "question": "cause" if i % 2 else "effect", "label": i % 2, "idx": i}


def _shape_xwinograd(i, tag, src=None):
    return {"sentence": f"Anna {tag} {i} nem adta oda a könyvet, mert _ elfoglalt volt.", "option1": "Anna",
            "option2": f"Éva {i}", "answer": "12"[i % 2]}


def _shape_llama_mmlu(i, tag, src):
    """Meta's Llama-3.1 eval details (multilingual MMLU): process_docs keeps the task's own subject,
    ``subtask_name`` ``mmlu_<lang>_chat.<subject>`` (task ``mmlu_<lang>_llama_<subject>``)."""
    lang, subject = src["task"].split("_")[1], src["task"].split("_llama_", 1)[1]
    return {"input_question": f" Kérdés {tag} {i}? ", "input_choice_list": {x: f"{x} válasz {i}" for x in "ABCD"},
            "input_correct_responses": ["ABCD"[i % 4]], "subtask_name": f"mmlu_{lang}_chat.{subject}"}


SHAPES = {"okapi/arc_multilingual": _shape_arc, "okapi/hellaswag_multilingual": _shape_hellaswag,
          "okapi/truthfulqa_multilingual": _shape_truthfulqa, "xcopa": _shape_xcopa, "xwinograd": _shape_xwinograd,
          **{f"llama3/instruct/mmlu_{lang}": _shape_llama_mmlu for lang in ("de", "es", "fr", "hi", "it", "pt", "th")}}


def synth_records(src: dict, n: int, tag: str, flavor: str = "text") -> list[dict]:
    """Records in the shape the task's templates read (see the module doc). ``flavor``: what the
    variables only the doc_to_target template reads hold: text, "1" / "2" (digits as text), 1 / 2 or
    "A" / "B"."""
    fields: set[str] = set()
    attrs: dict[str, set[str]] = collections.defaultdict(set)
    for key in ("doc_to_text", "doc_to_target", "doc_to_choice", "description"):
        v = src.get(key)
        names, at = _variables(v)
        fields |= names
        for k, s in at.items():
            attrs[k] |= s
    choice, target = src.get("doc_to_choice"), src.get("doc_to_target")
    k = len(choice) if isinstance(choice, list) else 2
    target_only = _variables(target)[0] - _variables(src.get("doc_to_text"))[0] - _variables(choice)[0]
    recs = []
    for i in range(n):
        rec: dict = {}
        for f in sorted(fields | set(attrs)):
            if f in attrs:
                rec[f] = {a.lstrip("["): (f"{f}[{a}] {tag}{i}" if a.startswith("[") else [f"{f}.{a} {tag}{i} {j}" for j in range(k)])
                          for a in attrs[f]}
            elif f in target_only and flavor != "text":
                rec[f] = {"target digits": str(1 + i % 2), "target ints": 1 + i % 2, "target letters": "AB"[i % 2]}[flavor]
            else:
                rec[f] = f"{f} {tag}{i} szöveg."
        for name in (choice, target):  # plain field names (not templates)
            if isinstance(name, str) and "{" not in name:
                fields.add(name)
        if isinstance(choice, str) and "{" not in choice:
            rec[choice] = [f"option {j} {tag}{i}" for j in range(k)]
        if isinstance(target, str) and "{" not in target:
            rec[target] = i % k
        if isinstance(src.get("doc_to_text"), str) and "{" not in src["doc_to_text"] and src["doc_to_text"]:
            rec[src["doc_to_text"]] = f"{src['doc_to_text']} {tag}{i} kérdés?"
        recs.append(rec)
    return recs


def lm_eval_requests(path: Path, files: dict[str, Path], shots: int) -> dict[int, list[tuple]]:
    from lm_eval.api.task import ConfigurableTask
    from lm_eval.tasks._yaml_loader import load_yaml

    cfg = load_yaml(path, resolve_func=True)
    cfg.update(dataset_path="json", dataset_name=None, num_fewshot=shots,
               dataset_kwargs={"data_files": {s: str(p) for s, p in files.items()}})
    task = ConfigurableTask(config=cfg)
    task.set_fewshot_seed(1234)
    task.build_all_requests(limit=None, rank=0, world_size=1)
    out: dict[int, list] = {}
    for inst in sorted(task.instances, key=lambda x: (x.doc_id, x.idx)):
        out.setdefault(inst.doc_id, []).append(tuple(inst.arguments))
    return out


def glotbench_requests(task_yaml: Path, shots: int, output_type: str) -> dict[int, list[tuple]]:
    from glotbench.tasks.registry import resolve

    [task] = resolve([str(task_yaml)])
    out = {}
    for s in task.samples():
        ctx = task.plain_prompt(s, shots, None)
        if output_type == "multiple_choice" and s.vars.get("_multiple_input"):  # a context per choice
            head = task._plain_head(s, shots, None)
            gp = s.vars.get("gen_prefix") or ""  # lm-eval: each choice's context ends with the gen_prefix
            out[s.index] = [(head + c + gp, task.opts["target_delimiter"] + s.vars["answer_text"]) for c in task.ll_options(s)]
        elif output_type == "multiple_choice":
            out[s.index] = [(ctx, task.opts["target_delimiter"] + c) for c in task.ll_options(s)]
        else:
            out[s.index] = [(ctx,)]
    return out


def compare(path: Path, src: dict, spec: dict, work: Path) -> str:
    """'equal', 'differ: ...', 'no records: ...' (lm-eval cannot render the synthetic records)."""
    from glotbench.tasks.lm_eval_import import dump

    splits = sorted(set(spec["dataset"]["splits"]))
    parts = path.parts
    rel = "/".join(parts[len(parts) - parts[::-1].index("tasks"):])  # the path below lm_eval/tasks
    shape = next((fn for prefix, fn in SHAPES.items() if rel.startswith(prefix + "/")), None)
    files = {}
    shots = 2 if spec["fewshot"].get("split") or spec["options"].get("fewshot_samples") else 0
    why = ""
    for flavor in FLAVORS[:1] if shape else FLAVORS:
        for s in splits:
            files[s] = work / "data" / f"{src['task']}_{s}.jsonl"
            files[s].parent.mkdir(parents=True, exist_ok=True)
            recs = [shape(i, s, src) for i in range(N_RECORDS + 3)] if shape else synth_records(src, N_RECORDS + 3, s, flavor)
            files[s].write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
        try:
            theirs = lm_eval_requests(path, files, shots)
            break
        except Exception as err:  # noqa: BLE001 - lm-eval cannot render these records: the next flavor
            why = f"{type(err).__name__}: {str(err)[:80]}"
    else:
        return f"no records: lm-eval: {why}"
    if not theirs:
        return "no records: lm-eval built no requests"
    task_yaml = work / f"{src['task']}.yaml"
    task_yaml.write_text(dump(spec, path.name), encoding="utf-8")
    try:
        ours = glotbench_requests(task_yaml, shots, src.get("output_type", "generate_until"))
    except Exception as err:  # noqa: BLE001 - a difference to report
        return f"differ: glotbench: {type(err).__name__}: {str(err)[:100]}"
    for doc_id, reqs in theirs.items():
        mine = ours.get(doc_id)
        if src.get("output_type") != "multiple_choice":
            reqs = [(r[0],) for r in reqs]
        if mine != reqs:
            return f"differ: doc {doc_id}: {str(mine)[:100]!r} vs {str(reqs)[:100]!r}"
    return "equal"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compare", default=",".join(MULTILINGUAL), help="families whose prompts are compared ('' none)")
    ap.add_argument("--limit", type=int, default=0, help="at most this many tasks compared per family (0: all)")
    ap.add_argument("--lm-eval-hooks", action="store_true", help="convert with --lm-eval-hooks (delegate process_docs "
                    "and !function doc_to_* to lm-eval's code)")
    ap.add_argument("--no-loader-check", action="store_true", help="skip comparing merged keys with lm-eval's loader")
    args = ap.parse_args()
    import lm_eval
    from lm_eval.tasks._yaml_loader import load_yaml

    from glotbench.errors import TaskSpecError
    from glotbench.tasks.lm_eval_import import _Function, cannot_run, convert, is_group, load_lm_eval_yaml

    def norm(x):
        if isinstance(x, _Function):
            return str(x.base / x[len("!function "):])
        if isinstance(x, dict):
            return {k: norm(v) for k, v in x.items()}
        if isinstance(x, list):
            return [norm(v) for v in x]
        return x

    import importlib.metadata

    root = Path(lm_eval.__file__).parent / "tasks"
    wanted = [f for f in args.compare.split(",") if f]
    fams: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    reasons: collections.Counter = collections.Counter()
    diffs: list[str] = []
    t0 = time.time()
    logging_quiet()
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted(root.rglob("*.yaml")):
            fam = path.relative_to(root).parts[0]
            c = fams[fam]
            c["yaml"] += 1
            try:
                src = load_lm_eval_yaml(path)
            except TaskSpecError:
                c["unreadable"] += 1
                continue
            if not args.no_loader_check:
                try:
                    same = norm(src) == load_yaml(path, resolve_func=False)
                except Exception:  # noqa: BLE001 - lm-eval's own loader fails on it too
                    same = True
                c["loader differs"] += 0 if same else 1
            if is_group(src):
                c["group"] += 1
                continue
            if not isinstance(src.get("task"), str):
                c["other"] += 1
                continue
            c["task"] += 1
            spec, problems = convert(src, language="en", data_dir="data", hooks=args.lm_eval_hooks)
            fatal = cannot_run(problems)
            if fatal:
                c["refused"] += 1
                for f in fatal:
                    reasons[f.split(":")[0].split(" (")[0]] += 1
                continue
            c["converted"] += 1
            if fam in wanted and (not args.limit or c["compared"] < args.limit):
                c["compared"] += 1
                verdict = compare(path, src, spec, Path(tmp) / fam / src["task"])
                key = verdict.split(":")[0]
                c[key] += 1
                if key == "differ" and len(diffs) < 30:
                    diffs.append(f"{path.relative_to(root)}: {verdict}")
    cols = ["yaml", "task", "group", "converted", "refused", "loader differs", "compared", "equal", "differ", "no records"]
    print(f"lm-eval {importlib.metadata.version('lm-eval')}: {root} ({time.time() - t0:.0f} s)")
    print("| family | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    total: collections.Counter = collections.Counter()
    for fam in sorted(fams):
        total.update(fams[fam])
        if fam in wanted or not wanted or fams[fam]["task"] >= 20:
            print(f"| {fam} | " + " | ".join(str(fams[fam][k]) for k in cols) + " |")
    print("| **all families** | " + " | ".join(str(total[k]) for k in cols) + " |")
    print("\nrefusals by cause:")
    for why, n in reasons.most_common(15):
        print(f"  {n:5d}  {why}")
    if diffs:
        print("\ndifferences (first 30):")
        for d in diffs:
            print("  " + d)


def logging_quiet() -> None:
    import logging
    import warnings

    logging.disable(logging.WARNING)
    warnings.filterwarnings("ignore")
    os.environ.setdefault("TQDM_DISABLE", "1")
    try:
        import datasets

        datasets.disable_progress_bars()
        datasets.logging.set_verbosity_error()
    except ImportError:
        pass


if __name__ == "__main__":
    from catalog_root import build_catalog

    build_catalog()
    main()
