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
