"""`glotbench estimate`: requests, tokens and cost of a run before making it (no model call)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Optional

from rich.console import Console
from rich.table import Table

from glotbench.cli.nouns import runs_app
from glotbench.cli.option_groups import Flags, options, setting_option
from glotbench.settings import RunSettings

# the run settings that change what a run would send (the same flags as glotbench run's): the first three
# are listed as flags, the others are this command's settings (--set NAME=VALUE, or their run flags, unlisted)
ESTIMATED = ("model", "tasks", "limit", "num_fewshot", "max_tokens", "samples",
             "mode", "split", "seed")
_SETTINGS = ESTIMATED[3:]


def _money(x: float | None, currency: str | None) -> str:
    if x is None:
        return "n/a"
    return f"{x:.4f} {currency or ''}".strip()


def _tpw(d: dict) -> str:
    v = d.get("tokens_per_word")
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.2f}"


@runs_app.command("estimate")
@options((Flags, "json_out"), settings=(RunSettings, {"only": ESTIMATED, "required": ("tasks",), "rare": _SETTINGS}))
def estimate(
    prices: Optional[Path] = setting_option(None, "--prices", help="Price YAML laid over the shipped table (see docs/comparisons.md)."),
    output_tokens: str = setting_option("max", "--output-tokens", help="Expected output per request: max (max_tokens, upper bound), answer (gold answer length, floor) or a number."),
    plain: bool = setting_option(False, "--plain", help="Count plain-completion prompts instead of chat messages."),
    *, settings: RunSettings, json_out: Optional[Path],
) -> None:
    """Count the requests, input and output tokens and the cost a run would have; no model is called.

    The run's own flags and settings say what would run (--model may also be a price-table name)."""
    from glotbench.report.estimate import estimate_run
    from glotbench.tasks.registry import resolve

    est = estimate_run(settings.model, resolve(settings.tasks), settings, prices_path=str(prices) if prices else None,
                       output_tokens=output_tokens, chat=False if plain else None)
    console = Console(width=max(Console().width, 160))
    cur = est.currency
    t = Table(title=f"Estimate for {est.model} (no model called)")
    for col in ("task", "lang", "items", "mode", "requests", "input tokens", "output tokens", "input cost", "output cost", "total"):
        t.add_column(col, justify="left" if col in ("task", "lang", "mode") else "right")
    for te in est.tasks:
        e = te.estimate
        t.add_row(te.task, te.language, str(te.n_items), te.mode, str(e.n_requests), f"{e.input_tokens:,}",
                  f"{e.output_tokens:,}", _money(e.input_cost, cur), _money(e.output_cost, cur), _money(e.total_cost, cur))
    ic = [te.estimate.input_cost for te in est.tasks]
    oc = [te.estimate.output_cost for te in est.tasks]
    t.add_row("total", "", str(sum(te.n_items for te in est.tasks)), "", str(est.n_requests), f"{est.input_tokens:,}",
              f"{est.output_tokens:,}", _money(None if None in ic else sum(ic), cur),
              _money(None if None in oc else sum(oc), cur), _money(est.total_cost, cur), style="bold")
    console.print(t)
    console.print(f"input tokens: {est.token_method}" + (" (APPROXIMATE)" if est.approximate else " (exact tokenizer)"))
    console.print(f"output tokens: {est.output_basis}")
    if est.price_source or est.price_taken:
        console.print(f"price: {est.price_name} from {est.price_source or 'the price table'}, taken {est.price_taken}")
    w = Table(title="Tokens per word per language")
    for col in ("lang", "prompt words", "prompt tokens", "prompt tokens/word", "item words", "item tokens", "item tokens/word"):
        w.add_column(col, justify="left" if col == "lang" else "right")
    for lang, d in est.per_language.items():
        p, i = d["prompt"], d["items"]
        w.add_row(lang, f"{p['words']:,}", f"{p['tokens']:,}", _tpw(p), f"{i['words']:,}", f"{i['tokens']:,}", _tpw(i))
    console.print(w)
    console.print("prompt = the whole rendered prompt (instructions included); item = the item's own text and options")
    for n in est.notes:
        console.print(f"note: {n}", style="yellow")
    if json_out:
        json_out.write_text(json.dumps(est.to_dict(), ensure_ascii=False, indent=2, default=str), encoding="utf-8")
        console.print(f"wrote {json_out}")
