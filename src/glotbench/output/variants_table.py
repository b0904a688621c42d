"""The table a ``run --prompt-variants`` prints: per task, each prompt's score and the spread across
them (results.json ``prompt_variants``), every number with its 95% item-resampled interval."""

from __future__ import annotations

import math

from rich.table import Table


def _ci(x, ci) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if not ci or any(v is None or (isinstance(v, float) and math.isnan(v)) for v in ci):
        return f"{x:.3f}"
    return f"{x:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def variant_tables(results: dict) -> list:
    """One rich Table per task with prompt variants, and the notes (a metric without a spread)."""
    out: list = []
    for base, block in (results.get("prompt_variants") or {}).items():
        for m, s in block.get("metrics", {}).items():
            t = Table(title=f"{base}: {m} over {len(s['variants'])} prompts ({s['n_items']} items scored by every "
                            f"prompt; 95% intervals over {s['n_resamples']} item resamples; headline: {block['headline']})")
            t.add_column("prompt", justify="left")
            t.add_column(m, justify="right")
            for name, score, ci in zip(s["variants"], s["scores"], s["score_ci"]):
                t.add_row(name + (" (headline)" if name == block["headline"] else ""), _ci(score, ci))
            for key in ("mean", "min", "max", "std"):
                t.add_row(f"[bold]{key}[/]", _ci(s[key], s[f"{key}_ci"]))
            t.add_row(f"[bold]best[/] ({s['best']})", _ci(s["best_score"], s["best_ci"]))
            out.append(t)
        out += [f"{base}: {n}" for n in block.get("notes", [])]
    return out
