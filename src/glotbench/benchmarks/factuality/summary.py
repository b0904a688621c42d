"""Task-level analyses of a judged SimpleQA-style run, for results.json: the paper's table
(CO, NA, IN, CGA, F with bootstrap intervals, overall and per category, judge errors counted),
calibration from stated confidence (ECE, Brier, reliability table and diagram) and Best-of-N
accuracy@k (first-k rule, with curve)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glotbench.models.base import sha256_hex
from glotbench.sample_record import SampleRecord
from glotbench.output.strict_json import clean
from glotbench.scoring.best_of_n import accuracy_at_k
from glotbench.scoring.calibration import calibration_report
from glotbench.scoring.grades import JUDGE_ERROR, by_category, factuality_scores

if TYPE_CHECKING:
    from glotbench.benchmarks.factuality.task import SimpleQATask



def _can_plot(out: dict) -> bool:
    """Whether matplotlib (the ``plots`` extra) is here; without it the summary says so once, no PNG."""
    from glotbench.extras import available

    if available("plots"):
        return True
    out["plots"] = "not drawn: needs pip install 'glotbench[plots]'"
    return False

def file_tag(text: str) -> str:
    """A short, file-name-safe tag for a task or judge id (readable part + hash)."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", text.split("@")[0]).strip("_")[:40]
    return f"{readable}-{sha256_hex(text)[:6]}"


def item_grades(record: SampleRecord) -> list[str]:
    """All answer grades of a scored record (JUDGE_ERROR where the judge's reply was unreadable)."""
    grades = (record.detail or {}).get("grades")
    if grades:
        return list(grades)
    return [record.pred or JUDGE_ERROR.value]


def factuality_table(records: list[SampleRecord], slice_by: list[str], *, n_resamples: int = 1000, seed: int = 0) -> dict:
    firsts = [item_grades(r)[0] for r in records]
    out: dict[str, Any] = {"overall": factuality_scores(firsts, ci=True, n_resamples=n_resamples, seed=seed), "by": {}}
    for field in slice_by:
        cats = [r.metadata_map.get(field) for r in records]
        out["by"][field] = by_category(firsts, cats, ci=True, n_resamples=n_resamples, seed=seed)
    return out


def factuality_summary(task: SimpleQATask, records: list[SampleRecord], out_dir: Path | None, *,
                       n_boot: int = 1000, seed: int = 0) -> dict:
    """The task's entry beyond its metric table; the table's intervals use the run's ``n_boot`` and
    ``seed``, so without judge errors each equals the metric table's interval of the same number
    (and reuses its draws; docs/factuality.md says why judge errors make them differ)."""
    if not records:
        return {}
    judges = sorted({r.judge for r in records if r.judge})
    judge = judges[0] if len(judges) == 1 else (judges or None)
    tag = f"{file_tag(task.name)}.{file_tag(judge)}" if isinstance(judge, str) else file_tag(task.name)
    fact = factuality_table(records, list(task.spec.slice_by), n_resamples=n_boot, seed=seed)
    fact.update(grader=task.options.grader, judge=judge)
    try:
        fact["grader_version"] = task.grader.version
    except Exception:
        fact["grader_version"] = None
    out: dict[str, Any] = {"factuality": fact}

    if task.options.confidence:
        confs = [((r.detail or {}).get("confidence") or [None])[0] for r in records]
        firsts = [item_grades(r)[0] for r in records]
        cal = calibration_report(confs, firsts, n_bins=task.options.calibration_bins)
        reasons = Counter(((r.detail or {}).get("confidence_error") or [None])[0] for r in records)
        reasons.pop(None, None)
        cal["unparseable_reasons"] = dict(reasons)
        if out_dir is not None and cal["n_used"] and _can_plot(out):
            from glotbench.plots.reliability import save_reliability_diagram

            label = "stated confidence"
            path = save_reliability_diagram({label: cal["table"]}, Path(out_dir) / f"{tag}.reliability.png",
                                            title=f"{task.name}: stated confidence vs accuracy", ece={label: cal["ece"]})
            cal["plot"] = path.name
        out["calibration"] = cal

    per_item = [item_grades(r) for r in records]
    n = max(len(g) for g in per_item)
    if n > 1:
        full = [g for g in per_item if len(g) == n]
        bon: dict[str, Any] = {"n": n, "n_items": len(full), "n_items_short": len(per_item) - len(full),
                               "method": "first_k", "accuracy_at_k": accuracy_at_k(full, "first_k"),
                               "accuracy_at_k_unbiased": accuracy_at_k(full, "unbiased"),
                               "judge_error_answers": sum(g.count(JUDGE_ERROR.value) for g in full)}
        if out_dir is not None and full and _can_plot(out):
            from glotbench.plots.curve import save_accuracy_at_k

            path = save_accuracy_at_k({"first k answers": bon["accuracy_at_k"], "unbiased (pass@k)": bon["accuracy_at_k_unbiased"]},
                                      Path(out_dir) / f"{tag}.best_of_n.png", title=f"{task.name}: Best-of-{n} accuracy@k")
            bon["plot"] = path.name
        out["best_of_n"] = bon
    return clean(out)
