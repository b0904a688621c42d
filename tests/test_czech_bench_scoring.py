"""Czech-Bench scoring: glotbench's czech_bench.klokanek and the other parse rules against a plain
re-statement of the reference's evaluator loops on the same outputs.

``fixtures/czech_bench_klokanek_outputs.jsonl`` holds the outputs of a real run (embedded
SmolLM2-135M, ``glotbench run --tasks czech_bench.klokanek --limit 20``, chat mode); hand-written edge
cases are added to them (a bare letter, ``"C)"``, an empty answer, ``"AB"``, a sentence)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from glotbench.engine.aggregate import summarise_task
from glotbench.models.base import GenResult

FIX = Path(__file__).resolve().parent / "fixtures" / "czech_bench_klokanek_outputs.jsonl"


def _records(task, pairs):
    """Score (sample, output text) pairs with the task and shape them like journal records."""
    out = []
    for sample, text in pairs:
        sc = task.score(sample, [GenResult(text=text)], mode="generate")
        out.append({"status": "scored", "gold": sample.target, "pred": sc.pred, "values": sc.values, "metadata": sample.metadata})
    return out


def _ref_first_token(result: str) -> str:
    res_split = result.split()
    return result.split()[0].strip().strip(")") if res_split else result


def reference_klokanek(outputs: list[str], golds: list[str], cats: list[int]) -> dict:
    """The reference's Klokánek loop restated: correct if equal; else 'not in "ABCDE"' is a parse
    failure (left out); else a wrong answer; accuracy = correct / counted."""
    correct, total, correct_all, fails, count = {}, {}, 0, 0, 0
    for result, gt, cat in zip(outputs, golds, cats):
        res = _ref_first_token(result)
        if res == gt:
            correct[cat] = correct.get(cat, 0) + 1
            correct_all += 1
        elif res not in "ABCDE":
            fails += 1
            continue
        total[cat] = total.get(cat, 0) + 1
        count += 1
    return {"accuracy": correct_all / count if count else None, "fails": fails, "count": count,
            "per_category": {c: correct.get(c, 0) / n for c, n in total.items()}}


@pytest.fixture(scope="module")
def klokanek():
    from glotbench.paths import resolve_data_file
    from glotbench.tasks.registry import resolve

    if not resolve_data_file("czech_klokanek/dataset.json").is_file():
        pytest.skip("Klokánek data not in the shared data")
    task = resolve(["czech_bench.klokanek"])[0]
    return task, {s.id: s for s in task.samples()}


def test_klokanek_recorded_outputs_match_reference_rule(klokanek):
    task, by_id = klokanek
    recorded = [json.loads(x) for x in FIX.read_text(encoding="utf-8").splitlines()]
    pairs = [(by_id[r["id"]], r["output"]) for r in recorded]
    extra_ids = [s for s in by_id.values() if s.id not in {r["id"] for r in recorded}][:8]
    edge = [extra_ids[0].target, "C)", "", "AB", "Odpověď je C.", f" {extra_ids[5].target}\n", "E", "ab"]
    pairs += list(zip(extra_ids, edge))
    recs = _records(task, pairs)
    summary = summarise_task(recs, task.metric_names("generate"), task.spec.slice_by, len(recs), n_boot=20)
    ref = reference_klokanek([t for _, t in pairs], [s.target for s, _ in pairs], [s.metadata["category"] for s, _ in pairs])
    assert ref["count"] > 5 and ref["fails"] > 5  # both branches exercised
    assert summary["metrics"]["cb_accuracy"]["value"] == pytest.approx(ref["accuracy"], abs=1e-6)
    assert round(summary["metrics"]["cb_parsed"]["value"] * len(recs)) == ref["count"]
    for cat, acc in ref["per_category"].items():
        assert summary["slices"]["category"][str(cat)]["metrics"]["cb_accuracy"]["value"] == pytest.approx(acc, abs=1e-6)
    # glotbench's number beside it: every item in the denominator, its own (lenient) extractor
    assert summary["metrics"]["accuracy"]["value"] == pytest.approx(sum(r["values"]["correct"] for r in recs) / len(recs), abs=1e-6)


def test_klokanek_recorded_run_only(klokanek):
    """The 20 recorded outputs alone: the reference counts all of them unparseable or not."""
    task, by_id = klokanek
    recorded = [json.loads(x) for x in FIX.read_text(encoding="utf-8").splitlines()]
    recs = _records(task, [(by_id[r["id"]], r["output"]) for r in recorded])
    ref = reference_klokanek([r["output"] for r in recorded], [by_id[r["id"]].target for r in recorded], [0] * len(recorded))
    parsed = sum(r["values"]["cb_parsed"] for r in recs)
    assert parsed == ref["count"]
    if ref["count"]:
        assert sum(r["values"].get("cb_correct", 0) for r in recs) / parsed == pytest.approx(ref["accuracy"])


# ----------------------------------------------------------------------------- other rules


def reference_int(result: str, gt: int):
    try:
        return int(_ref_first_token(result)) == gt
    except ValueError:
        return None


def reference_arc(result: str, gt: str):
    res = _ref_first_token(result)
    if res == gt:
        return True
    if len(res) > 1 or res not in "ABCD":
        return None
    return False


def reference_gsm8k(result: str, gt: int):
    try:
        prediction = int(re.search(r'#### ([\d,-]+)', result).group(1).replace(",", ""))
    except Exception:  # noqa: BLE001 - the reference's bare except
        return None
    return prediction == gt, abs(gt - prediction), (abs(abs(gt - prediction) / gt) if gt != 0 else None)


OUTPUTS = ["2", "2)", " 1 because", "", "x", "-1", "+1", "12", "Odpověď: 2", "0\n", "D", "E", "A)", "AB", "1"]


@pytest.mark.parametrize("text", OUTPUTS)
def test_int_and_letter_rules(text):
    from glotbench.benchmarks.czech_bench.metrics import reference_values

    for gold in (2, -1, 0):
        v = reference_values("int", text, gold)
        ref = reference_int(text, gold)
        assert (v["cb_parsed"] == 1.0) == (ref is not None)
        if ref is not None:
            assert v["cb_correct"] == float(ref)
    for gold in ("A", "1", "E"):
        v = reference_values("letter_abcd", text, gold)
        ref = reference_arc(text, gold)
        assert (v["cb_parsed"] == 1.0) == (ref is not None)
        if ref is not None:
            assert v["cb_correct"] == float(ref)


@pytest.mark.parametrize("text", ["#### 72", "so 5 #### 1,234", "#### -3", "#### 1-2", "no answer", "#### 0", "a #### 7 b #### 8", "####72"])
def test_gsm8k_rule(text):
    from glotbench.benchmarks.czech_bench.metrics import reference_values

    for gold in (72, 0, 1234, -3):
        v = reference_values("gsm8k", text, gold)
        ref = reference_gsm8k(text, gold)
        assert (v["cb_parsed"] == 1.0) == (ref is not None)
        if ref is not None:
            assert v["cb_correct"] == float(ref[0]) and v["cb_abs_error"] == ref[1]
            assert v.get("cb_rel_error") == ref[2]


def test_macro_f1_matches_sklearn_over_parsed_only():
    from sklearn.metrics import f1_score

    from glotbench.scoring.metrics import ScoredItem, get_metric
    import glotbench.benchmarks.czech_bench.metrics  # noqa: F401  (registers the cb_* metrics)

    from glotbench.benchmarks.czech_bench.metrics import reference_values

    golds = [0, 1, 2, 2, 1, 0, 2]
    outs = ["0", "2", "2", "x", "1", "7", ""]
    items = [ScoredItem(gold=str(g), pred=None, values=reference_values("int", o, g)) for g, o in zip(golds, outs)]
    parsed = [(g, int(o)) for g, o in zip(golds, outs) if reference_int(o, g) is not None]
    want = f1_score([g for g, _ in parsed], [p for _, p in parsed], average="macro")
    assert get_metric("cb_macro_f1")(items) == pytest.approx(want)
    assert get_metric("cb_accuracy")(items) == pytest.approx(sum(g == p for g, p in parsed) / len(parsed))


# ----------------------------------------------------------------------------- MMLU aggregates


def test_mmlu_topic_category_overall(tmp_path, monkeypatch):
    """Per topic: accuracy over parsed answers; per category: mean of its topics; overall: mean of
    all topics (not of items), as the reference reports them."""
    pytest.importorskip("datasets")
    from czech_bench_ref import hub_root

    monkeypatch.setenv("GLOTBENCH_DATA", str(hub_root(tmp_path)))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    from glotbench.tasks.registry import resolve

    task = resolve(["czech_bench.mmlu"])[0]
    samples = task.samples()
    outs = ["1", "2", "x", "4", "1)", "3", "2"][: len(samples)]
    recs = _records(task, list(zip(samples, outs)))
    summary = summarise_task(recs, task.metric_names("generate"), task.spec.slice_by, len(recs), n_boot=10)
    topics: dict[str, list[bool]] = {}
    cat_of = {}
    for s, o in zip(samples, outs):
        ok = reference_int(o, int(s.target))
        cat_of[s.vars["subject"]] = s.vars["category"]
        if ok is not None:
            topics.setdefault(s.vars["subject"], []).append(ok)
    acc = {t: sum(v) / len(v) for t, v in topics.items()}
    for t, a in acc.items():
        assert summary["slices"]["subject"][t]["metrics"]["cb_topic_accuracy"]["value"] == pytest.approx(a)
    for cat in set(cat_of.values()):
        want = [a for t, a in acc.items() if cat_of[t] == cat]
        if not want:  # every answer of the category unparseable: no score, as in the reference (nan)
            assert summary["slices"]["category"][cat]["metrics"]["cb_topic_accuracy"]["value"] is None
            continue
        assert summary["slices"]["category"][cat]["metrics"]["cb_topic_accuracy"]["value"] == pytest.approx(sum(want) / len(want))
    assert summary["metrics"]["cb_topic_accuracy"]["value"] == pytest.approx(sum(acc.values()) / len(acc))
    # the mean over topics differs from the mean over items here, so the test can tell them apart
    items = [x for v in topics.values() for x in v]
    assert sum(acc.values()) / len(acc) != pytest.approx(sum(items) / len(items))
