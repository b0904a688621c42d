"""The console tables of ``glotbench analyze thinking --judge`` (OpenHuEval §4 / App. F)."""

from __future__ import annotations

from rich.table import Table

from glotbench.benchmarks.openhueval.thinking_judge import CATEGORIES, DIMENSIONS

ROWS = ("CORRECT", "INCORRECT", "NOT_ATTEMPTED", "ALL")


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def judge_tables(task: str, rep: dict) -> list[Table]:
    tables = []
    t = Table(title=f"{task} · thought correctness (Fig. 6): a thought is correct at judge confidence 2/2")
    for col in ("outcome", "judged", "thoughts assessed", "correct thoughts", "responses w/ a correct thought", "unreadable replies"):
        t.add_column(col, justify="left" if col == "outcome" else "right")
    for o in ROWS:
        r = rep[o]
        t.add_row(o, str(r["n_judged"]), str(r["n_thoughts_assessed"]), _pct(r["correct_thought_share"]),
                  f"{_pct(r['share_with_correct_thought'])} of {r['n_with_assessed_thought']}", str(r["n_unreadable"]))
    tables.append(t)
    t = Table(title=f"{task} · Fig. 6 share: wrong answers holding a correct thought = "
                    f"{_pct(rep['fig6']['incorrect_with_correct_thought'])} (of {rep['fig6']['n_incorrect_assessed']})")
    t.add_column("outcome")
    cats = [c for c in CATEGORIES if any(c in rep[o]["segment_categories"] for o in ROWS)] or list(CATEGORIES[:4])
    for c in (*cats, "mean segments"):
        t.add_column(c, justify="right")
    for o in ROWS:
        r = rep[o]
        n = sum(r["segment_categories"].values())
        t.add_row(o, *[f"{r['segment_categories'].get(c, 0)} ({_pct(r['segment_categories'].get(c, 0) / n if n else None)})" for c in cats],
                  "-" if r["mean_segments"] is None else f"{r['mean_segments']:.2f}")
    t.caption = "segment categories (App. F.2.1)"
    tables.append(t)
    if rep["ALL"]["n_reasoning_tagged"]:
        t = Table(title=f"{task} · Reasoning segments on four dimensions (App. F.2.2) · translation share = "
                        f"{_pct(rep['ALL']['translation_share'])} of {rep['ALL']['n_reasoning_tagged']}")
        t.add_column("dimension")
        t.add_column("class")
        for o in ROWS:
            t.add_column(o, justify="right")
        for d, (name, classes) in DIMENSIONS.items():
            seen = set(classes) | {c for o in ROWS for c in rep[o]["dimensions"][name]}
            for c in [*classes, *sorted(seen - set(classes))]:
                t.add_row(f"{d} {name}", c or "(none)", *[str(rep[o]["dimensions"][name].get(c, 0)) for o in ROWS])
        tables.append(t)
    return tables
