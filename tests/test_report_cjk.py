"""`glotbench report` of a Chinese, a Mongolian and a Hungarian run in headless Chromium (Debian's
chromium through Playwright): the charts' category labels are SVG <text> nodes holding the Chinese
names (the browser draws them with its own fonts, not matplotlib's paths, which showed boxes without
a CJK font where the report was written), and a wide metric table scrolls inside its card instead of
overflowing it. Screenshots go to test-artifacts/ (report-cjk*.png). Needs the shared benchmark data."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
SVG = "{http://www.w3.org/2000/svg}"


def glot(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "OPENAI_API_KEY": "x"}
    env.pop("GLOTBENCH_CACHE", None)
    return subprocess.run([sys.executable, "-m", "glotbench", *args], env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    from glotbench.paths import resolve_data_file
    from glotbench.testing.servers import start_stub, stop

    for rel in ("chinese_simpleqa/chinese_simpleqa.jsonl", "mm_eval/knowledge_eval.json", "hulu/HuCOLA"):
        if not resolve_data_file(rel).exists():
            pytest.skip(f"benchmark data not found ({rel}); put shared/data in place or set GLOTBENCH_DATA")
    root = tmp_path_factory.mktemp("cjk")
    base, proc = start_stub("--answer", "A")  # the model answers "A"; as the judge, "A" is CORRECT
    try:
        zh = glot("run", "--model", "openai:stub", "--base-url", base, "--judge", "openai:judge", "--judge-base-url", base,
                  "--tasks", "chinese_simpleqa", "--sample", "24", "--stratify", "primary_category",
                  "-o", str(root / "zh"), "--no-progress", "--bootstrap", "50")
        assert zh.returncode == 0, zh.stderr[-3000:]
        mn = glot("run", "--model", "openai:stub", "--base-url", base, "--tasks", "mm_eval.knowledge", "--limit", "8",
                  "-o", str(root / "mn"), "--no-progress", "--bootstrap", "50")
        assert mn.returncode == 0, mn.stderr[-3000:]
        hu = glot("run", "--model", "openai:stub", "--base-url", base, "--tasks", "hulu.cola", "--limit", "8",
                  "-o", str(root / "hu"), "--no-progress", "--bootstrap", "50")
        assert hu.returncode == 0, hu.stderr[-3000:]
    finally:
        stop(proc)
    zh_html, all_html = root / "zh.html", root / "all.html"
    for out, runs in ((zh_html, ["zh"]), (all_html, ["zh", "mn", "hu"])):
        rep = glot("runs", "report", *[str(root / r) for r in runs], "-o", str(out))
        assert rep.returncode == 0, rep.stderr[-3000:]
    res = json.loads((root / "zh" / "results.json").read_text(encoding="utf-8"))
    cats = sorted((res["tasks"]["chinese_simpleqa"].get("slices") or {}).get("primary_category", {}))
    assert len(cats) >= 3 and all(re.search(r"[\u4e00-\u9fff]", c) for c in cats), cats
    return root, zh_html, all_html, cats


def _svg_texts(html: str) -> list[str]:
    texts = []
    for svg in re.findall(r"<svg.*?</svg>", html, flags=re.DOTALL):
        root = ET.fromstring(svg)  # each chart is well-formed XML
        texts += ["".join(t.itertext()) for t in root.iter(SVG + "text")]
    return texts


def test_chinese_category_names_are_svg_text(reports):
    """In the file itself: every Chinese category of the per-category chart is the text of an SVG
    <text> element (not a path outline)."""
    _, zh_html, _, cats = reports
    texts = "\n".join(_svg_texts(zh_html.read_text(encoding="utf-8")))
    for c in cats:
        assert c in texts, (c, texts[:2000])


def _browser():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not found (apt-get install -y chromium)")
    return pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")


def test_chinese_simpleqa_report_in_chromium(reports):
    """Chromium: the category labels of the Chinese SimpleQA charts are SVG text nodes holding the
    Chinese names, laid out with a width (the browser found glyphs to draw them with, whatever fonts
    the machine has); a screenshot is kept."""
    sync_api = _browser()
    _, zh_html, _, cats = reports
    art = REPO / "test-artifacts"
    art.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            page = b.new_page(viewport={"width": 1300, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(zh_html.as_uri())
            nodes = page.locator("section svg text")
            labels = nodes.evaluate_all("ns => ns.map(n => [n.textContent, n.getBBox().width])")
            for c in cats:  # the node holds the name (maybe with its n); the browser gave it a width
                widths = [w for t, w in labels if c in t]
                assert widths and min(widths) > 0, (c, sorted(t for t, _ in labels)[:40])
            # as the browser draws them, no two category labels of a chart run into each other
            for k in range(page.locator("section svg").count()):
                rects = page.locator("section svg").nth(k).locator("text").evaluate_all(
                    "ns => ns.map(n => { const r = n.getBoundingClientRect(); return [n.textContent, r.left, r.top, r.right, r.bottom]; })")
                named = [r for r in rects if any(c in r[0] for c in cats)]
                for i, a in enumerate(named):
                    for z in named[i + 1:]:
                        assert not (a[1] < z[3] and z[1] < a[3] and a[2] < z[4] and z[2] < a[4]), (a, z)
            fig = page.locator("figure.plot").filter(has_text=cats[0]).first
            fig.scroll_into_view_if_needed()
            fig.screenshot(path=str(art / "report-cjk-categories.png"))
            page.screenshot(path=str(art / "report-cjk.png"), full_page=True)
            assert not errors, errors
        finally:
            b.close()


def test_wide_tables_stay_inside_their_cards(reports):
    """Chinese, Mongolian and Hungarian runs in one report at a narrow window: no card is wider than
    the page (its wide metric table scrolls inside it), and the summary chart is visible."""
    sync_api = _browser()
    _, _, all_html, _ = reports
    art = REPO / "test-artifacts"
    art.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            page = b.new_page(viewport={"width": 760, "height": 900})
            page.goto(all_html.as_uri())
            over = page.evaluate("""() => [...document.querySelectorAll('section.card')].filter(
                c => c.scrollWidth > c.clientWidth + 1).map(c => c.id + ' ' + c.scrollWidth + '>' + c.clientWidth)""")
            assert not over, over
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
            # the wide table is there, and scrolls inside its wrapper
            wide = page.evaluate("""() => [...document.querySelectorAll('.scroll-x')].filter(
                d => d.scrollWidth > d.clientWidth + 1).length""")
            assert wide >= 1
            for sel in ("#task-mm-eval-knowledge", "#task-hulu-cola"):
                assert page.locator(sel).count() == 1, sel
            assert page.locator("#summary svg").first.is_visible()
            page.screenshot(path=str(art / "report-cjk-narrow.png"), full_page=True)
        finally:
            b.close()
