"""The report's outcome counts on real runs (issue 37 finding 9): a judged item's outcome is its
grade (Chinese SimpleQA, every item graded CORRECT by the stub judge: 10 correct, not 10 wrong);
a corpus headline (HuCOLA's MCC) gets its per-item counts labelled as answer = gold, not as the
metric. Each count is checked against the run's own samples.jsonl, read independently here."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"


def glot(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "OPENAI_API_KEY": "x"}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], env=env, capture_output=True, text=True, timeout=300)


class Page(HTMLParser):
    """The outcome-count lines (task section -> model -> outcome -> n) and the sample rows' JSON."""

    def __init__(self):
        super().__init__()
        self.counts: dict[str, dict[str, int]] = {}
        self.captions: dict[str, str] = {}
        self.section = None
        self._in = None
        self.samples = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section" and (a.get("id") or "").startswith("task-"):
            self.section = a["id"]
        elif tag == "figcaption" and self.section:
            self._in = ("caption", self.section)
        elif tag == "span" and a.get("data-outcome") and self.section:
            self._in = ("count", a["data-outcome"])
        elif tag == "script" and a.get("id") == "samples-data":
            self._in = ("samples", None)

    def handle_endtag(self, tag):
        if tag in ("figcaption", "span", "script"):
            self._in = None

    def handle_data(self, data):
        if not self._in:
            return
        kind, key = self._in
        if kind == "caption":
            self.captions.setdefault(key, "")
            self.captions[key] += data
        elif kind == "count":
            n = int(data.split()[0])
            self.counts.setdefault(self.section, {})[key] = n
        else:
            self.samples += data


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from glotbench.paths import resolve_data_file
    from glotbench.testing.servers import start_stub, stop

    for rel in ("chinese_simpleqa/chinese_simpleqa.jsonl", "hulu/HuCOLA"):
        if not resolve_data_file(rel).exists():
            pytest.skip(f"benchmark data not found ({rel}); put shared/data in place or set GLOTBENCH_DATA")
    root = tmp_path_factory.mktemp("outcomes")
    base, proc = start_stub("--answer", "A")  # the model answers "A"; as the judge, "A" is CORRECT
    try:
        sqa = glot("run", "--model", "openai:stub", "--base-url", base, "--judge", "openai:judge", "--judge-base-url", base,
                   "--tasks", "chinese_simpleqa", "--limit", "10", "-o", str(root / "sqa"), "--no-progress", "--bootstrap", "50")
        assert sqa.returncode == 0, sqa.stderr
        cola = glot("run", "--model", "openai:stub", "--base-url", base, "--tasks", "hulu.cola", "--limit", "12",
                    "-o", str(root / "cola"), "--no-progress", "--bootstrap", "50")
        assert cola.returncode == 0, cola.stderr
    finally:
        stop(proc)
    # a run with mixed grades: one stub answering by question (model and judge requests both hold
    # it): the first three items "B" (INCORRECT), the next two "C" (NOT_ATTEMPTED), the rest "A"
    questions = [json.loads(x)["question"] for x in resolve_data_file("chinese_simpleqa/chinese_simpleqa.jsonl")
                 .read_text(encoding="utf-8").splitlines()[:5]]
    rules = root / "rules.jsonl"
    rules.write_text("\n".join(json.dumps({"match": q, "response": "B" if k < 3 else "C"}, ensure_ascii=False)
                               for k, q in enumerate(questions)), encoding="utf-8")
    base, proc = start_stub("--responses", str(rules))
    try:
        mixed = glot("run", "--model", "openai:stub", "--base-url", base, "--judge", "openai:judge", "--judge-base-url",
                     base, "--tasks", "chinese_simpleqa", "--limit", "10", "-o", str(root / "mixed"), "--no-progress",
                     "--bootstrap", "50")
        assert mixed.returncode == 0, mixed.stderr
    finally:
        stop(proc)
    out = root / "report.html"
    rep = glot("runs", "report", str(root / "sqa"), str(root / "cola"), "-o", str(out))
    assert rep.returncode == 0, rep.stderr
    rep = glot("runs", "report", str(root / "mixed"), "-o", str(root / "mixed.html"))
    assert rep.returncode == 0, rep.stderr
    return root, out


def samples(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "samples.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]


def parsed(out: Path) -> Page:
    page = Page()
    page.feed(out.read_text(encoding="utf-8"))
    return page


def test_judged_items_count_by_their_grade(report):
    root, out = report
    recs = samples(root / "sqa")
    grades = Counter(r.get("pred") for r in recs)
    assert grades == {"CORRECT": 10}  # the stub judge graded every item CORRECT
    res = json.loads((root / "sqa" / "results.json").read_text())
    assert res["tasks"]["chinese_simpleqa"]["metrics"]["factuality_co"]["value"] == 1.0
    page = parsed(out)
    want = {"CORRECT": "correct", "INCORRECT": "wrong", "NOT_ATTEMPTED": "not_attempted"}
    rows = [r for r in json.loads(page.samples)["rows"] if r["t"] == "chinese_simpleqa"]  # the sample browser's
    assert Counter(r["o"] for r in rows) == Counter(want[r["pred"]] for r in recs) == {"correct": 10}
    (sec,) = [k for k in page.counts if "simpleqa" in k]  # the outcome bar's counts
    assert page.counts[sec] == {want[g]: n for g, n in grades.items()}  # {"correct": 10}, not {"wrong": 10}
    assert "judge" in page.captions[sec]


def test_mixed_grades_count_as_their_grades(report):
    root, _ = report
    recs = samples(root / "mixed")
    grades = Counter(r.get("pred") for r in recs)
    assert set(grades) == {"CORRECT", "INCORRECT", "NOT_ATTEMPTED"}, grades  # the rules hit items in the run
    page = parsed(root / "mixed.html")
    want = {"CORRECT": "correct", "INCORRECT": "wrong", "NOT_ATTEMPTED": "not_attempted"}
    (sec,) = [k for k in page.counts if "simpleqa" in k]
    assert page.counts[sec] == {want[g]: n for g, n in grades.items()}
    rows = json.loads(page.samples)["rows"]
    assert Counter(r["o"] for r in rows) == Counter(want[r["pred"]] for r in recs)
    res = json.loads((root / "mixed" / "results.json").read_text())
    co = res["tasks"]["chinese_simpleqa"]["metrics"]["factuality_co"]["value"]
    assert co == pytest.approx(page.counts[sec]["correct"] / len(recs))  # CO = correct / graded (no judge errors)


def test_corpus_metric_counts_are_labelled_as_what_they_are(report):
    root, out = report
    recs = samples(root / "cola")
    res = json.loads((root / "cola" / "results.json").read_text())
    task = res["tasks"]["hulu.cola"]
    assert next(iter(task["metrics"])) == "mcc"
    right = sum(1 for r in recs if r.get("status", "scored") == "scored" and r.get("pred") is not None
                and str(r["pred"]) == str(r["gold"]))
    unparseable = sum(1 for r in recs if r.get("status", "scored") == "scored" and r.get("pred") is None)
    errors = sum(1 for r in recs if r.get("status") == "error")
    page = parsed(out)
    rows = [r for r in json.loads(page.samples)["rows"] if r["t"] == "hulu.cola"]
    assert Counter(r["o"] for r in rows)["correct"] == right
    (sec,) = [k for k in page.counts if "cola" in k]
    print(f"\nHuCOLA: {task['metrics']['mcc']['value']} MCC; outcome counts {page.counts[sec]}")
    want = {"correct": right, "wrong": len(recs) - right - unparseable - errors, "unparseable": unparseable, "error": errors}
    assert page.counts[sec] == {k: n for k, n in want.items() if n}
    caption = page.captions[sec]
    assert "answer = gold" in caption and "mcc is a corpus metric" in caption


def test_correct_filter_shows_the_judged_items_in_chromium(report):
    pw = pytest.importorskip("playwright.sync_api", reason="playwright for Python is not installed (pip install playwright)")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} missing (apt-get install -y chromium)")
    root, out = report
    n_correct = sum(1 for r in samples(root / "sqa") if r.get("pred") == "CORRECT")
    with pw.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--no-first-run",
                                                                     "--disable-background-networking"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(out.as_uri())
            page.select_option("#f-task", "chinese_simpleqa")
            page.click("button[data-outcome=correct]")
            rows = page.locator("#samples tbody tr.row")
            assert rows.count() == n_correct == 10
            assert set(rows.evaluate_all("rs => rs.map(r => r.dataset.outcome)")) == {"correct"}
            page.click("button[data-outcome=wrong]")
            assert rows.count() == 0
            assert not errors, errors
        finally:
            browser.close()
