"""The OpenHuEval Task classes on real items: prompts, requests, scoring through the task,
metric aggregation, judge hooks, missing-data handling and the Table 5 layout."""

import json
import shutil
from pathlib import Path

import pytest

from glotbench.sample_record import SampleRecord

from glotbench.engine.aggregate import summarise_task
from glotbench.engine.config import RunConfig
from glotbench.engine.plan import drop_tasks_without_data
from glotbench.errors import DataError, TaskSpecError
from glotbench.models.base import GenResult
from glotbench.benchmarks.openhueval import table5
from glotbench.paths import resolve_data_file
from glotbench.tasks.registry import resolve
from glotbench.tasks.request_settings import RequestSettings

FIXTURES = Path(__file__).parent / "fixtures"
EN, HU = RequestSettings(prompt_lang="en"), RequestSettings(prompt_lang="hu")


def need(rel: str) -> None:
    if not resolve_data_file(rel).is_file():
        pytest.skip(f"OpenHuEval data not found ({rel} under the data root)")


def task(name: str):
    return resolve([name])[0]


def out(text: str, reasoning: str | None = None) -> GenResult:
    return GenResult(text=text, reasoning=reasoning)


def record(sample, scored) -> SampleRecord:
    """What the runner writes to the journal for a scored item, read back as the typed record."""
    return SampleRecord.from_json({"status": "scored", "gold": sample.target, "pred": scored.pred,
                                   "values": scored.values, "metadata": sample.metadata, "detail": scored.detail})


def summary(t, records):
    return summarise_task(records, t.metric_names("generate"), t.spec.slice_by, len(records), n_boot=200)


# ---------------------------------------------------------------- HuMatchingFIB

@pytest.fixture(scope="module")
def mfib():
    need("openhueval/HuMatchingFIB.jsonl")
    t = task("openhueval.hu_matchingfib")
    return t, t.samples()


def test_matchingfib_samples_and_prompts(mfib):
    t, samples = mfib
    assert len(samples) == 278 and t.spec.suites == ["openhueval"]
    s = samples[0]
    assert s.id == "7d445a42-a5a4-455a-a9bd-05724974ba94" and s.metadata == {"hu_specific_dim": "history"}
    [chat] = t.requests(s, mode="generate", chat=True, settings=EN)
    text = chat.messages[-1]["content"]
    assert "#0#" in s.vars["record"]["question"] and s.vars["record"]["question"] in text and "'A.isteni'" in text
    [plain] = t.requests(s, mode="generate", chat=False, settings=HU)
    assert plain.prompt != text and s.vars["record"]["question"] in plain.prompt  # the Hungarian variant
    assert chat.max_tokens == 8192  # the paper's output length for reasoning models (§3.1)
    assert t.requests(s, mode="generate", chat=True, settings=RequestSettings(max_tokens=7))[0].max_tokens == 7
    with pytest.raises(TaskSpecError, match="prompt language 'de'"):
        t.requests(s, mode="generate", chat=True, settings=RequestSettings(prompt_lang="de"))


def test_matchingfib_scoring_through_the_task(mfib):
    t, samples = mfib
    s = samples[0]
    gold = s.target  # ["#0#A", "#1#F", ... 9 blanks]
    full = t.score(s, [out(json.dumps({"answer": gold}))], mode="generate")
    assert full.values["question_correct"] == 1.0 and full.values["blank_correct"] == 9.0
    assert t.thinking_outcome(record(s, full)) == "CORRECT"
    half = gold[:5] + ["#5#A", "#6#A", "#7#A", "#8#A"]
    think = "<think>Az első üres hely: {\"answer\": [\"#0#Z\"]} talán</think>" + json.dumps({"answer": half})
    part = t.score(s, [out(think)], mode="generate")
    assert part.values["blank_correct"] == 5.0 and part.values["question_correct"] == 0.0
    assert t.thinking_outcome(record(s, part)) == "INCORRECT"
    none = t.score(s, [out("Nem tudom kitölteni.")], mode="generate")
    assert none.pred is None and none.values["blank_correct"] == 0.0 and none.values["blank_total"] == 9.0
    assert t.thinking_outcome(record(s, none)) == "NOT_ATTEMPTED"
    # Blank accuracy pools blanks over questions; the unparseable item counts its 9 blanks as wrong.
    s2 = samples[1]
    right2 = t.score(s2, [out(json.dumps({"answer": s2.target}))], mode="generate")
    recs = [record(s, full), record(s, part), record(s, none), record(s2, right2)]
    summ = summary(t, recs)
    n2 = len(s2.target)
    assert summ["metrics"]["blank_accuracy"]["value"] == pytest.approx(round((9 + 5 + 0 + n2) / (27 + n2), 6))
    assert summ["metrics"]["question_accuracy"]["value"] == 0.5
    assert summ["n_unparseable"] == 1
    lo, hi = summ["metrics"]["blank_accuracy"]["ci95"]
    assert lo <= summ["metrics"]["blank_accuracy"]["value"] <= hi
    assert set(summ["slices"]["hu_specific_dim"]) == {"history"}


def test_reference_regex_option_changes_extraction(mfib):
    t, samples = mfib
    s = samples[0]
    text = 'Megoldás {lásd lent}: ' + json.dumps({"answer": s.target})
    # Default: the reference reader (\{.*?\} stops at the first "}"); the repairing reader beside it.
    ref = t.score(s, [out(text)], mode="generate")
    assert ref.pred is None and ref.values["question_correct"] == 0.0 and ref.values["question_correct_repaired"] == 1.0
    lenient = task("openhueval.hu_matchingfib")
    lenient.spec = lenient.spec.model_copy(update={"options": {**lenient.spec.options, "reference_regex": False}})
    assert lenient.score(s, [out(text)], mode="generate").values["question_correct"] == 1.0


# ---------------------------------------------------------------- HuStandardFIB

def test_standardfib_fuzzy_scoring_through_the_task():
    need("openhueval/HuStandardFIB.jsonl")
    t = task("openhueval.hu_standardfib")
    samples = t.samples()
    assert len(samples) == 93
    s = next(x for x in samples if "#3#menlevéllel;menlevél" in x.target)
    [req] = t.requests(s, mode="generate", chat=True, settings=EN)
    assert s.vars["record"]["instruction"] in req.messages[0]["content"]
    hu = t.requests(s, mode="generate", chat=True, settings=HU)[0].messages[0]["content"]
    assert "Egészítsd ki" in hu or "kérdések" in hu
    # A near miss ("Prágai") passes the fuzzy threshold; a different word does not.
    pred = ["#0#Prágai", "#1#cseh", "#2#bort", "#3#menlevéllel;menlevél", "#4#konstanzi", "#5#harckocsi"]
    sc = t.score(s, [out(json.dumps({"answers": pred}, ensure_ascii=False))], mode="generate")
    assert sc.detail["blanks"] == [True, True, True, True, True, False]
    assert sc.values["question_correct"] == 0.0 and sc.values["variant_hits"] == 6.0
    summ = summary(t, [record(s, sc)])
    assert summ["metrics"]["blank_accuracy"]["value"] == pytest.approx(5 / 6, abs=1e-6)
    assert summ["metrics"]["blank_accuracy_reference"]["value"] == pytest.approx(1.0, abs=1e-6)  # 2 variants of blank 3 both count


# ---------------------------------------------------------------- HuProverbRea

@pytest.fixture(scope="module")
def proverb():
    need("openhueval/HuProverbRea.jsonl")
    return task("openhueval.hu_proverbrea_2cq"), task("openhueval.hu_proverbrea_oe")


def test_2cq_asks_both_orders_and_needs_both(proverb):
    t, _ = proverb
    samples = t.samples(limit=5)
    s = samples[0]
    rec = s.vars["record"]
    cor, wrong = rec["options"][rec["answer"]], rec["options"][1 - rec["answer"]]
    r1, r2 = t.requests(s, mode="generate", chat=True, settings=EN)
    assert f"Option 1: {cor}\nOption 2: {wrong}" in r1.messages[0]["content"]
    assert f"Option 1: {wrong}\nOption 2: {cor}" in r2.messages[0]["content"]
    assert not t.needs_judge
    right = t.score(s, [out("1"), out("<think>Option 1 or 2? The second.</think>2")], mode="generate")
    assert right.values == {"correct": 1.0, "fail_parse": 0.0} and t.thinking_outcome(record(s, right)) == "CORRECT"
    biased = t.score(s, [out("1"), out("1")], mode="generate")  # always the first option: wrong
    assert biased.values["correct"] == 0.0 and biased.pred is not None
    assert t.thinking_outcome(record(s, biased)) == "INCORRECT"
    vague = t.score(s, [out("1"), out("Either 1 or 2.")], mode="generate")
    assert vague.pred is None and vague.values["fail_parse"] == 1.0
    assert t.thinking_outcome(record(s, vague)) == "NOT_ATTEMPTED"
    summ = summary(t, [record(s, right), record(s, biased), record(s, vague)])
    assert summ["metrics"]["accuracy_2cq"]["value"] == pytest.approx(1 / 3, abs=1e-6)
    assert summ["metrics"]["fail_parse_rate"]["value"] == pytest.approx(1 / 3, abs=1e-6)
    assert summ["slices"]["hu_specific_dim"]["language"]["n"] == 3


def test_oe_judge_hooks(proverb):
    _, t = proverb
    s = t.samples(limit=1)[0]
    assert t.needs_judge
    [req] = t.requests(s, mode="generate", chat=True, settings=HU)
    assert "Magyar kifejezés" in req.messages[0]["content"]
    outputs = [out("<think>Let me think in English.</think>Azt akarja mondani, hogy vállalja a következményeket.")]
    [jr] = t.judge_requests(s, outputs)
    system, user = jr.messages
    assert system["role"] == "system" and "YES" in system["content"]
    assert s.vars["record"]["options"][s.vars["record"]["answer"]] in user["content"]
    assert "vállalja a következményeket" in user["content"] and "Let me think" not in user["content"]
    assert jr.max_tokens == 8192 and jr.temperature == 0.1  # the reference judge config
    verdicts = [t.parse_judgment(s, 0, "YES")]
    sc = t.score_judged(s, outputs, verdicts)
    assert sc.pred == "correct" and sc.values["correct"] == 1.0
    unclear = t.score_judged(s, outputs, [t.parse_judgment(s, 0, "Not sure, maybe yes")])
    assert unclear.pred is None and unclear.values["unclear"] == 1.0 and t.thinking_outcome(record(s, unclear)) is None
    no = t.score_judged(s, outputs, [t.parse_judgment(s, 0, "NO")])
    summ = summary(t, [record(s, sc), record(s, unclear), record(s, no)])
    assert summ["metrics"]["accuracy_oe"]["value"] == pytest.approx(1 / 3, abs=1e-6)


# ---------------------------------------------------------------- HuWildBench (fixture, data root override)

@pytest.fixture()
def wb_root(tmp_path, monkeypatch):
    root = tmp_path / "data"
    (root / "openhueval").mkdir(parents=True)
    shutil.copy(FIXTURES / "hu_wildbench_sample.jsonl", root / "openhueval" / "HuWildBench.jsonl")
    monkeypatch.setenv("GLOTBENCH_DATA", str(root))
    need("openhueval/prompts/HuWildBench_judge_prompts.json")  # prompts come from the real data root
    return root


def test_wildbench_through_the_task(wb_root):
    t = task("openhueval.hu_wildbench")
    samples = t.samples()
    assert len(samples) == 5 and samples[0].id == "hwb-fixture-001"
    multi = next(s for s in samples if len(s.vars["record"]["turn"]) == 3)
    [chat] = t.requests(multi, mode="generate", chat=True, settings=EN)
    assert [m["role"] for m in chat.messages] == ["user", "assistant", "user"]
    [plain] = t.requests(multi, mode="generate", chat=False, settings=EN)
    assert multi.vars["record"]["turn"][1]["content"] in plain.prompt
    answer = out("<think>hmm</think>Érdemes megkóstolni a gulyáslevest és a lángost.")
    [jr] = t.judge_requests(multi, [answer])
    prompt = jr.messages[0]["content"]
    assert "- " + multi.vars["record"]["checklist"][0] in prompt and "USER: " in prompt
    assert "gulyáslevest" in prompt and "<think>" not in prompt
    v = t.parse_judgment(multi, 0, '```json\n{"strengths": "jó", "weaknesses": "rövid", "score": "7"}\n```')
    sc = t.score_judged(multi, [answer], [v])
    assert sc.pred == 7.0 and sc.values["wb_score"] == 70.0 and sc.detail["strengths"] == "jó"
    bad = t.score_judged(samples[0], [answer], [t.parse_judgment(samples[0], 0, "score: great")])
    assert bad.pred is None and bad.values["wb_score"] is None
    recs = [record(multi, sc), record(samples[0], bad)]
    summ = summary(t, recs)
    assert summ["metrics"]["wb_score"]["value"] == 70.0 and summ["n_unparseable"] == 1
    assert set(summ["slices"]["task_group"]) == {multi.metadata["task_group"], samples[0].metadata["task_group"]}
    extra = t.extra_summary([r for r in recs], None)
    assert all(g["n_items"] >= 1 for g in extra["by_task_group"].values())


def test_missing_data_is_a_clear_error_or_skipped_in_a_suite():
    need("openhueval/HuMatchingFIB.jsonl")
    if resolve_data_file("openhueval/HuWildBench.jsonl").is_file():
        pytest.skip("this data root has HuWildBench.jsonl")
    wb = task("openhueval.hu_wildbench")
    with pytest.raises(DataError, match=r"openhueval.hu_wildbench: data file openhueval/HuWildBench.jsonl not found"):
        wb.samples()
    tasks = resolve(["openhueval"])
    keep, skipped = drop_tasks_without_data(tasks, RunConfig(tasks=["openhueval"]))
    assert "openhueval.hu_wildbench" in skipped and "openhueval.hu_matchingfib" in [t.name for t in keep]
    assert "HuWildBench.jsonl not found" in skipped["openhueval.hu_wildbench"]
    with pytest.raises(DataError, match="HuWildBench.jsonl not found"):  # named on its own: fail fast
        drop_tasks_without_data(tasks, RunConfig(tasks=["openhueval", "openhueval.hu_wildbench"]))


# ---------------------------------------------------------------- Table 5 layout

def test_table5_layout_marks_missing_and_slices():
    def entry(metrics, slices=None):
        return {"metrics": {k: {"value": v, "ci95": [v - 0.1, v + 0.1]} for k, v in metrics.items()},
                "slices": {"hu_specific_dim": {d: {"n": 3, "metrics": {k: {"value": v, "ci95": [None, None]}
                                                                       for k, v in m.items()}}
                                               for d, m in (slices or {}).items()}}}

    results = {
        "model": {"model_id": "m"},
        "tasks": {
            "openhueval.hu_matchingfib": entry({"blank_accuracy": 0.5, "question_accuracy": 0.25},
                                               {"history": {"blank_accuracy": 0.4, "question_accuracy": 0.0}}),
            "openhueval.hu_proverbrea_2cq": entry({"accuracy_2cq": 0.9}, {"language": {"accuracy_2cq": 0.9}}),
        },
        "skipped_tasks": {"openhueval.hu_wildbench": "data file not found"},
    }
    assert table5.applies(results)
    labels, rows = table5.table5_rows(results)
    cols = [f"{c.group} {c.label}" for c in table5.COLUMNS]
    assert labels == ["m", "  hu_specific_dim=history", "  hu_specific_dim=language"]
    overall = dict(zip(cols, rows[0]))
    assert overall["HuWildBench WB-Score"] == "data missing"
    assert overall["HuMatchingFIB B acc."] == "50.00\n[40.0, 60.0]"
    assert overall["HuProverbRea Acc. (OE)"] == "-"  # not in the run
    assert dict(zip(cols, rows[1]))["HuMatchingFIB B acc."] == "40.00"
    assert dict(zip(cols, rows[2]))["HuMatchingFIB B acc."] == "-"
    assert not table5.applies({"tasks": {"mm_eval.syntax": {}}, "model": {}})
