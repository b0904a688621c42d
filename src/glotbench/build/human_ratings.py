"""Human ratings of a run's outputs brought back beside its automatic scores (Czech-Bench §4.1's human
evaluation of model outputs): ``build review import-ratings RUN_DIR SHEET...``.

Each sheet (CSV, TSV or JSONL; one per annotator, or an ``annotator`` column) has ``sample_id`` (the
run's sample ids), ``task`` (needed when the run holds several tasks, unless ``--task``) and the human
value (``rating``: a number; or ``label``). Rows are joined on the run's samples: an id the run does
not have, a task it did not run, a rating that is not a number, are refused in one line naming the
sheet, the row and the field, before anything is written. A blank value is "not rated" (counted).

Per item the human value is the annotators' mean rating (``kind`` rating), or their majority label
(``kind`` label; a tie leaves the item out, counted). The automatic value is a per-item number of
the run (``values[KEY]``: the headline metric's per-item value by default) or, for labels, the run's
prediction (``pred``). Agreement: Spearman's rho (scipy) for ratings, Cohen's kappa (scikit-learn)
for labels, over the items both have; the 95% interval is the percentile bootstrap over items
(resamples where the statistic is undefined, e.g. a constant side, are left out and counted). The
result goes to ``RUN_DIR/human_ratings.json`` (one entry per task), which ``glotbench report`` shows.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from glotbench.errors import DataError

FILE_NAME = "human_ratings.json"
DEFAULT_BOOT = 2000


@dataclass
class Joined:
    task: str
    kind: str
    automatic: str
    items: list[dict] = field(default_factory=list)  # sample_id, human, automatic, n_annotators
    blank: int = 0
    ties: int = 0
    no_automatic: int = 0
    annotators: int = 0
    units: list[list] = field(default_factory=list)  # every rated item's values, one per annotator (for alpha)


def read_sheet(path: Path) -> list[tuple[str, dict]]:
    """``[(where, row)]`` of a CSV/TSV/JSONL sheet (``where``: "row N" / "line N")."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such sheet")
    if path.suffix.lower() == ".jsonl":
        from glotbench.data.loaders import iter_jsonl

        return [(f"line {n}", rec) for n, rec in iter_jsonl(path)]
    import csv

    delim = "\t" if path.suffix.lower() == ".tsv" else ","
    with path.open(encoding="utf-8-sig", newline="") as fh:
        return [(f"row {n}", dict(r)) for n, r in enumerate(csv.DictReader(fh, delimiter=delim), 2)]


def _number(v) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v) if math.isfinite(v) else None
    try:
        x = float(str(v).strip().replace(",", "."))
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def join(run, sheets: list[Path], *, kind: str, task: str | None, column: str, automatic: str | None) -> Joined:
    """The sheets' values joined on the run's samples (``run``: a loaded run, glotbench.report.runs.load_run)."""
    from glotbench.report.runs import metric_of, primary_metric

    samples, run_dir = run.samples, run.path

    tasks = sorted({s.task for s in samples})
    if task is not None and task not in tasks:
        raise DataError(f"{run_dir}: --task {task!r}: the run has no such task (tasks: {', '.join(tasks)})")
    by_key = {(s.task, str(s.sample_id)): s for s in samples}
    votes: dict[str, list] = {}
    seen_task: set[str] = set()
    blank = 0
    n_ann = 0
    for path in sheets:
        rows = read_sheet(path)
        per_ann: dict[str, int] = Counter()
        for where, row in rows:
            sid = row.get("sample_id", row.get("id"))
            if sid is None or str(sid).strip() == "":
                raise DataError(f"{path}: {where}: field 'sample_id': missing")
            t = task or row.get("task") or (tasks[0] if len(tasks) == 1 else None)
            if t is None:
                raise DataError(f"{path}: {where}: field 'task': missing (the run holds {', '.join(tasks)}; or give --task)")
            if task is not None and row.get("task") not in (None, "", task):
                continue  # another task's row
            if (t, str(sid)) not in by_key:
                raise DataError(f"{path}: {where}: field 'sample_id': {sid!r} is not a sample of task {t!r} in {run_dir}")
            if column not in row:
                raise DataError(f"{path}: {where}: field '{column}': missing (the human {kind})")
            raw = row[column]
            if raw is None or str(raw).strip() == "":
                blank += 1
                continue
            if kind == "rating":
                val = _number(raw)
                if val is None:
                    raise DataError(f"{path}: {where}: field '{column}': {raw!r} is not a number")
            else:
                val = str(raw).strip()
            seen_task.add(t)
            ann = str(row.get("annotator") or path)
            per_ann[ann] += 1
            votes.setdefault(f"{t}\x00{sid}", []).append(val)
        n_ann += len(per_ann)
    if len(seen_task) > 1:
        raise DataError(f"{sheets[0]}: rows of several tasks ({', '.join(sorted(seen_task))}): give --task")
    t = task or (next(iter(seen_task)) if seen_task else tasks[0])
    recs = [s for s in samples if s.task == t]
    if automatic is None:
        if kind == "label":
            automatic = "pred"
        else:
            tres = run.tasks.get(t) or {}  # results.json as load_run read it (any version, migrated)
            m = metric_of(tres, primary_metric(tres))
            keys = {k for s in recs for k in (s.values or {})}
            automatic = next((k for k in ((m.key if m else None), (m.name if m else None), "correct") if k and k in keys), None)
            if automatic is None:
                raise DataError(f"{run_dir}: task {t}: no per-item value of the headline metric; name one with --automatic "
                                f"(the samples' values: {', '.join(sorted(keys)) or 'none'})")
    out = Joined(task=t, kind=kind, automatic=automatic, blank=blank, annotators=n_ann)
    for s in recs:
        vs = votes.get(f"{t}\x00{s.sample_id}")
        if not vs:
            continue
        out.units.append(list(vs))
        if kind == "rating":
            human = sum(vs) / len(vs)
        else:
            top = Counter(vs).most_common()
            if len(top) > 1 and top[0][1] == top[1][1]:
                out.ties += 1
                continue
            human = top[0][0]
        if automatic == "pred":
            auto = None if s.pred is None or not s.is_scored else str(s.pred)
        else:
            v = (s.values or {}).get(automatic) if s.is_scored else None
            auto = _number(v) if v is not None else None
        if auto is None:
            out.no_automatic += 1
            continue
        out.items.append({"sample_id": str(s.sample_id), "human": human, "automatic": auto, "n_annotators": len(vs)})
    return out


def statistic(kind: str, human: list, auto: list) -> float:
    """Spearman's rho (ratings) or Cohen's kappa (labels); NaN where undefined."""
    import warnings

    if len(human) < 2:
        return float("nan")
    if kind == "rating":
        from scipy.stats import spearmanr

        if len(set(human)) < 2 or len(set(auto)) < 2:
            return float("nan")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(spearmanr(human, auto).statistic)
    from sklearn.metrics import cohen_kappa_score

    labels = sorted(set(human) | set(auto))
    if len(labels) < 2:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k = float(cohen_kappa_score(human, auto, labels=labels))
    return k if math.isfinite(k) else float("nan")


def bootstrap(kind: str, human: list, auto: list, n_boot: int = DEFAULT_BOOT, seed: int = 0,
              alpha: float = 0.05) -> tuple[float | None, float | None, int]:
    """Percentile bootstrap interval over items: ``(low, high, resamples left out as undefined)``."""
    import numpy as np

    from glotbench.scoring.resample import percentile_interval, resampled_stats

    n = len(human)
    if n < 2:
        return None, None, n_boot
    stats = resampled_stats(n, n_boot, seed, lambda idx: [
        statistic(kind, [human[i] for i in row], [auto[i] for i in row]) for row in idx])
    undefined = int(np.isnan(stats).sum())
    lo, hi = percentile_interval(stats, alpha)
    return (None, None, undefined) if math.isnan(lo) else (lo, hi, undefined)


def summarise(j: Joined, n_boot: int, seed: int, sheets: list[Path]) -> dict:
    human = [x["human"] for x in j.items]
    auto = [x["automatic"] for x in j.items]
    value = statistic(j.kind, human, auto)
    lo, hi, undefined = bootstrap(j.kind, human, auto, n_boot, seed)
    name = "spearman_rho" if j.kind == "rating" else "cohen_kappa"
    alpha = None
    if j.annotators >= 2:  # the annotators' own agreement (Krippendorff's alpha, glotbench.build.agreement)
        from glotbench.build.agreement import krippendorff_alpha

        a = krippendorff_alpha(j.units, "interval" if j.kind == "rating" else "nominal")
        alpha = None if math.isnan(a) else a
    return {"task": j.task, "kind": j.kind, "automatic": j.automatic, "statistic": name,
            "value": None if math.isnan(value) else value, "ci95": [lo, hi], "interval": "percentile bootstrap over items",
            "n_boot": n_boot, "seed": seed, "undefined_resamples": undefined, "n_items": len(j.items),
            "blank_rows": j.blank, "ties": j.ties, "no_automatic": j.no_automatic, "annotators": j.annotators,
            "annotators_alpha": alpha, "annotators_alpha_level": "interval" if j.kind == "rating" else "nominal",
            "sheets": [str(s) for s in sheets], "items": j.items}


def write(run_dir: Path, entry: dict) -> Path:
    """Add (or replace) the task's entry in ``RUN_DIR/human_ratings.json`` (written atomically)."""
    path = Path(run_dir) / FILE_NAME
    data = {"tasks": {}}
    if path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            raise DataError(f"{path}: not readable JSON (move it aside to start again)") from None
    data.setdefault("tasks", {})[entry["task"]] = entry
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    tmp.replace(path)
    return path
