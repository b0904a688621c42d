"""``compare --contamination RUN...``: each task's score on its clean and on its contaminated items,
from the per-item flags of ``glotbench analyze contamination TASK --corpus ... --run RUN``, stored in
the run's folder as ``RUN/contamination/TASK.jsonl`` (docs/trust-a-number.md, section 5).

An item is contaminated when the chosen check (``lm_eval_13gram``, lm-eval's rule, by default; or
``length_aware``) flagged it; clean when that check looked at it and found nothing. Items the check
could not look at (too short for it) and scored items the flags file does not name are counted and
left out of both sides. Each side's score is the task's headline metric (or ``--metric``) on that
side's items, with a 95% percentile bootstrap interval over them; the difference contaminated - clean
has the interval of the difference of the two sides' resampled scores (each side resampled on its
own: the sides hold different items). A run with ``--circular`` is split on its plain order (rotation 0).
An invalid or failed score is shown as such, with no number."""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from glotbench.errors import DataError
from glotbench.report.runs import RunData, metric_of, primary_metric
from glotbench.scoring.metrics import ScoredItem, bootstrap_stats
from glotbench.scoring.resample import percentile_interval

FLAGS_DIR = "contamination"
CHECKS = ("lm_eval_13gram", "length_aware")


def flags_path(run_dir: Path, task: str) -> Path:
    return Path(run_dir) / FLAGS_DIR / (re.sub(r"[^A-Za-z0-9._-]", "_", task) + ".jsonl")


def read_flags(path: Path, check: str) -> dict[str, bool | None]:
    """Item id -> contaminated (True/False), None when the check did not look at it; one line naming
    the file and line for a row that is not a flags row."""
    out: dict[str, bool | None] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            raise DataError(f"{path}: line {n}: not JSON (a file written by glotbench analyze contamination)") from None
        if not isinstance(row, dict) or row.get("summary"):
            continue
        flag = row.get(check)
        if "item" not in row or not isinstance(flag, dict) or not isinstance(flag.get("contaminated"), bool):
            raise DataError(f"{path}: line {n}: field 'item' or '{check}.contaminated' missing (a file written by "
                            "glotbench analyze contamination)")
        out[str(row["item"])] = bool(flag["contaminated"]) if flag.get("checked", True) else None
    return out


@dataclass
class SplitRow:
    model: str
    task: str
    metric: str
    check: str
    n_clean: int
    n_contaminated: int
    n_unchecked: int
    n_unflagged: int
    clean: float | None
    clean_ci95: list | None
    contaminated: float | None
    contaminated_ci95: list | None
    difference: float | None
    difference_ci95: list | None
    invalid: str | None = None


def _num(x) -> float | None:
    return None if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))) else float(x)


def _side(items: list[ScoredItem], metric, n_boot: int, seed: int):
    if not items:
        return None, None, None
    value = _num(metric(items))
    stats = bootstrap_stats(items, metric, n_boot, seed) if n_boot > 0 else None
    ci = None if stats is None else [_num(x) for x in percentile_interval(stats)]
    return value, ci, stats


def split_rows(runs: list[RunData], check: str = CHECKS[0], metric: str | None = None, n_boot: int = 1000,
               seed: int = 0) -> tuple[list[SplitRow], list[str]]:
    rows: list[SplitRow] = []
    notes: list[str] = []
    for run in runs:
        for task, result in run.tasks.items():
            path = flags_path(run.path, task)
            if not path.is_file():
                continue
            flags = read_flags(path, check)
            name = metric or primary_metric(result)
            m = metric_of(result, name)
            status = result.get("status")
            if m is None or status in ("invalid", "failed"):
                rows.append(SplitRow(run.label, task, str(name), check, 0, 0, 0, 0, None, None, None, None, None, None,
                                     invalid=status if status in ("invalid", "failed") else "no such metric"))
                continue
            clean, dirty = [], []
            unchecked = unflagged = 0
            for rec in run.samples_of(task):
                md = rec.metadata_map
                if not rec.is_scored or md.get("rotation"):
                    continue
                flag = flags.get(str(md.get("circular_of") or rec.sample_id), "absent")
                if flag == "absent":
                    unflagged += 1
                elif flag is None:
                    unchecked += 1
                else:
                    (dirty if flag else clean).append(ScoredItem(gold=rec.gold, pred=rec.pred, values=rec.value_map,
                                                                 metadata=md))
            c_val, c_ci, c_stats = _side(clean, m, n_boot, seed)
            d_val, d_ci, d_stats = _side(dirty, m, n_boot, seed + 1)
            diff = None if c_val is None or d_val is None else d_val - c_val
            diff_ci = None
            if c_stats is not None and d_stats is not None:
                diff_ci = [_num(x) for x in percentile_interval(d_stats - c_stats)]
            rows.append(SplitRow(run.label, task, name, check, len(clean), len(dirty), unchecked, unflagged, c_val, c_ci,
                                 d_val, d_ci, diff, diff_ci))
            if unflagged:
                notes.append(f"{run.label} {task}: {unflagged} scored item(s) not in {path} (flags of another split or "
                             "data?): left out")
    if not rows:
        notes.append(f"no run has a flags file ({FLAGS_DIR}/TASK.jsonl in its folder): write one with glotbench analyze "
                     "contamination TASK --corpus FILE --run RUN")
    return rows, notes


def to_dicts(rows: list[SplitRow]) -> list[dict]:
    return [asdict(r) for r in rows]
