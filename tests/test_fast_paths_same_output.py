"""The engine's per-item fast paths write what the slow paths they replaced wrote: a stub run with
varied answers in two languages, once as it is and once with the slow paths put back (the choice
extractor's clean-answer look-up off among them), gives the same samples.jsonl bytes, the same
journal rows (timestamps and latencies aside) and the same metrics (docs/performance.md lists the
fast paths)."""

from __future__ import annotations

import json
import os

import pytest

from glotbench.engine import runner
from glotbench.extract import choice as extract_choice
from glotbench.extract import text as extract_text
from journal_rows import stored_rows
from mc_task import mc_task_yaml
from test_normalize_table import loop_normalize

ANSWERS = {  # question marker -> the stub's answer
    "QX01": "A", "QX02": "The answer is B.", "QX03": "Хариулт: C", "QX04": "B) Улаанбаатар",
    "QX05": "I think A. Actually, no: C.", "QX06": "", "QX07": "**D**", "QX08": "A and B",
    "QX09": "Зөв хариулт бол «Дархан».", "QX10": "D. Эрдэнэт!", "QX11": "c", "QX12": "Option (b), I'm sure.",
}
OPTIONS = [["Улаанбаатар", "Дархан", "Эрдэнэт", "Ховд"], ["ам.доллар", "ам. доллар", "багамын доллар", "евро"],
           ["Café", "cafe", "Cafè!", "naïve"], ["2", "3", "1,5", "2.5"]]


def slow_normalize(text, pack):
    """extract/text.py's normalisation before its translate tables (the loop test_normalize_table.py compares on
    every code point)."""
    return loop_normalize(text, pack.normalization)


def slow_prompt_of(request):
    """runner._prompt_of before its GenRequest fast path."""
    d = request.to_dict()
    if "messages" in d and d.get("messages") is not None:
        return d["messages"]
    return d.get("prompt") if "prompt" in d else d.get("context")


@pytest.fixture(scope="module")
def stub(tmp_path_factory):
    from glotbench.testing.servers import start_stub, stop

    tmp = tmp_path_factory.mktemp("fast_paths")
    canned = tmp / "answers.jsonl"
    canned.write_text("".join(json.dumps({"match": k, "response": v}, ensure_ascii=False) + "\n"
                              for k, v in ANSWERS.items()), encoding="utf-8")
    base, proc = start_stub("--answer", "A", "--responses", str(canned))
    try:
        yield base, tmp
    finally:
        stop(proc)


def _tasks(tmp):
    paths = []
    for lang in ("mn", "en"):
        data = tmp / f"items_{lang}.jsonl"
        data.write_text("".join(json.dumps({"id": f"{lang}{i}", "q": f"{marker}: which one?",
                                            "opts": OPTIONS[i % len(OPTIONS)], "gold": "ABCD"[i % 4]},
                                           ensure_ascii=False) + "\n"
                                for i, marker in enumerate(ANSWERS)), encoding="utf-8")
        task = tmp / f"fast_{lang}.yaml"
        task.write_text(mc_task_yaml(f"fast.{lang}", data).replace("language: en", f"language: {lang}"),
                        encoding="utf-8")
        paths.append(str(task))
    return paths


def _run(base, tmp, name, **settings):
    from glotbench.engine.config import RunConfig
    from glotbench.engine.session import run_evaluation

    os.environ.setdefault("OPENAI_API_KEY", "stub")
    out = tmp / name
    cfg = RunConfig(model="openai:stub", base_url=base, tasks=_tasks(tmp), concurrency=4, output=str(out),
                    bootstrap=50, max_retries=0, **settings)
    results, _ = run_evaluation(cfg, show_progress=False)
    rows = stored_rows(out / "journal.sqlite")
    metrics = {t: r["metrics"] for t, r in results["tasks"].items()}
    tasks = {t: {**r, "latency": {k: v for k, v in r["latency"].items() if k.startswith("n_")}}  # timings vary
             for t, r in results["tasks"].items()}
    return (out / "samples.jsonl").read_bytes(), rows, metrics, tasks


def test_fast_paths_write_what_the_slow_paths_wrote(stub, monkeypatch):
    base, tmp = stub
    fast = _run(base, tmp, "fast")
    monkeypatch.setattr(extract_text, "_normalize", slow_normalize)
    monkeypatch.setattr(runner, "_prompt_of", slow_prompt_of)
    # every answer read in full: no clean-answer look-up ("A", "**D**", "c"), every option blanked in turn
    monkeypatch.setattr(extract_choice, "_option_in", lambda answer, options: True)
    monkeypatch.setattr(extract_choice, "_has_label", lambda m, answer: True)  # every pattern run on every answer
    monkeypatch.setattr(runner.RecordBrief, "of", staticmethod(lambda rec: None))  # the summary reads every row
    extract_text._NORM_CACHE.clear()
    slow = _run(base, tmp, "slow")
    extract_text._NORM_CACHE.clear()
    assert fast[0] == slow[0]  # samples.jsonl, byte for byte
    assert fast[1] == slow[1]  # journal rows, checksums included
    assert fast[2] == slow[2]
    assert fast[3] == slow[3]  # every task result (counts, slices, tokens, latency counts) from briefs or rows
    records = [json.loads(line) for line in fast[0].decode().splitlines()]
    assert len(records) == 2 * len(ANSWERS)
    rules = {r["extraction_rule"] for r in records}
    assert len(rules) >= 4, rules  # the answers reach several of the extractor's rules
    assert any(r["pred"] is None for r in records) and any(r["pred"] is not None for r in records)


def test_summary_from_briefs_rows_or_both_is_the_same(stub, monkeypatch):
    """A summary read from the run's briefs, from its journal rows, or from both (a resumed run: some rows
    of an earlier session), plain and --circular (rotations share an index: the rows' order), is the same."""
    base, tmp = stub
    of = runner.RecordBrief.of
    for circular in (False, True):
        fast = _run(base, tmp, f"briefs-{circular}", circular=circular)
        monkeypatch.setattr(runner.RecordBrief, "of", staticmethod(lambda rec: of(rec) if rec.idx % 2 else None))
        mixed = _run(base, tmp, f"mixed-{circular}", circular=circular)
        monkeypatch.setattr(runner.RecordBrief, "of", staticmethod(lambda rec: None))
        rows = _run(base, tmp, f"rows-{circular}", circular=circular)
        monkeypatch.setattr(runner.RecordBrief, "of", staticmethod(of))
        assert fast[0] == mixed[0] == rows[0]
        assert fast[3] == mixed[3] == rows[3]
        if circular:
            assert all("circular_accuracy" in t["metrics"] for t in fast[3].values())
