"""Chinese SimpleQA's analyses as task variants and commands: option order (App. C), CoT (App. A),
few-shot plain-completion prompts for base models (App. H), the retrieval-augmented mode (§4.5),
English SimpleQA in simple-evals' CSV format, answer types and per-item difficulty (App. D, I)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from glotbench.benchmarks.factuality.answer_types import answer_type
from glotbench.prompts.retrieval import BM25Folder, tokenize
from glotbench.tasks.registry import resolve
from glotbench.tasks.request_settings import RequestSettings

DEFS = Path(__file__).resolve().parents[1] / "src" / "glotbench" / "benchmarks" / "factuality" / "tasks"
SIMPLEQA_CSV = Path(__file__).parent / "fixtures" / "simpleqa_sample.csv"  # hand-written, simple-evals' format


def glot(*args, env=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "glotbench", *args], env={**os.environ, "OPENAI_API_KEY": "x", **(env or {})},
                          capture_output=True, text=True, timeout=timeout)


def yaml_copy(tmp_path: Path, name: str, update) -> Path:
    spec = yaml.safe_load((DEFS / f"{name}.yaml").read_text(encoding="utf-8"))
    update(spec)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    return path


# ---------------------------------------------------------------- option order

def test_option_order_variants_share_options_and_move_the_gold(data_root):
    mc, sh = resolve(["chinese_simpleqa.mc", "chinese_simpleqa.mc_shuffled"])
    a, b = mc.samples(limit=30), sh.samples(limit=30)
    types = {s.id: t for s, t in mc._pool}
    answers_by_type: dict[str, set] = {}
    for s, t in mc._pool:
        answers_by_type.setdefault(t, set()).add(str(s.target).strip())
    for x, y in zip(a, b):
        gold = x.vars["gold_text"]
        assert len(x.choices) == 4 == len(set(x.choices)) and gold in x.choices
        assert sorted(x.choices) == sorted(y.choices)  # the same options...
        assert x.choices.index(gold) != y.choices.index(gold)  # ...the gold elsewhere
        assert x.target == "ABCD"[x.choices.index(gold)] and y.target == "ABCD"[y.choices.index(gold)]
        # distractors: other items' answers of the same answer type
        assert all(d in answers_by_type[types[x.id]] for d in x.choices if d != gold)
    assert mc.samples(limit=30)[0].choices == a[0].choices  # seeded
    [req] = mc.requests(a[0], mode="generate", chat=True, settings=RequestSettings())
    assert "A. " in req.messages[-1]["content"] and a[0].vars["question"] in req.messages[-1]["content"]


def test_answer_type_heuristic():
    assert answer_type("伏兔穴所属的经脉是什么？", "足阳明胃经") == "other"
    assert answer_type("哪一年成立？", "1949年") == "date"
    assert answer_type("成立于哪一年？", "1949") == "date"
    assert answer_type("有多少个省？", "23个") == "number"
    assert answer_type("作者是谁？", "曹雪芹") == "person"
    assert answer_type("Who wrote it?", "x", given="Person") == "person"


def test_option_order_command_prints_the_three_accuracies_and_the_drop(data_root, tmp_path, stub_server):
    """The whole pipeline through `glotbench run` and `glotbench analyze option-order`, stub model and judge."""
    canned = tmp_path / "canned.jsonl"
    lines = [{"match": "请只回答正确选项的字母", "response": "A"},  # MC: always "A"
             {"match": "预测答案: 我不知道", "response": "C"},  # judge
             {"match": "伏兔穴", "response": "我不知道"}, {"match": "？", "response": "我不知道"}]
    canned.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines), encoding="utf-8")
    base = stub_server("--responses", str(canned))
    run = tmp_path / "run"
    done = glot("run", "--model", "openai:m", "--base-url", base, "--judge", "openai:j", "--judge-base-url", base,
                "--tasks", "chinese_simpleqa.mc,chinese_simpleqa.mc_shuffled,chinese_simpleqa", "--limit", "10",
                "-o", str(run), "--no-progress")
    assert done.returncode == 0, done.stderr[-2000:]
    res = json.loads((run / "results.json").read_text())["tasks"]
    mc = res["chinese_simpleqa.mc"]["metrics"]["accuracy"]["value"]
    sh = res["chinese_simpleqa.mc_shuffled"]["metrics"]["accuracy"]["value"]
    gold_a = sum(s.target == "A" for s in resolve(["chinese_simpleqa.mc"])[0].samples(limit=10)) / 10
    assert mc == pytest.approx(gold_a) and res["chinese_simpleqa"]["metrics"]["factuality_co"]["value"] == 0.0
    out = glot("analyze", "option-order", str(run), env={"COLUMNS": "200"})
    assert out.returncode == 0, out.stderr
    assert "MC shuffled" in out.stdout and "drop MC→open" in out.stdout and "chinese_simpleqa" in out.stdout
    rows = json.loads((run / "option_order.json").read_text())
    assert rows[0]["mc"] == pytest.approx(mc) and rows[0]["mc_shuffled"] == pytest.approx(sh)
    assert rows[0]["drop_open"] == pytest.approx(mc) and rows[0]["n"] == {"mc": 10, "mc_shuffled": 10, "open": 10}
    assert rows[0]["status"] == {}  # every part valid: no "not a valid score" line
    # answer types and item difficulty across two runs (the same run twice here)
    items = glot("analyze", "items", str(run), str(run), "--task", "chinese_simpleqa.mc", env={"COLUMNS": "200"})
    assert items.returncode == 0, items.stderr
    assert "answer type" in items.stdout and "difficulty" in items.stdout and "hardest" in items.stdout


# ---------------------------------------------------------------- CoT and base-model prompts

def test_cot_variants_and_the_base_model_fewshot_prompt(data_root):
    recall, steps, base = resolve(["chinese_simpleqa.cot_recall", "chinese_simpleqa.cot_steps", "chinese_simpleqa.base"])
    s = recall.samples(limit=1)[0]
    assert "回忆" in recall.requests(s, mode="generate", chat=True, settings=RequestSettings())[0].messages[-1]["content"]
    assert "一步一步" in steps.requests(s, mode="generate", chat=True, settings=RequestSettings())[0].messages[-1]["content"]
    [req] = base.requests(base.samples(limit=1)[0], mode="generate", chat=False, settings=RequestSettings())
    assert req.prompt.count("问题：") == 6 and req.prompt.endswith("问题：伏兔穴所属的经脉是什么？\n答案：")
    assert req.stop == ("\n",)
    pool_q = [json.loads(x)["question"] for x in base._pool_path().read_text(encoding="utf-8").splitlines()]
    assert sum(q in req.prompt for q in pool_q) == 5


# ---------------------------------------------------------------- retrieval

DOCS = {
    "zhongyi.txt": "伏兔穴是足阳明胃经的穴位，位于大腿前面。\n\n足三里也属于足阳明胃经。",
    "hu.md": "# Magyarország\n\nBudapest is the capital of Hungary.",
    "other.txt": "长江是中国最长的河流。",
}


def test_bm25_folder_retrieval(tmp_path):
    for name, text in DOCS.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert tokenize("伏兔穴 ABC") == ["伏", "兔", "穴", "伏兔", "兔穴", "abc"]
    r = BM25Folder(tmp_path)
    hits = r.retrieve("伏兔穴所属的经脉是什么？", 2)
    assert hits[0].doc == "zhongyi.txt" and hits[0].index == 0 and "足阳明胃经" in hits[0].text
    assert r.retrieve("capital of Hungary", 1)[0].doc == "hu.md"
    assert r.retrieve("zzz", 3) == []


def test_rag_mode_answers_with_retrieved_passages_in_samples(data_root, tmp_path, stub_server):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")

    def point(spec):
        spec["options"]["retrieval"]["docs"] = str(docs)
        spec["options"]["judge_max_tokens"] = 4

    task = yaml_copy(tmp_path, "chinese_simpleqa.rag", point)
    canned = tmp_path / "canned.jsonl"
    lines = [{"match": "预测答案: 足阳明胃经", "response": "A"}, {"match": "预测答案:", "response": "B"},
             {"match": "[1] 伏兔穴是足阳明胃经的穴位", "response": "足阳明胃经"}, {"match": "？", "response": "不知道"}]
    canned.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines), encoding="utf-8")
    base = stub_server("--responses", str(canned))
    run = tmp_path / "run"
    done = glot("run", "--model", "openai:m", "--base-url", base, "--judge", "openai:j", "--judge-base-url", base,
                "--tasks", str(task), "--limit", "3", "-o", str(run), "--no-progress")
    assert done.returncode == 0, done.stderr[-2000:]
    samples = [json.loads(x) for x in (run / "samples.jsonl").read_text().splitlines()]
    first = next(s for s in samples if s["sample_id"] == "97e7f58a3b154facaa3a5c64d678c7bf")
    assert first["detail"]["retrieved"][0]["doc"] == "zhongyi.txt"
    assert "请参考以下资料回答问题" in json.dumps(first["prompt"], ensure_ascii=False)
    assert first["pred"] == "CORRECT"
    assert all("retrieved" in s["detail"] for s in samples)


# ---------------------------------------------------------------- English SimpleQA

def test_english_simpleqa_on_a_simple_evals_csv(data_root, tmp_path, stub_server):
    task = yaml_copy(tmp_path, "simpleqa", lambda s: s["dataset"]["splits"].update(test=str(SIMPLEQA_CSV)))
    [t] = resolve([str(task)])
    samples = t.samples()
    assert len(samples) == 4 and samples[0].vars["question"] == "What is the capital city of Hungary?"
    assert samples[0].metadata == {"topic": "Geography", "answer_type": "Place"} and samples[2].target == "2"
    [jr] = t.judge_requests(samples[0], [__import__("glotbench.models.base", fromlist=["GenResult"]).GenResult(text="Budapest")])
    assert "Gold target: Budapest\nPredicted answer: Budapest" in jr.messages[-1]["content"]
    # simple-evals' rule: first A/B/C in the reply, "C" by default
    assert t.parse_judgment(samples[0], 0, "CORRECT")["grade"] == "NOT_ATTEMPTED"
    canned = tmp_path / "canned.jsonl"
    lines = [{"match": "Predicted answer: Budapest", "response": "A"}, {"match": "Predicted answer: Marlowe", "response": "B"},
             {"match": "Predicted answer: ", "response": "C"},
             {"match": "capital city of Hungary", "response": "Budapest"}, {"match": "Hamlet", "response": "Marlowe"},
             {"match": "?", "response": "I don't know"}]
    canned.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    base = stub_server("--responses", str(canned))
    run = tmp_path / "run"
    done = glot("run", "--model", "openai:m", "--base-url", base, "--judge", "openai:j", "--judge-base-url", base,
                "--tasks", str(task), "-o", str(run), "--no-progress")
    assert done.returncode == 0, done.stderr[-2000:]
    r = json.loads((run / "results.json").read_text())["tasks"]["simpleqa"]
    assert r["metrics"]["factuality_co"]["value"] == 0.25 and r["metrics"]["factuality_na"]["value"] == 0.5
    assert set(r["slices"]["answer_type"]) == {"Place", "Person", "Number", "Date"}


def test_bad_metadata_literal_names_file_record_and_field(data_root, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text('metadata,problem,answer\n"{\'topic\': ",Q?,A\n', encoding="utf-8")
    task = yaml_copy(tmp_path, "simpleqa", lambda s: s["dataset"]["splits"].update(test=str(bad)))
    with pytest.raises(Exception, match=r"record 0: field 'metadata': not a Python literal"):
        resolve([str(task)])[0].samples()
