"""The console results table."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text


def unclipped(table: Table) -> Table:
    """Let every cell wrap (long words fold) instead of ending in "…" when the terminal is narrow:
    task and model names must stay whole, in 80 columns as in a pipe."""
    for col in table.columns:
        col.overflow = "fold"
    return table


def _fmt(metric: dict, definition: dict | None = None) -> str:
    v = metric.get("value")
    if v is None:
        return "n/a"
    f = (definition or {}).get("format") or ".3f"  # the metric's declared display format
    lo, hi = metric.get("ci95") or [None, None]
    ci = f" [{lo:{f}}, {hi:{f}}]" if lo is not None and hi is not None else ""
    return f"{v:{f}}{ci}"


def _flag(t: dict) -> str:
    """The flag cell: unparseable share, and data that differs from its source."""
    return " ".join(x for x in (t.get("flag") or "", "data differs" if t.get("data_differs") else "") if x)


def results_table(results: dict, title: str = "") -> Table:
    table = Table(title=title or None, show_lines=False)
    for col in ("task", "lang", "metric", "value [95% CI]", "n", "unparseable", "errors", "flag", "prompt"):
        table.add_column(col, justify="right" if col in ("n", "unparseable", "errors") else "left")
    for name, t in results["tasks"].items():
        for i, (mname, m) in enumerate(t["metrics"].items()):
            first = i == 0
            table.add_row(
                name if first else "", t["language"] if first else "", mname,
                _fmt(m, (t.get("metric_definitions") or {}).get(mname)),
                str(t["n_scored"]) if first else "", str(t["n_unparseable"]) if first else "",
                str(t["n_errors"]) if first else "", _flag(t) if first else "",
                f"v{t['version']}·{t['prompt_hash']}" if first else "",
            )
    return table


NOT_RECORDED = "is not in the recorded answers"  # the recorded-answers backend's per-item error (models/recorded.py)


def not_recorded_counts(errors: list[dict]) -> dict[str, int]:
    """Per task, how many items the recorded-answers file did not hold (distinct item ids)."""
    ids: dict[str, set] = {}
    for e in errors:
        if NOT_RECORDED in str(e.get("error") or "") and e.get("sample_id") is not None:
            ids.setdefault(str(e.get("task")), set()).add(e["sample_id"])
    return {t: len(v) for t, v in ids.items()}


def _error_notes(name: str, n_errors: int, results: dict) -> list[str]:
    """Why a task's items are unscored: items a recorded-answers file does not hold are not failures
    of a model call, so they are counted apart from the requests that failed after retries."""
    stored = results.get("not_recorded")  # counted over the whole journal (results' "errors" keeps the last 50)
    n = stored.get(name, 0) if isinstance(stored, dict) else not_recorded_counts(results.get("errors") or []).get(name, 0)
    n_absent = min(n, n_errors)
    out = []
    if n_absent:
        out.append(f"{name}: {n_absent} item(s) not in the recorded answers, not scored")
    if n_errors - n_absent:
        out.append(f"{name}: {n_errors - n_absent} item(s) failed after retries and are excluded from the score "
                   f"(see errors in results.json)")
    return out


def compact_results_table(results: dict, title: str = "") -> Table:
    """The results for a narrow terminal (80 columns): one row per task with its counts, then one
    indented row per metric; names never wrap (the name column is as wide as the longest name),
    the counts and values wrap at spaces."""
    table = Table(title=title or None, show_lines=False, box=box.SIMPLE_HEAD, pad_edge=False)
    names = [n for n in results["tasks"]] + [f"  {m}" for t in results["tasks"].values() for m in t["metrics"]]
    table.add_column("task / metric", no_wrap=True, min_width=max(map(len, names), default=4))
    table.add_column("value [95% CI] · counts", overflow="fold")
    for name, t in results["tasks"].items():
        counts = (f"{t['language']} · n {t['n_scored']} · unparseable {t['n_unparseable']} · errors {t['n_errors']}"
                  + (f" · {t['flag']}" if t["flag"] else "") + f" · prompt v{t['version']}·{t['prompt_hash']}")
        table.add_row(Text(name, style="bold"), Text(counts, style="dim"))
        for mname, m in t["metrics"].items():
            table.add_row(f"  {mname}", _fmt(m, (t.get("metric_definitions") or {}).get(mname)))
    return table


def fitting_results_table(results: dict, console: Console, title: str = "") -> Table:
    """The full results table when its words fit the console's width, else :func:`compact_results_table`
    (so a task or metric name is never broken mid-word)."""
    wide = unclipped(results_table(results, title=title))
    return wide if _words_width(wide) <= console.width else compact_results_table(results, title=title)


def _words_width(table: Table) -> int:
    """The narrowest width at which every column holds its longest word (header or cell) whole:
    each column's longest word plus its padding (2), plus the borders (columns + 1)."""
    total = len(table.columns) + 1
    for col in table.columns:
        words = [w for cell in [col.header, *col._cells] for w in str(getattr(cell, "plain", cell)).split()]
        total += max(map(len, words), default=1) + 2
    return total


def print_results(results: dict, console: Console | None = None) -> None:
    console = console or Console()
    console.print(fitting_results_table(results, console, title=f"{results['model']['model_id']}  ·  run {results['fingerprint']}"))
    if results.get("note"):
        console.print(f"note: {results['note']}", markup=False)
    notes = []
    for name, t in results["tasks"].items():
        by = t.get("unparseable_by")
        by = f" by {by}" if by and by != "extractor" else ""  # the headline's own parse rule
        if t["status"] == "flagged":
            notes.append(f"* {name}: {t['unparseable_rate']:.0%} of answers unparseable{by} (over 20%)")
        elif t["status"] == "invalid":
            notes.append(f"invalid {name}: {t['unparseable_rate']:.0%} of answers unparseable{by} (over 50%): score not valid")
        elif t["status"] == "failed":
            notes.append(f"failed {name}: every one of its {t['n_errors']} item(s) failed; no score")
        elif t["status"] == "incomplete":
            notes.append(f"incomplete {name}: {t['n_scored'] + t['n_errors']}/{t['n_items']} items done")
        if t["n_errors"]:
            notes.extend(_error_notes(name, t["n_errors"], results))
    for name, t in results["tasks"].items():
        if t.get("data_differs"):
            notes.append(f"{name}: {t['data_differs']} (run with --set allow_modified_data=true): not a score on the "
                         "published data")
    for name, why in (results.get("skipped_tasks") or {}).items():
        kind = "cannot load" if why.startswith("cannot load: ") else "data missing"
        notes.append(f"{kind}, not run: {name}: {why.removeprefix('cannot load: ')}")
    for n in notes:
        console.print(n, style="yellow")
    from glotbench.output.variants_table import variant_tables

    for table in variant_tables(results):  # run --prompt-variants: each prompt's score and the spread
        console.print(table, style="yellow" if isinstance(table, str) else None)
    from glotbench.output.hooks import extra_tables

    for table in extra_tables(results):  # benchmark tables, contributed through hooks
        console.print(table)
    for name, t in results["tasks"].items():
        line = strict_disagreement_line(name, t.get("metrics") or {})
        if line:
            console.print(line, style="yellow", soft_wrap=True)
    out_dir = (results.get("run") or {}).get("output_dir")
    for name, t in results["tasks"].items():
        if t.get("calibration"):
            console.print(calibration_line(name, t["calibration"], out_dir), soft_wrap=True)
        if t.get("ll_calibration"):
            console.print(ll_calibration_line(name, t["ll_calibration"], out_dir), soft_wrap=True)
        if t.get("best_of_n"):
            console.print(best_of_n_line(name, t["best_of_n"], out_dir), soft_wrap=True)


def _plot_path(name: str, out_dir: str | None) -> str:
    from pathlib import Path

    return str(Path(out_dir) / name) if out_dir else name


def best_of_n_line(task: str, bon: dict, out_dir: str | None = None) -> str:
    """One line for a Best-of-N task: accuracy@k for k = 1..N (first k answers; unbiased pass@k) and the plot."""
    first = bon.get("accuracy_at_k") or []
    unbiased = bon.get("accuracy_at_k_unbiased") or []
    cells = " ".join(f"@{k} {_num(v, '{:.3f}')}" for k, v in enumerate(first, 1))
    line = f"{task}: Best-of-{bon.get('n')} accuracy@k (first k answers, {bon.get('n_items', 0)} items): {cells}"
    if unbiased:
        line += " · unbiased pass@k: " + " ".join(f"@{k} {_num(v, '{:.3f}')}" for k, v in enumerate(unbiased, 1))
    if bon.get("n_items_short"):
        line += f" ({bon['n_items_short']} item(s) with fewer answers left out)"
    if bon.get("plot"):
        line += f" · plot: {_plot_path(bon['plot'], out_dir)}"
    return line


def _num(x, pattern: str) -> str:
    return "n/a" if x is None or (isinstance(x, float) and x != x) else pattern.format(x)


def calibration_line(task: str, cal: dict, out_dir: str | None = None) -> str:
    """One line for a task's stated-confidence calibration (ECE, Brier, confidence vs accuracy)."""
    left_out = [f"{cal[k]} {label}" for k, label in (("unparseable_confidence", "without a readable confidence"),
                                                     ("judge_error", "judge errors")) if cal.get(k)]
    line = (f"{task}: calibration of stated confidence: ECE {_num(cal.get('ece'), '{:.3f}')} · "
            f"Brier {_num(cal.get('brier'), '{:.3f}')} · mean confidence {_num(cal.get('mean_confidence'), '{:.0%}')} "
            f"vs accuracy {_num(cal.get('accuracy'), '{:.0%}')} · {cal.get('n_used', 0)} item(s) used")
    if left_out:
        line += f" ({', '.join(left_out)} left out)"
    if cal.get("plot"):
        line += f" · reliability diagram: {_plot_path(cal['plot'], out_dir)}"
    return line


def ll_calibration_line(task: str, cal: dict, out_dir: str | None = None) -> str:
    """One line for a loglikelihood task's option-probability calibration: ECE, Brier, AUROC (macro
    and per option label), and the reliability diagram."""
    per = cal.get("auroc_per_class") or {}
    cells = " ".join(f"{label} {_num((v or {}).get('value'), '{:.3f}')}" for label, v in per.items())
    line = (f"{task}: calibration of option probabilities (softmax of log-likelihoods): ECE {_num(cal.get('ece'), '{:.3f}')} · "
            f"Brier {_num(cal.get('brier_score'), '{:.3f}')} · AUROC macro {_num(cal.get('auroc_macro'), '{:.3f}')}"
            + (f" (one-vs-rest: {cells})" if cells else "")
            + f" · mean confidence {_num(cal.get('mean_confidence'), '{:.0%}')} vs accuracy "
            f"{_num(cal.get('accuracy'), '{:.0%}')} · {cal.get('n_used', 0)} item(s)")
    if cal.get("plot"):
        line += f" · reliability diagram: {_plot_path(cal['plot'], out_dir)}"
    return line


def strict_disagreement_line(task: str, metrics: dict) -> str | None:
    """A judged task whose headline CO (the benchmark's reply rule) and strict CO (glotbench's parse,
    judge errors left out) differ: say so, since an echoing judge makes the reference read CORRECT."""
    head = (metrics.get("factuality_co") or {}).get("value")
    strict_m = metrics.get("factuality_co_strict")
    if head is None or strict_m is None:
        return None
    strict = strict_m.get("value")
    if strict is not None and abs(strict - head) < 0.05:
        return None
    shown = "n/a (every judge reply unreadable)" if strict is None else f"{strict:.3f}"
    return (f"{task}: CO {head:.3f} by the benchmark's judge-reply rule but {shown} under glotbench's strict parse "
            "(factuality_co_strict): check the judge's replies (samples.jsonl, judge_reasons)")
