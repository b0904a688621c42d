"""One place that imports matplotlib with the non-interactive Agg backend."""

from __future__ import annotations

from pathlib import Path


def pyplot():
    from glotbench.extras import import_from

    matplotlib = import_from("plots", "matplotlib", "plotting (glotbench report, factuality plots)")

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def save(fig, path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(p, dpi=120, bbox_inches="tight")
    pyplot().close(fig)
    return p
