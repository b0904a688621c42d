"""A run's prompt-variant spread (``run --prompt-variants``): per task that ran several prompts, each
variant's score, their mean, min, max, standard deviation and best, with item-resampled intervals
(report/analysis/robustness.py), written into results.json under ``prompt_variants``.

Variants are paired on the items every variant scored; an item that is an error in one variant is
left out of all (counted). A corpus metric (macro-F1, MCC) is recomputed on each resample of the
items (at most 2,000 resamples, as compare --paired). A variant whose score is no score (failed, or over 50% unparseable) gives
the metric no spread: an invalid score never enters an average as a number."""

from __future__ import annotations

import numpy as np

from glotbench.report.analysis.robustness import corpus_variant_spread, variant_spread
from glotbench.report.comparisons import rankable
from glotbench.report.items import item_vector, scored_items
from glotbench.report.runs import RunData, metric_of

SEP = "@"  # tasks/variants.py: <task>@<variant>
DECLARED = "declared"


def variant_groups(task_names: list[str]) -> dict[str, list[str]]:
    """base task -> its run tasks, the declared prompt (the base's own name) first."""
    groups: dict[str, list[str]] = {}
    for name in task_names:
        if SEP in name and name.split(SEP, 1)[0] in task_names:
            groups.setdefault(name.split(SEP, 1)[0], []).append(name)
    return {base: [base, *names] for base, names in groups.items()}


def variant_label(task: str) -> str:
    return task.split(SEP, 1)[1] if SEP in task else DECLARED


def spreads(run: RunData, headlines: dict[str, str] | None = None, n_boot: int = 1000, seed: int = 0) -> dict:
    """results.json's ``prompt_variants``: per base task, its variants, the headline prompt and per
    metric the spread (or why there is none)."""
    out: dict = {}
    for base, names in variant_groups(list(run.tasks)).items():
        labels = [variant_label(n) for n in names]
        by_task = {n: {r.id: r for r in run.samples_of(n)} for n in names}
        ids = [i for i in by_task[base] if all(i in by_task[n] and by_task[n][i].is_scored for n in names)]
        every = set().union(*(set(d) for d in by_task.values()))
        block: dict = {"variants": labels, "tasks": names, "headline": (headlines or {}).get(base, DECLARED),
                       "n_items": len(ids), "n_left_out": len(every) - len(ids), "metrics": {}, "notes": []}
        for m in list(run.tasks[base].get("metrics") or {}):
            mdef = metric_of(run.tasks[base], m)
            bad = [variant_label(n) for n in names if rankable(run.tasks[n], m) is None]
            if bad:
                block["notes"].append(f"{m}: no spread: the score of {', '.join(bad)} is no score (failed, or over "
                                      "50% unparseable)")
                continue
            if not ids:
                block["notes"].append(f"{m}: no spread: no item scored in every variant")
                continue
            cols = [item_vector([by_task[n][i] for i in ids], mdef) for n in names]
            if any(c is None for c in cols):  # a corpus metric: recomputed on each resample of the items
                items = [scored_items([by_task[n][i] for i in ids]) for n in names]
                s = corpus_variant_spread(lambda v, idx, _items=items, _fn=mdef: _fn([_items[v][int(j)] for j in idx]),
                                          len(ids), labels, n=max(min(n_boot, 2000), 1), seed=seed,
                                          higher_is_better=mdef.higher_is_better).to_dict()
                s["headline_score"] = s["scores"][labels.index(block["headline"])] if block["headline"] in labels else None
                block["metrics"][m] = s
                continue
            mat = np.array([[np.nan if v is None else v for v in c] for c in cols], dtype=float).T
            keep = ~np.isnan(mat).any(axis=1)
            if not keep.any():
                block["notes"].append(f"{m}: no spread: no item has a value in every variant")
                continue
            s = variant_spread(mat[keep], labels, n=max(n_boot, 1), seed=seed, higher_is_better=mdef.higher_is_better).to_dict()
            s["headline_score"] = s["scores"][labels.index(block["headline"])] if block["headline"] in labels else None
            s["n_items"] = int(keep.sum())
            block["metrics"][m] = s
        out[base] = block
    return out
