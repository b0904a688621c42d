"""`glotbench build qa`: parsing, garbage replies, dry-run counts, and a SIGKILL mid-run against the
stub server followed by reruns that send nothing already answered (the stub's log shows it).
CLI calls run in fresh subprocesses."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx

from journal_rows import count_responses

from glotbench.build.qa import check_pair, parse_qa, qa_calls

REPO = Path(__file__).resolve().parents[1]
PASSAGES = REPO / "tests" / "fixtures" / "build" / "passages.jsonl"


def cli(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    p = subprocess.run([sys.executable, "-m", "glotbench", "build", *args], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=300)
    if check:
        assert p.returncode == 0, p.stdout + p.stderr
    return p


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def test_parse_qa_forms_and_garbage():
    assert parse_qa('Výsledek: {"question": "Kdy?", "answer": 1357}') == ("Kdy?", "1357")
    assert parse_qa('blah {"x": 1} then {"question": "Q?", "answer": "A"} trailing') == ("Q?", "A")
    assert parse_qa("Otázka: Kde pramení Vltava?\nOdpověď: Na Šumavě") == ("Kde pramení Vltava?", "Na Šumavě")
    assert parse_qa("<think>hmm</think>Question: Who?\nAnswer: Dvořák") == ("Who?", "Dvořák")
    for bad in ("", "A", '{"question": ["x"], "answer": "y"}', "{not json", '{"answer": true, "question": "q"}'):
        assert isinstance(parse_qa(bad), str), bad
    assert check_pair("Q?", "", 10) == "empty answer"
    assert "words" in check_pair("Q?", "one two three four", 3)
    assert check_pair("Kdy byl postaven most 1357?", "1357", 10) == "the answer is written in the question"
    assert "placeholder" in check_pair("sem napiš otázku", "sem napiš správnou odpověď", 10)
    assert check_pair("Kdy?", "1357", 10) is None


def test_prompt_is_in_the_passage_language():
    p = {"id": "x", "title": "T", "text": "Text."}
    cs = qa_calls([p], "cs")[0].request.messages[0]["content"]
    hu = qa_calls([p], "hu")[0].request.messages[0]["content"]
    assert "Vytvoř podle daného dokumentu" in cs and "Název: T" in cs
    assert "written in Hungarian" in hu


def test_garbage_replies_are_dropped_with_reason(stub_server, tmp_path):
    base = stub_server("--answer", "I cannot help with that.")
    cli("qa", "-p", str(PASSAGES), "-l", "cs", "-m", "openai:stub", "--base-url", base, "-o", "qa.jsonl", cwd=tmp_path)
    assert lines(tmp_path / "qa.jsonl") == []
    dropped = lines(tmp_path / "qa.dropped.jsonl")
    assert len(dropped) == 6
    assert {d["removed_by"] for d in dropped} == {"qa_parse"}
    assert all("no JSON" in d["reason"] for d in dropped)
    prov = dropped[0]["provenance"][0]
    assert prov["step"] == "qa" and prov["source"] == "p1" and prov["model"].startswith("openai:stub")
    assert len(prov["prompt_sha256"]) == 64


def test_good_replies_become_items_with_provenance(stub_server, tmp_path):
    resp = tmp_path / "r.jsonl"
    resp.write_text(json.dumps({"match": "Sněžka je", "response": '{"question": "Kolik metrů měří Sněžka?", "answer": "1603"}'},
                               ensure_ascii=False) + "\n", encoding="utf-8")
    base = stub_server("--answer", "nonsense", "--responses", str(resp))
    out = cli("qa", "-p", str(PASSAGES), "-l", "cs", "-m", "openai:stub", "--base-url", base, "-o", "qa.jsonl", cwd=tmp_path)
    assert "kept 1 · dropped 5" in out.stdout
    (item,) = lines(tmp_path / "qa.jsonl")
    assert item["id"] == "p2-q0" and item["answer"] == "1603" and item["passage_id"] == "p2" and item["title"] == "Sněžka"


def test_dry_run_counts_and_sends_nothing(stub_server, tmp_path):
    base = stub_server()
    out = cli("qa", "-p", str(PASSAGES), "-l", "cs", "-m", "openai:stub", "--base-url", base, "-o", "qa.jsonl", "--dry-run", cwd=tmp_path)
    assert "passages 6 · calls 6" in out.stdout and "to send 6" in out.stdout
    assert httpx.get(base.replace("/v1", "/_log")).json()["log"] == []
    assert not (tmp_path / "qa.jsonl").exists()
    cli("qa", "-p", str(PASSAGES), "-l", "cs", "-m", "openai:stub", "--base-url", base, "-o", "qa.jsonl", "-n", "4", cwd=tmp_path)
    out = cli("qa", "-p", str(PASSAGES), "-l", "cs", "-m", "openai:stub", "--base-url", base, "-o", "qa.jsonl", "--dry-run", cwd=tmp_path)
    assert "calls 6" in out.stdout and "already in the journal 4 · to send 2" in out.stdout


def test_sigkill_then_rerun_sends_nothing_answered_twice(stub_server, tmp_path):
    # 30 passages, one call in flight at a time, 0.4 s per answer: killed after some are journaled.
    ps = tmp_path / "ps.jsonl"
    ps.write_text("".join(json.dumps({"id": f"s{i}", "title": "", "text": f"Věta číslo {i} o městě Brno."}) + "\n"
                          for i in range(30)), encoding="utf-8")
    base = stub_server("--delay", "0.4", "--answer", '{"question": "Q?", "answer": "A"}')
    log_url = base.replace("/v1", "/_log")
    journal = tmp_path / "build.journal.sqlite"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    args = [sys.executable, "-m", "glotbench", "build", "qa", "-p", str(ps), "-l", "cs", "-m", "openai:stub",
            "--base-url", base, "-o", str(tmp_path / "qa.jsonl"), "-j", "1"]
    proc = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while count_responses(journal) < 5 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    at_kill = count_responses(journal)
    assert 5 <= at_kill < 30, at_kill
    assert not (tmp_path / "qa.jsonl").exists()
    con = sqlite3.connect(journal)
    answered_keys = {json.dumps(json.loads(r[0]), sort_keys=True) for r in con.execute("SELECT request FROM responses")}
    con.close()
    n_log_kill = len(httpx.get(log_url).json()["log"])

    out = cli(*args[4:], cwd=tmp_path)
    assert f"calls sent {30 - at_kill} · from the journal {at_kill}" in out.stdout
    log = httpx.get(log_url).json()["log"]
    after = log[n_log_kill:]
    assert len(after) == 30 - at_kill  # only what had no answer
    hashes = [e["hash"] for e in log]
    repeated = {h for h in hashes if hashes.count(h) > 1}
    assert len(repeated) <= 1  # at most the one request in flight at the kill (it never got an answer)
    assert len(answered_keys) == at_kill

    # a third run: every answer comes from the journal, the stub sees nothing
    out = cli(*args[4:], cwd=tmp_path)
    assert "calls sent 0 · from the journal 30" in out.stdout
    assert len(httpx.get(log_url).json()["log"]) == len(log)
    assert len(lines(tmp_path / "qa.jsonl")) == 30


def test_lines_format_two_journaled_completions(stub_server, tmp_path):
    resp = tmp_path / "r.jsonl"
    resp.write_text(json.dumps({"match": "Otázka: Co popisuje dokument?\nOdpověď:", "response": " Most"}, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    base = stub_server("--answer", " Co popisuje dokument?", "--responses", str(resp))
    args = ("qa", "-p", str(PASSAGES), "-l", "cs", "-m", "openai:stub", "--base-url", base, "-o", "qa.jsonl", "--format", "lines")
    out = cli(*args, cwd=tmp_path)
    assert "kept 6 · dropped 0 · calls sent 12" in out.stdout
    items = lines(tmp_path / "qa.jsonl")
    assert (items[0]["question"], items[0]["answer"]) == ("Co popisuje dokument?", "Most")
    assert items[0]["provenance"][0]["format"] == "lines"
    out = cli(*args, cwd=tmp_path)
    assert "calls sent 0 · from the journal 12" in out.stdout


def test_chinese_prompt_is_the_papers_fig18_verbatim():
    from glotbench.build.prompts_zh import CSQA_FIG18

    seed = next(iter(sorted(Path(REPO.parent / "shared" / "seeds").glob("001_*.txt"))), None)
    if seed is None:
        import pytest

        pytest.skip("the Chinese SimpleQA paper's text (../shared/seeds/001_*.txt) is not here")
    paper = seed.read_text(encoding="utf-8")
    start = paper.index("现在需要你根据给定的文档生成一个事实类问题")
    end = paper.index("让我们开始吧！", start) + len("让我们开始吧！")
    assert CSQA_FIG18 == paper[start:end]  # the reference, re-read from the paper
    sent = qa_calls([{"id": "x", "title": "长城", "text": "长城始建于春秋战国时期。"}], "zh")[0].request.messages[0]["content"]
    assert sent.startswith(paper[start:end])
    assert sent.endswith("\n\n类目：长城\n\n文档内容：长城始建于春秋战国时期。\n\n返回结果：")
    assert parse_qa('{"question": "这里填写生成的问题", "answer": "这里填写对应的标准答案"}') == ("这里填写生成的问题", "这里填写对应的标准答案")
    assert "placeholder" in check_pair("这里填写生成的问题", "这里填写对应的标准答案", 10)
