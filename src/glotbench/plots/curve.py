"""Accuracy@k curve for Best-of-N (Chinese SimpleQA figure 5, right)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from glotbench.plots._mpl import pyplot, save


def save_accuracy_at_k(
    curves: Mapping[str, Sequence[float]] | Sequence[float],
    path: str | Path,
    title: str = "Best-of-N accuracy",
) -> Path:
    """``curves``: ``{label: [acc@1, ..., acc@N]}`` (fractions) or one list. Returns the PNG path."""
    if not isinstance(curves, Mapping):
        curves = {"model": curves}
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    longest = 1
    for label, ys in curves.items():
        ks = list(range(1, len(ys) + 1))
        longest = max(longest, len(ys))
        ax.plot(ks, [100 * y for y in ys], marker="o" if len(ys) <= 20 else None, ms=3, lw=1.6, label=label)
    if longest > 20:
        from matplotlib.ticker import FixedLocator, NullFormatter, ScalarFormatter

        ax.set_xscale("log")
        ticks = [t for t in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000) if t <= longest]
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
    else:
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # k is a count: no 1.5 ticks
    ax.set_xlim((1, longest) if longest > 1 else (0.5, 1.5))
    ax.set_ylim(0, 102)  # a curve that reaches 100% stays visible
    ax.set_xlabel("number of answers per question (k)")
    ax.set_ylabel("accuracy@k (%)")
    ax.set_title(title)
    ax.grid(alpha=0.3, which="both")
    ax.legend(loc="lower right", fontsize=8)
    return save(fig, path)
