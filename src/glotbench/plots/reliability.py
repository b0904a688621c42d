"""Reliability diagram: stated confidence against accuracy, one line per model (as in
Chinese SimpleQA figure 5, left), with the perfect-calibration diagonal and a count strip.
Each point sits at the bin's mean confidence; its size shows how many answers the bin holds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from glotbench.plots._mpl import pyplot, save


def ece_label(value: float | None) -> str:
    """ECE as the results table prints it: ``0.550``, ``n/a`` when missing."""
    return "n/a" if value is None or value != value else f"{value:.3f}"


def save_reliability_diagram(
    tables: Mapping[str, Sequence[Mapping[str, Any]]] | Sequence[Mapping[str, Any]],
    path: str | Path,
    title: str = "Calibration from stated confidence",
    ece: Mapping[str, float] | None = None,
    xlabel: str = "stated confidence (%)",
) -> Path:
    """``tables``: ``{label: reliability_table rows}`` (or one table). ``ece``: optional
    ``{label: ECE}`` shown in the legend. Empty bins are skipped. Returns the PNG path."""
    return save(reliability_figure(tables, title, ece, xlabel), path)


def reliability_figure(
    tables: Mapping[str, Sequence[Mapping[str, Any]]] | Sequence[Mapping[str, Any]],
    title: str = "Calibration from stated confidence",
    ece: Mapping[str, float] | None = None,
    xlabel: str = "stated confidence (%)",
):
    """The figure :func:`save_reliability_diagram` writes."""
    if not isinstance(tables, Mapping):
        tables = {"model": tables}
    plt = pyplot()
    fig, (ax, axc) = plt.subplots(
        2, 1, figsize=(6.4, 6.6), sharex=True, gridspec_kw={"height_ratios": [4, 1.3], "hspace": 0.08}
    )
    ax.plot([0, 100], [0, 100], ls="--", color="grey", lw=1, label="perfect calibration")
    n = len(tables)
    for k, (label, rows) in enumerate(tables.items()):
        used = [r for r in rows if r["count"]]
        xs = [100 * r["mean_confidence"] for r in used]
        ys = [100 * r["accuracy"] for r in used]
        # ECE as the results table and the console line print it (a fraction, 3 decimals)
        name = label if not ece or label not in ece else f"{label} (ECE {ece_label(ece[label])})"
        (line,) = ax.plot(xs, ys, lw=1.6, label=name)
        # Marker area follows the bin's share of answers, so sparse, noisy bins look small.
        total = sum(r["count"] for r in used) or 1
        ax.scatter(xs, ys, s=[12 + 250 * r["count"] / total for r in used], color=line.get_color(), zorder=3)
        width = 10.0 / max(n, 1) * 0.9
        centers = [100 * (r["lo"] + r["hi"]) / 2 - 5 + width * (k + 0.5) for r in rows]
        axc.bar(centers, [r["count"] for r in rows], width=width, color=line.get_color(), alpha=0.8)
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 100)
    ax.set_ylabel("accuracy (%)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    axc.set_xlabel(xlabel)
    axc.set_ylabel("answers")
    axc.set_xticks(range(0, 101, 10))
    axc.grid(alpha=0.3, axis="y")
    return fig
