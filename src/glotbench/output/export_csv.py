"""``glotbench export RUN --format csv``: one row per sample (task, id, gold, pred, per-item values, error)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from glotbench.output.csv_safe import cell
from glotbench.output.run_records import iter_run_samples, read_results

FIXED = ("task", "id", "idx", "status", "gold", "pred")


def _cell(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, (dict, list, tuple)):
        return cell(json.dumps(v, ensure_ascii=False))
    return cell(v)  # no formulas: a model's answer "=HYPERLINK(...)" stays text


def write_csv(run_dir: Path, out: Path, journal: Any = None) -> int:
    """Write the run's samples as CSV (UTF-8); value columns are the union of per-item value names."""
    results = read_results(run_dir)
    records = list(iter_run_samples(run_dir, results, journal))
    value_cols = sorted({k for r in records for k in r.value_map})
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow([*FIXED, *value_cols, "error"])
        for r in records:
            vals = r.value_map
            w.writerow([_cell(r.task), _cell(r.sample_id), _cell(r.idx), _cell(r.status),
                        _cell(r.gold), _cell(r.pred), *(_cell(vals.get(c)) for c in value_cols),
                        _cell(r.error)])
    tmp.replace(out)
    return len(records)
