"""`build filter --sequential`: Czech-Bench's AGREE procedure (Jirkovský 2024, §5.4.1): model 1
answers every item, model 2 only what model 1 got wrong, and so on; what every model got wrong is
exported for a human check of ambiguity (the thesis: 673 items, Claude 3 Haiku -> Sonnet ->
GPT-4 Turbo left 115, of which 46 were removed by hand).

Each round is a normal `glotbench evaluate` run of the step's task YAML on that round's items,
with its own run directory (``<runs>/round<i>``) and journal: rerun the command and finished
rounds answer from their journals, nothing is sent twice. An item counts as answered when its
sample's ``correct`` value is 1 (the label scorer's; ``correct_key`` for another scorer); an item
that ended in an error counts as missed and goes on to the next model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from glotbench.build.provenance import add_step, write_items
from glotbench.errors import DataError
from glotbench.yamlfile import load_yaml


@dataclass
class Round:
    model: str  # as given to --model: "SPEC" or "SPEC;NAME=VALUE;..."
    model_args: dict
    settings: dict
    items: int
    answered: int
    errors: int
    run_dir: Path


@dataclass
class SequentialOutcome:
    rounds: list[Round] = field(default_factory=list)
    items: list[dict] = field(default_factory=list)
    residue: list[dict] = field(default_factory=list)


def per_model_args(models: list[str], args: list[str] | dict | None) -> list[dict]:
    """``-M KEY=VALUE`` goes to every model, ``-M 2:KEY=VALUE`` to the second only (``args``: the
    strings, or the dict the model option group read them into, keys ``2:KEY`` included)."""
    import re

    from glotbench.settings import parse_key_values

    out: list[dict[str, Any]] = [{} for _ in models]
    if isinstance(args, dict):
        for key, value in args.items():
            m = re.match(r"^(\d+):(.*)$", key)
            if m and not 1 <= int(m.group(1)) <= len(models):
                raise DataError(f"-M {key}={value}: there is no model {m.group(1)} (gave {len(models)} --model)")
            for t in ([int(m.group(1)) - 1] if m else range(len(models))):
                out[t][m.group(2).strip() if m else key] = value
        return out
    for raw in args or []:
        m = re.match(r"^(\d+):(.*)$", raw)
        targets = range(len(models))
        if m:
            k = int(m.group(1))
            if not 1 <= k <= len(models):
                raise DataError(f"-M {raw!r}: there is no model {k} (gave {len(models)} --model)")
            targets, raw = [k - 1], m.group(2)
        kv = parse_key_values([raw], "-M")
        for t in targets:
            out[t].update(kv)
    return out


def split_model(raw: str) -> tuple[str, dict]:
    """``"embedded;temperature=0.8;seed=2"`` -> ``("embedded", {"temperature": 0.8, "seed": 2})``: run
    settings (glotbench.settings.RunSettings fields, checked by the run) for one model."""
    from glotbench.settings import parse_key_values

    spec, *rest = raw.split(";")
    if not spec.strip():
        raise DataError(f"--model {raw!r}: no model spec before ';'")
    return spec.strip(), parse_key_values([r for r in rest if r.strip()], f"--model {spec}")


def _round_task(task_yaml: Path, subset: Path, dest: Path) -> Path:
    spec = load_yaml(Path(task_yaml).read_text(encoding="utf-8"))  # aliases bounded (yamlfile.py)
    spec["dataset"] = {**spec["dataset"], "splits": {**spec["dataset"].get("splits", {}),
                                                     spec["dataset"].get("eval_split", "test"): str(subset.resolve())}}
    dest.write_text(yaml.safe_dump(spec, allow_unicode=True, sort_keys=False, width=1000), encoding="utf-8")
    return dest


def run_sequential(items: list[dict], task_yaml: Path, models: list[str], model_args: list[dict], runs: Path,
                   *, correct_key: str = "correct", settings: dict | None = None) -> SequentialOutcome:
    from glotbench.api import evaluate

    ids = [str(it.get("id")) for it in items]
    if any(not x or x == "None" for x in ids):
        raise DataError("filter --sequential: every item needs an 'id' (the task's id field)")
    runs = Path(runs)
    runs.mkdir(parents=True, exist_ok=True)
    by_id = {str(it["id"]): it for it in items}
    answered_by: dict[str, tuple[int, str]] = {}
    remaining = list(ids)
    out = SequentialOutcome()
    for k, (label, margs) in enumerate(zip(models, model_args), 1):
        model, own = split_model(label)
        if not remaining:
            break
        subset = runs / f"round{k}.jsonl"
        write_items(subset, [by_id[x] for x in remaining])
        tyaml = _round_task(task_yaml, subset, runs / f"round{k}.yaml")
        res = evaluate(model, [str(tyaml)], output=str(runs / f"round{k}"), model_args=margs, **{**(settings or {}), **own})
        correct = {s.id for s in res.samples if (s.values or {}).get(correct_key) == 1.0}
        errors = sum(1 for s in res.samples if s.status == "error")
        for x in remaining:
            if x in correct:
                answered_by[x] = (k, label)
        out.rounds.append(Round(label, margs, own, len(remaining), len([x for x in remaining if x in correct]), errors,
                                runs / f"round{k}"))
        remaining = [x for x in remaining if x not in correct]
    for x in ids:
        it = dict(by_id[x], provenance=list(by_id[x].get("provenance") or []))
        k, model = answered_by.get(x, (None, None))
        add_step(it, "filter-sequential", answered_by=model, round=k,
                 missed_by=[r.model for r in out.rounds[: (k - 1 if k else len(out.rounds))]] or None)
        out.items.append(it)
        if k is None:
            out.residue.append(it)
    return out
