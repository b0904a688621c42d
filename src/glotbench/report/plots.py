"""Report plots as inline SVG strings (matplotlib, Agg backend). Text stays SVG ``<text>``
(``svg.fonttype = 'none'``, XML-escaped by matplotlib) with a generic ``sans-serif`` fallback, so
the browser draws Chinese or Mongolian labels with its own fonts; drawn as paths, a label needed a
matplotlib font with those glyphs on the machine that wrote the report and showed boxes without one."""

from __future__ import annotations

import io
import itertools
import math
import re
import unicodedata

from glotbench.plots._mpl import missing_glyphs, pyplot

PALETTE = ["#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C", "#CCB974", "#64B5CD"]
OUTCOME_COLORS = {"correct": "#55A868", "partial": "#C9D66B", "wrong": "#C44E52", "not_attempted": "#DD8452",
                  "unparseable": "#9A9A9A", "error": "#3B3B3B"}
_salt = itertools.count()


def model_color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def to_svg(fig) -> str:
    plt = pyplot()
    # A distinct hash salt per figure keeps clip-path ids unique when many SVGs share one page.
    with plt.rc_context({"svg.hashsalt": f"glotbench-{next(_salt)}", "svg.fonttype": "none"}), missing_glyphs(hint=False):
        buf = io.StringIO()  # text as text: layout measures with matplotlib's fonts, the browser draws with its own
        fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    svg = _generic_fallback(buf.getvalue())
    svg = svg[svg.find("<svg"):]
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.DOTALL)  # matplotlib writes each label as a comment
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.DOTALL)
    # scale with the page: keep the viewBox, let CSS size it
    svg = re.sub(r'(<svg[^>]*?)\swidth="([\d.]+)pt"\sheight="([\d.]+)pt"', r'\1 style="max-width:\2pt;width:100%;height:auto"', svg, count=1)
    return svg


def _generic_fallback(svg: str) -> str:
    """Each ``font-family`` list ends in ``sans-serif``, so a browser without DejaVu Sans (or with
    the CJK face elsewhere) still picks a face that has the glyphs."""
    return re.sub(r"(font-family:\s*)([^;\"]+?)(\s*[;\"])",
                  lambda m: m.group(0) if "sans-serif" in m.group(2) else f"{m.group(1)}{m.group(2)}, sans-serif{m.group(3)}",
                  svg)


def display_width(text: str) -> int:
    """Columns ``text`` takes in a monospace sense: a wide (CJK) character counts 2."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in str(text))


def _ok(x) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x))


def _style(ax) -> None:
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.grid(axis="x", alpha=0.25)
    ax.set_axisbelow(True)


def _group_bars(vals: list, k: int, n_s: int, size: float) -> tuple[list, list, list, list]:
    """Series ``k`` of ``n_s`` in a grouped bar chart: bar positions (group index, shifted within
    the group by bar ``size``), values, and the lower/upper whisker lengths from the CI
    (0 where a bound is missing). Groups with no value are left out."""
    pos, heights, err_lo, err_hi = [], [], [], []
    for g, v in enumerate(vals):
        if v is None or not _ok(v[0]):
            continue
        val, lo, hi = v
        pos.append(g + (k - (n_s - 1) / 2) * size)
        heights.append(val)
        err_lo.append(max(0.0, val - lo) if _ok(lo) else 0.0)
        err_hi.append(max(0.0, hi - val) if _ok(hi) else 0.0)
    return pos, heights, err_lo, err_hi


def grouped_hbar(groups: list[str], series: list[tuple[str, str, list]], xlabel: str, title: str = "",
                 xmax: float | None = 1.0) -> str:
    """Horizontal grouped bars. ``series`` = [(name, color, [(value, lo, hi) or None per group])]."""
    return to_svg(grouped_hbar_figure(groups, series, xlabel, title, xmax))


def grouped_hbar_figure(groups: list[str], series: list[tuple[str, str, list]], xlabel: str, title: str = "",
                        xmax: float | None = 1.0):
    """The figure of :func:`grouped_hbar` (its legend sits right of the axes)."""
    plt = pyplot()
    n_s = max(1, len(series))
    height = 0.8 / n_s
    fig, ax = plt.subplots(figsize=(7.5, max(1.6, 0.28 * len(groups) * n_s + 0.9)))
    for k, (name, color, vals) in enumerate(series):
        ys, xs, err_lo, err_hi = _group_bars(vals, k, n_s, height)
        ax.barh(ys, xs, height=height * 0.92, color=color, label=name, xerr=[err_lo, err_hi],
                error_kw={"elinewidth": 1, "capsize": 2, "ecolor": "#333"})
        for y, x, eh in zip(ys, xs, err_hi):
            ax.text(x + eh + 0.01 * (xmax or max(xs + [1])), y, f"{x:.3f}", va="center", fontsize=7, color="#333")
    ax.set_yticks(range(len(groups)))
    ax.set_yticklabels(groups, fontsize=8)
    ax.invert_yaxis()
    if xmax is not None:
        ax.set_xlim(0, xmax * 1.12)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.tick_params(axis="x", labelsize=7)
    if title:
        ax.set_title(title, fontsize=9, loc="left")
    if len(series) > 1:  # beside the axes, never over a bar's value label
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, borderaxespad=0)
    _style(ax)
    return fig


def outcome_bars(models: list[str], counts: list[dict[str, int]]) -> str:
    """One stacked bar per model: correct / partial / wrong / not attempted / unparseable / error, as shares."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 0.3 * len(models) + 0.6))
    for i, c in enumerate(counts):
        total = sum(c.values()) or 1
        left = 0.0
        for name, color in OUTCOME_COLORS.items():
            n = c.get(name, 0)
            if not n:
                continue
            w = n / total
            shown = name.replace("_", " ")
            ax.barh(i, w, left=left, color=color, height=0.7, label=shown if shown not in ax.get_legend_handles_labels()[1] else None)
            if w > 0.06:
                ax.text(left + w / 2, i, str(n), ha="center", va="center", fontsize=7,
                        color="white" if name in ("wrong", "error", "correct") else "#222")
            left += w
    ax.set_yticks(range(len(models)))
    ax.set_yticklabels(models, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of items", fontsize=8)
    ax.tick_params(axis="x", labelsize=7)
    ax.legend(fontsize=7, ncol=6, loc="lower right", bbox_to_anchor=(1.0, 1.0), frameon=False)
    _style(ax)
    return to_svg(fig)


def slice_bars(field: str, values: list[str], series: list[tuple[str, str, list]], metric: str,
               ns: list[int] | None = None) -> str:
    """Vertical grouped bars per slice value with CI whiskers; horizontal with many values or long
    names (``人文与社会科学`` under a bar ran into its neighbours' names once the browser drew it)."""
    if len(values) > 12 or max((display_width(v) for v in values), default=0) > 10:
        labels = [f"{v} (n={n})" for v, n in zip(values, ns)] if ns else values
        return grouped_hbar(labels, series, metric, title=f"by {field}")
    plt = pyplot()
    n_s = max(1, len(series))
    width = 0.8 / n_s
    fig, ax = plt.subplots(figsize=(max(4.0, 0.55 * len(values) * n_s + 1.5), 2.8))
    for k, (name, color, vals) in enumerate(series):
        xs, ys, lo_e, hi_e = _group_bars(vals, k, n_s, width)
        ax.bar(xs, ys, width=width * 0.92, color=color, label=name, yerr=[lo_e, hi_e],
               error_kw={"elinewidth": 1, "capsize": 2, "ecolor": "#333"})
    labels = [f"{v}\nn={n}" for v, n in zip(values, ns)] if ns else values
    ax.set_xticks(range(len(values)))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(metric, fontsize=8)
    ax.set_xlabel(field, fontsize=8)
    ax.tick_params(axis="y", labelsize=7)
    if len(series) > 1:  # beside the axes, never over a bar
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, borderaxespad=0)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.grid(axis="y", alpha=0.25)
    ax.set_axisbelow(True)
    return to_svg(fig)
