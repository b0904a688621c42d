"""compare-judges: models with the same score under a judge share a rank (competition ranking, as
scipy's ``rankdata(method="min")``), in the result and in the printed table."""

from __future__ import annotations

from rich.console import Console
from scipy.stats import rankdata

from glotbench.judges.agreement import compare_judges, render_agreement_table

C, W = "CORRECT", "INCORRECT"


def test_tied_models_share_a_rank():
    table = {
        "j1": {"m1": [C, C, W, W], "m2": [C, W, C, W], "m3": [W, W, W, C]},  # m1 and m2 tie (CO 0.5)
        "j2": {"m1": [C, C, C, W], "m2": [C, W, C, W], "m3": [W, W, W, C]},
    }
    res = compare_judges(table, metric="CO")
    for j in ("j1", "j2"):
        models = res["models"]
        expect = rankdata([-res["scores"][j][m]["CO"] for m in models], method="min")
        assert [res["ranks"][j][m] for m in models] == [int(r) for r in expect]
    assert res["ranks"]["j1"] == {"m1": 1, "m2": 1, "m3": 3}
    assert res["ranks"]["j2"] == {"m1": 1, "m2": 2, "m3": 3}
    console = Console(width=200, record=True)
    console.print(render_agreement_table(res))
    text = console.export_text()
    row = lambda m: next(line for line in text.splitlines() if line.strip("│ ").startswith(m))  # noqa: E731
    assert "50.0 (#1)" in row("m2") and "(#2)" not in row("m1")
    assert "(#3)" in row("m3")
