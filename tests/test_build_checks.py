"""`build criteria` (judge verdicts per criterion, stub judge with canned replies), `build
retrieval-check` (the RAG mode's BM25), `build dedup` (rapidfuzz threshold), `build checklist`
(records the HuWildBench loader reads). CLI calls in fresh subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

from glotbench.build.criteria import CRITERIA, parse_verdict
from glotbench.build.dedup import dedup
from test_build_qa import PASSAGES, cli, lines


def qa_items(tmp_path: Path) -> Path:
    items = [
        {"id": "p1-q0", "passage_id": "p1", "title": "Karlův most", "language": "cs",
         "passage": "Karlův most ... stavba začala roku 1357 za vlády Karla IV.",
         "question": "Ve kterém roce začala stavba Karlova mostu?", "answer": "1357"},
        {"id": "p2-q0", "passage_id": "p2", "title": "Sněžka", "language": "cs",
         "passage": "Sněžka je nejvyšší hora České republiky. Měří 1603 metrů.",
         "question": "Kolik metrů měří nejvyšší hora České republiky?", "answer": "1603"},
        {"id": "p5-q0", "passage_id": "p5", "title": "", "language": "cs", "passage": "Brno je druhé největší město Česka.",
         "question": "Kdo je současný primátor Brna?", "answer": "nevím"},
    ]
    p = tmp_path / "qa.jsonl"
    p.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    return p


def test_parse_verdict():
    assert parse_verdict("Looks fine.\nVERDICT: PASS") == "pass"
    assert parse_verdict("verdict: pass ... actually VERDICT: FAIL") == "fail"
    assert parse_verdict("该问题不是只有一个确切答案，【否】") == "fail"
    assert parse_verdict("Verdikt: ANO") == "pass"
    assert parse_verdict("I think it is good.") == "unparsed"


def test_criteria_verdicts_recorded_and_failures_dropped(stub_server, tmp_path):
    src = qa_items(tmp_path)
    resp = tmp_path / "judge.jsonl"
    resp.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in [
        {"match": "current primátor", "response": "never"},  # not in any prompt: ignored
        {"match": "Question: Kdo je současný primátor Brna?\nAnswer: nevím", "response": "It changes after elections. VERDICT: FAIL"},
        {"match": "Question: Kolik metrů", "response": "Fine. VERDICT: PASS"},
    ]) + "\n", encoding="utf-8")
    base = stub_server("--answer", "no verdict here", "--responses", str(resp))
    out = cli("criteria", "-i", str(src), "--judge", "openai:stub", "--judge-base-url", base, "-o", "crit.jsonl", cwd=tmp_path)
    # p1: the fallback answer has no verdict -> dropped as unparsed; p2 passes all; p5 fails
    assert "in 3 · kept 1 · dropped 2" in out.stdout
    assert "calls sent 14" in out.stdout  # 5 + 5 + 4 (p5 has no title: not_from_title is not asked)
    (kept,) = lines(tmp_path / "crit.jsonl")
    assert kept["id"] == "p2-q0" and set(kept["criteria"]) == set(CRITERIA) - {"csqa_fig19"}
    assert all(v["verdict"] == "pass" for v in kept["criteria"].values())
    assert kept["provenance"][-1]["step"] == "criteria" and kept["provenance"][-1]["model"].startswith("openai:stub")
    dropped = {d["id"]: d for d in lines(tmp_path / "crit.dropped.jsonl")}
    assert dropped["p5-q0"]["removed_by"] == "criteria:unique_answer"
    assert dropped["p5-q0"]["criteria"]["not_from_title"] == {"verdict": "no_title"}
    assert dropped["p1-q0"]["reason"] == "no verdict in the judge's reply"
    # --unparsed keep: p1 passes (recorded as unparsed); everything comes from the journal
    out = cli("criteria", "-i", str(src), "--judge", "openai:stub", "--judge-base-url", base, "-o", "crit2.jsonl",
              "--unparsed", "keep", cwd=tmp_path)
    assert "kept 2 · dropped 1" in out.stdout and "calls sent 0 · from the journal 14" in out.stdout
    assert lines(tmp_path / "crit2.jsonl")[0]["criteria"]["grounded"]["verdict"] == "unparsed"
    out = cli("criteria", "-i", str(src), "--judge", "openai:stub", "--judge-base-url", base, "-o", "c3.jsonl",
              "--criterion", "grounded", "--dry-run", cwd=tmp_path)
    assert "items 3 · criteria 1 · calls 3" in out.stdout and "already in the journal 3" in out.stdout


def test_retrieval_check_keeps_items_whose_passage_is_retrieved(tmp_path):
    items = [
        {"id": "a", "passage_id": "p2", "question": "Kolik metrů měří Sněžka v Krkonoších?", "answer": "1603"},
        {"id": "b", "passage_id": "p4", "question": "Kde pramení Vltava?", "answer": "Na Šumavě"},  # p3's fact, not p4's
    ]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    out = cli("retrieval-check", "-i", str(src), "-p", str(PASSAGES), "-k", "1", "-o", "ret.jsonl", cwd=tmp_path)
    assert "kept 1 · dropped 1" in out.stdout and "k 1" in out.stdout
    (kept,) = lines(tmp_path / "ret.jsonl")
    assert kept["retrieval"]["rank"] == 1 and kept["retrieval"]["top"] == ["p2"] and kept["retrieval"]["k"] == 1
    (d,) = lines(tmp_path / "ret.dropped.jsonl")
    assert d["retrieval"]["top"] == ["p3"] and "not in the top 1" in d["reason"]


def test_dedup_threshold_and_duplicate_named(tmp_path):
    items = [{"id": "1", "question": "Kolik metrů měří Sněžka?"},
             {"id": "2", "question": "Sněžka měří kolik metrů?"},          # same words, other order: 100
             {"id": "3", "question": "Kolik metrů měří Sněžka ?!"},        # punctuation only: 100
             {"id": "4", "question": "Kolik metrů měří Lysá hora?"}]
    kept, dropped = dedup(items, threshold=85)
    assert [i["id"] for i in kept] == ["1", "4"]
    assert [(d["id"], of) for d, of, _ in dropped] == [("2", "1"), ("3", "1")]
    # item 4 scores between the two thresholds below: a stricter threshold keeps it, a looser drops it
    from rapidfuzz import fuzz, utils
    s = fuzz.token_sort_ratio(utils.default_process(items[0]["question"]), utils.default_process(items[3]["question"]))
    assert 60 < s < 85
    assert [i["id"] for i in dedup(items, threshold=s - 1)[0]] == ["1"]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    out = cli("dedup", "-i", str(src), "-o", "d.jsonl", "--threshold", "85", cwd=tmp_path)
    assert "kept 2 · dropped 2" in out.stdout and "threshold 85.0" in out.stdout
    d = lines(tmp_path / "d.dropped.jsonl")
    assert d[0]["duplicate_of"] == "1" and d[0]["similarity"] == 100.0 and d[0]["removed_by"] == "dedup"
    assert d[0]["provenance"][-1]["threshold"] == 85.0


def test_checklist_records_are_what_the_hu_wildbench_loader_reads(stub_server, tmp_path):
    from glotbench.benchmarks.openhueval.wildbench import checklist_markdown, load

    src = qa_items(tmp_path)
    resp = tmp_path / "r.jsonl"
    resp.write_text(json.dumps({"match": "Karlova", "response": "- Uvádí rok 1357.\n- Odpověď je stručná.\n2. Nepřidává nesmysly.\n- Uvádí rok 1357."},
                               ensure_ascii=False) + "\n", encoding="utf-8")
    base = stub_server("--answer", "nothing useful", "--responses", str(resp))
    out = cli("checklist", "-i", str(src), "--judge", "openai:stub", "--judge-base-url", base, "-o", "ck.jsonl",
              "--min-items", "2", cwd=tmp_path)
    assert "kept 1 · dropped 2" in out.stdout
    recs = load(str(tmp_path / "ck.jsonl"))
    assert recs[0]["checklist"] == ["Uvádí rok 1357.", "Odpověď je stručná.", "Nepřidává nesmysly."]
    assert recs[0]["turn"] == [{"role": "user", "content": "Ve kterém roce začala stavba Karlova mostu?"}]
    assert checklist_markdown(recs[0]).startswith("- Uvádí rok 1357.\n")
    d = lines(tmp_path / "ck.dropped.jsonl")
    assert d[0]["reason"] == "0 checklist item(s), fewer than 2"
    log_prompt = "in Czech"
    from glotbench.build.checklist import checklist_calls
    assert log_prompt in checklist_calls(lines(src), "cs")[0].request.messages[0]["content"]


def test_chinese_items_also_get_the_papers_fig19_check(stub_server, tmp_path):
    from pathlib import Path as _P

    from glotbench.build.criteria import criteria_calls, default_criteria, prompt_for
    from glotbench.build.prompts_zh import CSQA_FIG19

    item = {"id": "z1", "language": "zh", "title": "汉十高速公路", "passage": "……", "question": "汉十高速公路连接的武汉市和哪两个城市？",
            "answer": "孝感、十堰"}
    assert default_criteria([item])[-1] == "csqa_fig19" and len(default_criteria([{"language": "cs"}])) == 5
    seed = next(iter(sorted(_P(__file__).resolve().parents[1].parent.joinpath("shared", "seeds").glob("001_*.txt"))), None)
    if seed is not None:  # the reference, re-read from the paper
        paper = seed.read_text(encoding="utf-8")
        start = paper.index("你是一个数据质量检查员")
        assert CSQA_FIG19 == paper[start:paper.index("让我们开始吧！", start) + len("让我们开始吧！")]
    assert prompt_for("csqa_fig19", item) == CSQA_FIG19 + "\n\n问题：汉十高速公路连接的武汉市和哪两个城市？\n\n评价："
    assert len(criteria_calls([item], default_criteria([item]))) == 6
    src = tmp_path / "zh.jsonl"
    src.write_text(json.dumps(item, ensure_ascii=False) + "\n", encoding="utf-8")
    resp = tmp_path / "r.jsonl"
    resp.write_text(json.dumps({"match": "你是一个数据质量检查员", "response": "回答范围不明确，【否】"}, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    base = stub_server("--answer", "VERDICT: PASS", "--responses", str(resp))
    out = cli("criteria", "-i", str(src), "--judge", "openai:stub", "--judge-base-url", base, "-o", "c.jsonl", cwd=tmp_path)
    assert "kept 0 · dropped 1" in out.stdout and "calls sent 6" in out.stdout
    (d,) = lines(tmp_path / "c.dropped.jsonl")
    assert d["removed_by"] == "criteria:csqa_fig19" and d["criteria"]["grounded"]["verdict"] == "pass"


def test_checklist_merges_two_judges_lists(stub_server, tmp_path):
    src = qa_items(tmp_path)
    j1 = stub_server("--answer", "- Uvádí rok.\n- Je stručná.\n- Je česky.")
    j2 = stub_server("--answer", "1. Je stručná.\n2. Nic nepřidává.\n3. Odpovídá na otázku.")
    out = cli("checklist", "-i", str(src), "--judge", "openai:stub", "--judge-base-url", j1, "--judge", "openai:stub2",
              "--judge-base-url", j2, "-o", "ck.jsonl", "--min-items", "5", "--max-items", "10", cwd=tmp_path)
    assert "kept 3 · dropped 0" in out.stdout and out.stdout.count("calls sent 3") == 2
    rec = lines(tmp_path / "ck.jsonl")[0]
    assert rec["checklist"] == ["Uvádí rok.", "Je stručná.", "Je česky.", "Nic nepřidává.", "Odpovídá na otázku."]
    assert rec["provenance"][-1]["per_judge"] == [3, 3]
    out = cli("checklist", "-i", str(src), "--judge", "openai:stub", "--judge-base-url", j1, "--judge", "openai:stub2",
              "--judge-base-url", j2, "-o", "ck.jsonl", "--min-items", "6", cwd=tmp_path)
    assert "kept 0 · dropped 3" in out.stdout and out.stdout.count("from the journal 3") == 2
