"""Plots draw Chinese labels with an installed CJK face (matplotlib's per-glyph fallback along
``font.family``) instead of DejaVu Sans' empty boxes and "Glyph ... missing" warnings."""

from __future__ import annotations

import warnings

import pytest

from glotbench.plots._mpl import cjk_families


def test_cjk_families_by_name():
    names = ["DejaVu Sans", "Noto Sans CJK SC", "Noto Sans CJK JP", "WenQuanYi Zen Hei", "Liberation Sans",
             "Droid Sans Fallback", "Source Han Sans CN"]
    assert cjk_families(names) == ["Droid Sans Fallback", "Noto Sans CJK JP", "Noto Sans CJK SC",
                                   "Source Han Sans CN", "WenQuanYi Zen Hei"]
    assert cjk_families(["DejaVu Sans", "Liberation Sans"]) == []


def test_chinese_label_has_no_missing_glyphs(tmp_path):
    from matplotlib import font_manager

    if not cjk_families(f.name for f in font_manager.fontManager.ttflist):
        pytest.skip("no CJK font installed (e.g. apt-get install fonts-noto-cjk): nothing to fall back to")
    from glotbench.plots._mpl import pyplot, save

    plt = pyplot()
    fig, ax = plt.subplots()
    ax.set_title("中文简体 SimpleQA: 北京")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        save(fig, tmp_path / "cjk.png")
    assert not [w for w in caught if "missing from font" in str(w.message)]


def test_png_without_a_cjk_font_says_once_how_to_get_one(tmp_path, capsys, monkeypatch):
    """With only DejaVu Sans (as on a machine without CJK fonts), saving a PNG with Chinese labels
    prints one line naming fonts-noto-cjk, however many figures and glyphs, and no matplotlib
    "Glyph ... missing" warning escapes."""
    import matplotlib

    from glotbench.plots import _mpl
    from glotbench.plots._mpl import FONT_HINT, pyplot, save

    plt = pyplot()
    monkeypatch.setitem(matplotlib.rcParams, "font.family", ["DejaVu Sans"])
    monkeypatch.setattr(_mpl, "_hinted", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in range(2):
            fig, ax = plt.subplots()
            ax.set_title(f"中文简体 SimpleQA: 北京 {k}")
            ax.set_xticks([0, 1], ["自然与自然科学", "Монгол хэл"])
            save(fig, tmp_path / f"cjk{k}.png")
    assert not [w for w in caught if "missing from font" in str(w.message)]
    err = capsys.readouterr().err
    assert err.count(FONT_HINT) == 1, err
    assert "fonts-noto-cjk" in FONT_HINT
    # Latin, Cyrillic and Hungarian letters are in DejaVu Sans: nothing to say
    monkeypatch.setattr(_mpl, "_hinted", False)
    fig, ax = plt.subplots()
    ax.set_title("Монгол хэл · árvíztűrő tükörfúrógép")
    save(fig, tmp_path / "latin.png")
    assert FONT_HINT not in capsys.readouterr().err


def test_report_svg_keeps_chinese_text_as_text_nodes_escaped():
    """The report's SVG charts keep labels as <text> (the browser's fonts draw them), escaped."""
    import xml.etree.ElementTree as ET

    from glotbench.report.plots import grouped_hbar, slice_bars

    groups = ["自然与自然科学", "Монгол хэл", "<img src=x onerror=alert(1)>"]
    series = [("model A", "#4C72B0", [(0.5, 0.4, 0.6), (0.7, 0.6, 0.8), (0.2, 0.1, 0.3)])]
    for svg in (grouped_hbar(groups, series, "accuracy"), slice_bars("primary_category", groups, series, "accuracy", [3, 4, 5])):
        root = ET.fromstring(svg)  # well-formed XML: the hostile label is escaped, not markup
        texts = ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]
        joined = "\n".join(texts)
        for g in groups:
            assert g in joined, (g, texts)
        assert "<img" not in svg
        assert "sans-serif" in svg


def _overlaps(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_summary_chart_legend_covers_no_value_label():
    """The overview chart's legend sits beside the axes: no bar's value label lies under it, even
    when the bars reach the right edge (values near 1)."""
    from glotbench.report.plots import grouped_hbar_figure

    groups = ["chinese_simpleqa", "mm_eval.knowledge", "hulu.cola", "hu_simpleqa"]
    series = [(f"model {k}", c, [(0.5, 0.4, 0.6), (0.95, 0.9, 0.99), (0.99, 0.97, 1.0), (0.97, 0.9, 1.0)])
              for k, c in enumerate(["#4C72B0", "#DD8452", "#55A868"])]
    fig = grouped_hbar_figure(groups, series, "headline metric")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    legend = ax.get_legend().get_window_extent(renderer)
    labels = [t for t in ax.texts if t.get_text().startswith("0.")]
    assert len(labels) == 12
    covered = [t.get_text() for t in labels if _overlaps(t.get_window_extent(renderer), legend)]
    assert not covered, covered
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_reliability_legend_says_ece_as_the_table_does():
    """The reliability PNG's legend prints ECE 0.550 (a fraction, 3 decimals), as the results table
    and the console line do, not ECE 55.0."""
    from glotbench.plots.reliability import ece_label, reliability_figure

    rows = [{"lo": 0.0, "hi": 0.5, "count": 4, "mean_confidence": 0.3, "accuracy": 0.25},
            {"lo": 0.5, "hi": 1.0, "count": 6, "mean_confidence": 0.9, "accuracy": 0.5}]
    fig = reliability_figure({"model-a": rows}, ece={"model-a": 0.55})
    texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "model-a (ECE 0.550)" in texts, texts
    assert ece_label(0.55) == "0.550" and ece_label(float("nan")) == "n/a"
    import matplotlib.pyplot as plt

    plt.close(fig)
