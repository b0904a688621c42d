"""`glotbench report`: one offline HTML file from real runs (two stub "models" on real Klokánek and
MM-Eval items), checked as text and in headless Chromium (screenshot under test-artifacts/)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from glotbench.cli import _register, app
from glotbench.engine.config import RunConfig
from glotbench.engine.session import run_evaluation
from glotbench.paths import resolve_data_file
from glotbench.testing.servers import start_stub, stop

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
# Model B's answer carries markup: the report must show it as text, never run it.
HOSTILE = 'Odpověď: C </script><img src=x onerror="window.__pwned=1"><b>bold</b>'


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    for rel in ("czech_klokanek/dataset.json", "mm_eval/knowledge_eval.json"):
        if not resolve_data_file(rel).is_file():
            pytest.skip(f"benchmark data not found ({rel}); put shared/data in place or set GLOTBENCH_DATA")
    root = tmp_path_factory.mktemp("report_runs")
    out = []
    for name, args in (("run_a", ("--answer", "A")), ("run_b", ("--answer", HOSTILE, "--fault-rate", "0.2", "--stall", "0.1"))):
        base, proc = start_stub(*args)
        try:
            cfg = RunConfig(model="openai:stub", base_url=base, tasks=["czech_bench.klokanek", "mm_eval.knowledge"], limit=16,
                            output=str(root / name), bootstrap=100, max_retries=0, retry_base_delay=0.01, timeout=5)
            run_evaluation(cfg, show_progress=False)
        finally:
            stop(proc)
        out.append(root / name)
    return out


def _report(runs, path: Path) -> str:
    _register()
    res = CliRunner().invoke(app, ["runs", "report", *map(str, runs), "-o", str(path)])
    assert res.exit_code == 0, res.output
    return path.read_text(encoding="utf-8")


def test_report_is_self_contained_and_escaped(runs, tmp_path):
    html = _report(runs, tmp_path / "r.html")
    # offline: no external scripts, styles or images
    assert not re.search(r'<(script|link|img)[^>]*\b(src|href)="?https?:', html)
    assert html.count("<svg") >= 4  # overview, two outcome bars, the per-category plot
    # every task score from results.json is on the page
    for run in runs:
        res = json.loads((run / "results.json").read_text())
        for t in res["tasks"].values():
            v = t["metrics"]["accuracy"]["value"]
            assert f"{v:.3f}" in html
    b = json.loads((runs[1] / "results.json").read_text())
    assert b["tasks"]["mm_eval.knowledge"]["n_errors"] + b["tasks"]["czech_bench.klokanek"]["n_errors"] > 0
    # the hostile output never appears raw: only as escaped JSON or escaped text
    assert "<img src=x" not in html
    block = re.search(r'<script type="application/json" id="samples-data">(.*?)</script>', html, re.DOTALL).group(1)
    data = json.loads(block)
    assert any(HOSTILE in r["output"] for r in data["rows"])
    assert {r["o"] for r in data["rows"]} >= {"correct", "wrong", "error"}
    assert len(data["rows"]) == sum(1 for run in runs for _ in (run / "samples.jsonl").open())


def test_report_in_chromium(runs, tmp_path):
    pw = pytest.importorskip("playwright.sync_api", reason="playwright for Python is not installed (pip install playwright)")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} missing (apt-get install -y chromium)")
    out = tmp_path / "report.html"
    _report(runs, out)
    art = REPO / "test-artifacts"
    art.mkdir(exist_ok=True)
    shutil.copy(out, art / "report.html")
    with pw.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(out.as_uri())
            assert page.locator("#summary table tbody tr").count() == 2  # two tasks
            assert page.locator("section svg").count() >= 4
            assert page.locator("#summary svg").first.is_visible()
            shot = art / "report.png"
            page.screenshot(path=str(shot), full_page=False)
            print(f"screenshot: {shot}")
            page.locator("#task-czech-bench-klokanek").first.screenshot(path=str(art / "report-task.png"))

            rows = page.locator("#samples tbody tr.row")
            count_text = page.locator("#f-count").inner_text()
            all_outcomes = rows.evaluate_all("rs => rs.map(r => r.dataset.outcome)")
            assert len(set(all_outcomes)) > 1
            page.click("button[data-outcome=error]")
            err_outcomes = rows.evaluate_all("rs => rs.map(r => r.dataset.outcome)")
            assert err_outcomes and set(err_outcomes) == {"error"}
            assert page.locator("#f-count").inner_text() != count_text
            page.click("button[data-outcome=wrong]")
            assert set(rows.evaluate_all("rs => rs.map(r => r.dataset.outcome)")) == {"wrong"}
            # open one item: prompt, raw output and extracted answer are shown as text
            rows.first.click()
            detail = page.locator("#samples tr.detail").first.inner_text()
            assert "PROMPT" in detail.upper() and "RAW OUTPUT" in detail.upper()
            page.select_option("#f-model", "1")  # model B: its raw output is markup, shown as text
            # (Klokanek's headline, the reference rule, cannot read "Odpověď: C </script>...": unparseable)
            page.click("button[data-outcome=unparseable]")
            assert "<img src=x" in rows.first.locator("td").nth(6).inner_text()
            assert page.evaluate("window.__pwned") is None
            assert page.locator("#samples img").count() == 0
            page.locator("#browser").screenshot(path=str(art / "report-browser.png"))
            assert not errors, errors
        finally:
            browser.close()


def test_report_rejects_a_non_run_directory(tmp_path):
    from glotbench.errors import DataError
    from glotbench.report.runs import load_run

    with pytest.raises(DataError, match="no results.json"):
        load_run(tmp_path)
