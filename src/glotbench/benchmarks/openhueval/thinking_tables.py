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
    t = Table(title=f"{task} · Fig. 6 distribution: responses by thought correctness ratio (correct / assessed thoughts)")
    t.add_column("ratio")
    for o in ("INCORRECT", "NOT_ATTEMPTED"):
        t.add_column(o, justify="right")
    dists = [rep[o]["correct_ratio_distribution"] for o in ("INCORRECT", "NOT_ATTEMPTED")]
    for k, b in enumerate(dists[0]):
        label = "0 (no correct thought)" if b["hi"] == 0 else f"({b['lo']:.1f}, {b['hi']:.1f}]"
        t.add_row(label, *[f"{d[k]['n']} ({_pct(d[k]['share'])})" for d in dists])
    tables.append(t)
    fig9 = rep["ALL"]["fig9"]
    if fig9["n_segments"]:
        t = Table(title=f"{task} · Fig. 9: reasoning segments, complexity x correctness (share of all "
                        f"{fig9['n_segments']} tagged segments; within the row in brackets)")
        t.add_column("complexity")
        for c in fig9["correctness"]:
            t.add_column(c or "(none)", justify="right")
        for r in fig9["complexity"]:
            t.add_row(r or "(none)", *[f"{fig9['counts'][r][c]} {_pct(fig9['share'][r][c])} ({_pct(fig9['row_share'][r][c])})"
                                       for c in fig9["correctness"]])
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
