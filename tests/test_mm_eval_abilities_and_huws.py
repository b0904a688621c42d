"""MM-Eval's language vs cognitive ability table (§3.1) and the hulu.ws task on the real HuWS data."""

import pytest
from rich.console import Console

from glotbench.analysis import mm_eval_abilities as mm
from glotbench.paths import resolve_data_file
from glotbench.tasks.registry import resolve
from glotbench.models.base import GenResult
from glotbench.tasks.task import RunSettings


def entry(acc, n):
    return {"metrics": {"accuracy": {"value": acc}}, "n_scored": n}


def test_language_vs_cognitive_aggregate():
    results = {"tasks": {"mm_eval.syntax": entry(0.9, 569), "mm_eval.semantics": entry(0.5, 677),
                         "mm_eval.knowledge": entry(0.8, 344), "mm_eval.reasoning": entry(0.2, 250)}}
    assert mm.applies(results) and not mm.applies({"tasks": {"hulu.ws": entry(0.5, 1)}})
    ab = mm.abilities(results)
    assert ab["language"]["mean_of_levels"] == pytest.approx(0.7)
    assert ab["language"]["pooled_items"] == pytest.approx((0.9 * 569 + 0.5 * 677) / (569 + 677))
    assert ab["cognitive"]["mean_of_levels"] == pytest.approx(0.5) and ab["cognitive"]["n"] == 594
    con = Console(width=160, record=True)
    con.print(mm.abilities_table(results))
    text = con.export_text()
    assert "language (syntax + semantics)" in text and "70.00" in text and "cognitive (knowledge + reasoning)" in text
    partial = mm.abilities({"tasks": {"mm_eval.syntax": entry(0.9, 10)}})
    assert partial["language"]["mean_of_levels"] is None and partial["language"]["levels"]["mm_eval.syntax"] == 0.9


def test_suite_table_prints_the_abilities():
    from glotbench.output.table import print_results

    results = {"model": {"model_id": "m"}, "fingerprint": "x", "tasks": {}}
    for t, (acc, n) in {"mm_eval.syntax": (0.9, 5), "mm_eval.semantics": (0.5, 5)}.items():
        results["tasks"][t] = {**entry(acc, n), "status": "ok", "n_errors": 0, "n_items": n, "n_unparseable": 0,
                               "unparseable_rate": 0.0, "flag": "", "language": "mn", "version": "1.0", "prompt_hash": "p",
                               "metrics": {"accuracy": {"value": acc, "ci95": [acc, acc]}}}
    con = Console(width=200, record=True)
    print_results(results, con)
    assert "Dual Capability Framework" in con.export_text()


def test_huws_task_on_the_real_data():
    if not resolve_data_file("hulu/HuWS/huws.json").is_file():
        pytest.skip("HuLU data not found (hulu/HuWS/huws.json under the data root)")
    [t] = resolve(["hulu.ws"])
    samples = t.samples()
    assert len(samples) == 244
    s = samples[0]
    assert s.id == "1" and s.target == "1" and s.choices == ["a városi tanácstagok", "a tüntetők"]
    assert samples[1].target == "2"  # "Kik támogatták az erőszakot?" -> a tüntetők
    assert sum(x.target == "1" for x in samples) == 122
    [req] = t.requests(s, mode="generate", chat=True, settings=RunSettings())
    text = req.messages[-1]["content"]
    assert "kerülték az erőszakot" in text and "1. a városi tanácstagok" in text and "2. a tüntetők" in text
    assert t.score(s, [GenResult(text="1")], mode="generate").values["correct"] == 1.0
    assert t.score(samples[1], [GenResult(text="Válasz: 1")], mode="generate").values["correct"] == 0.0
