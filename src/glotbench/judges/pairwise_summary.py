"""The summary of a pairwise judging (``OUT/pairwise.json``) and its per-item file
(``OUT/pairwise_items.jsonl``): win/tie/loss per pair with intervals, and the Bradley-Terry ranking."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from glotbench.report.analysis.bradley_terry import DEFAULT_PRIOR_VAR, bradley_terry
from glotbench.report.analysis.pairwise_stats import win_tie_loss
from glotbench.judges.pairwise import PairResult, PairwiseStats
from glotbench.judges.pairwise_runs import RunAnswers
from glotbench.output.results import write_json
from glotbench.output.strict_json import clean

COUNTED = ("win", "tie", "loss")


def summarise(runs: list[RunAnswers], pairs: list[PairResult], stats: PairwiseStats, *, n_boot: int = 1000,
              seed: int = 0, alpha: float = 0.05, prior_var: float = DEFAULT_PRIOR_VAR) -> dict:
    pair_rows = []
    for p in pairs:
        kinds = Counter(o.kind for o in p.items)
        pair_rows.append({
            "a": runs[p.a].label, "b": runs[p.b].label,
            **win_tie_loss(p.outcomes(), n_boot=n_boot, seed=seed, alpha=alpha),
            "judged": len(p.items),
            "consistent": kinds["consistent"], "flips": kinds["flip"], "half_ties": kinds["half_tie"],
            "unreadable": kinds["unreadable"], "failed": kinds["failed"],
            "only_a": p.only_a, "only_b": p.only_b,
            "prompt_languages": dict(Counter(o.prompt_language for o in p.items)),
        })
    ranking = bradley_terry([r.label for r in runs], [(p.a, p.b) for p in pairs],
                            [{(o.task, o.item): o.outcome for o in p.items if o.outcome in COUNTED} for p in pairs],
                            n_boot=n_boot, seed=seed, alpha=alpha, prior_var=prior_var)
    return clean({
        "judge": stats.judge_id,
        "runs": [{"label": r.label, "path": str(r.path), "model_id": r.model_id, "answered": len(r.answers),
                  "unanswered": len(r.unanswered)} for r in runs],
        "pairs": pair_rows,
        "bradley_terry": ranking,
        "english_prompt_for": stats.english_fallback,
        "requests": {"sent": stats.requests_sent, "cached": stats.requests_cached, "failed": stats.failed},
        "bootstrap": {"n_resamples": n_boot, "seed": seed, "alpha": alpha, "unit": "item (task, item id)"},
        "rules": {
            "order": "each item judged twice, answers' positions swapped",
            "outcome": "a winner named in both orders wins; a flip, a consistent tie or a tie in one order is a tie",
            "unreadable": "an unreadable reply in either order leaves the item out (counted as unreadable)",
            "items": "an item counts where both runs answered it; the others are counted as only_a / only_b",
        },
    })


def write_outputs(out_dir: Path, summary: dict, runs: list[RunAnswers], pairs: list[PairResult]) -> None:
    out_dir = Path(out_dir)
    write_json(out_dir / "pairwise.json", summary)
    tmp = out_dir / "pairwise_items.jsonl.tmp"
    with tmp.open("w", encoding="utf-8") as fh:
        for p in pairs:
            for o in p.items:
                fh.write(json.dumps({"a": runs[p.a].label, "b": runs[p.b].label, **o.to_dict()}, ensure_ascii=False) + "\n")
    tmp.replace(out_dir / "pairwise_items.jsonl")
