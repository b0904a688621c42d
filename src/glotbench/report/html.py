"""`glotbench report`: one self-contained HTML file from one or more run directories.

Everything is inline (CSS, JS, plots as SVG), so the file opens offline and can be mailed.
Model outputs are untrusted text: the template autoescapes, and the sample records travel as
JSON inside ``<script type="application/json">`` (jinja2's ``tojson`` escapes ``<``, ``>``,
``&`` and ``'``, so ``</script>`` in an output cannot end the block) and are put on the page
with ``textContent`` only.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from pathlib import Path
from typing import Any

import jinja2

from glotbench.report import plots
from glotbench.report.items import (
    OUTCOMES,
    outcome,
    outcome_basis,
    outcome_counts,
    prompt_text,
    raw_output,
    reasoning_of,
)
from glotbench.report.runs import (
    RunData,
    load_runs,
    model_labels,
    higher_is_better,
    metric_of,
    primary_metric,
    task_names,
)

TEMPLATES = Path(__file__).parent / "templates"
MAX_FIELD_CHARS = 20_000  # one prompt / output shown in the browser is cut beyond this


def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.policies["json.dumps_kwargs"] = {"ensure_ascii": False, "sort_keys": False}
    env.filters["num"] = _num
    env.filters["pct"] = lambda x: "–" if x is None else f"{100 * x:.1f}%"
    return env


def _num(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.{digits}f}"


def _cut(s: str) -> str:
    return s if len(s) <= MAX_FIELD_CHARS else s[:MAX_FIELD_CHARS] + f"\n… [{len(s) - MAX_FIELD_CHARS} more characters]"


def _jsonish(x: Any) -> str:
    if x is None or x == {} or x == []:
        return ""
    if isinstance(x, str):
        return x
    return json.dumps(x, ensure_ascii=False, indent=1, default=str)


def _triple(metric_block: dict | None) -> tuple | None:
    if not metric_block or metric_block.get("value") is None:
        return None
    lo, hi = (list(metric_block.get("ci95") or []) + [None, None])[:2]
    return (metric_block["value"], lo, hi)


def _xmax(values: list[float]) -> float | None:
    vals = [v for v in values if v is not None]
    if not vals:
        return 1.0
    return 1.0 if max(vals) <= 1.0 and min(vals) >= 0 else None


def _outcome_caption(bases: list[str], headline: str | None) -> str:
    """What the outcome bars count, said plainly (a corpus headline is not a count of items)."""
    basis = bases[0] if len(set(bases)) == 1 else ", ".join(dict.fromkeys(bases))
    if basis == "judge grade":
        return "Outcome of every item (the judge's grade)"
    if basis == "answer = gold":
        return (f"Outcome of every item (answer = gold, per item; {headline} is a corpus metric over all items, "
                "not a share of these)")
    return f"Outcome of every item ({basis})"


def sample_rows(run_idx: int, run: RunData, tasks: dict[str, dict], max_per_task: int | None) -> list[dict]:
    rows, seen = [], {}
    headline = {t: metric_of(tr, primary_metric(tr)) for t, tr in tasks.items()}
    for s in run.samples:
        task = s.task
        if task not in tasks:
            continue
        seen[task] = seen.get(task, 0) + 1
        if max_per_task is not None and seen[task] > max_per_task:
            continue
        metric = headline[task]
        judgment = s.extra.get("judgment") if s.extra.get("judgment") is not None else s.judgments
        rows.append({
            "m": run_idx,
            "t": task,
            "id": s.id,
            "o": outcome(s, metric),
            "gold": _cut(_jsonish(s.gold)),
            "pred": "" if s.pred is None else _cut(_jsonish(s.pred)),
            "extracted": _cut(_jsonish(s.extracted)),
            "output": _cut(raw_output(s)),
            "reasoning": _cut(reasoning_of(s)),
            "prompt": _cut(prompt_text(s.prompt)),
            "judgment": _cut(_jsonish(judgment)),
            "detail": _cut(_jsonish(s.detail)),
            "values": _jsonish(s.values),
            "error": s.error or "",
            "meta": _jsonish({k: v for k, v in s.metadata_map.items() if v is not None}),
        })
    return rows


def _float_or_none(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


def human_ratings(run: RunData) -> dict[str, dict]:
    """``{task: summary}`` from the run's ``human_ratings.json`` (``build review import-ratings``): the
    agreement of human ratings with the automatic scores; only the numbers and names shown are taken
    (an unreadable file shows nothing)."""
    path = Path(run.path) / "human_ratings.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        return {}
    out = {}
    for task, e in ((data.get("tasks") or {}) if isinstance(data, dict) else {}).items():
        if not isinstance(e, dict):
            continue
        ci = e.get("ci95") if isinstance(e.get("ci95"), list) and len(e["ci95"]) == 2 else [None, None]
        out[str(task)] = {"statistic": str(e.get("statistic", "")), "kind": str(e.get("kind", "")),
                          "automatic": str(e.get("automatic", "")), "value": _float_or_none(e.get("value")),
                          "lo": _float_or_none(ci[0]), "hi": _float_or_none(ci[1]),
                          "n": int(e["n_items"]) if isinstance(e.get("n_items"), int) else None,
                          "annotators": e.get("annotators") if isinstance(e.get("annotators"), int) else None,
                          "alpha": _float_or_none(e.get("annotators_alpha"))}
    return out


def build_context(runs: list[RunData], title: str | None = None, max_samples_per_task: int | None = 2000) -> dict:
    labels = model_labels(runs)
    colors = {lab: plots.model_color(i) for i, lab in enumerate(labels)}
    tnames = task_names(runs)

    run_infos = []
    for r in runs:
        info = r.results.get("run") or {}
        run_infos.append({
            "label": r.label, "color": colors[r.label], "model_id": r.model_id, "path": str(r.path),
            "fingerprint": r.results.get("fingerprint", ""), "version": r.results.get("glotbench_version", ""),
            "elapsed_s": info.get("elapsed_s"), "sent": info.get("requests_sent"), "cached": info.get("requests_cached"),
            "failed": info.get("failed_requests"), "n_samples": len(r.samples), "note": r.results.get("note") or "",
            "settings": ", ".join(f"{k}={v}" for k, v in (r.results.get("settings") or {}).items() if v is not None),
            # run --model-meta (output/model_meta.py): size as given, yes/no flags
            "model_meta": ", ".join(f"{k}={('yes' if v else 'no') if isinstance(v, bool) else v}"
                                    for k, v in (r.results.get("model_meta") or {}).items() if k != "size_b"),
        })

    tasks_ctx = []
    overview_series: dict[str, list] = {lab: [] for lab in labels}
    by_label: dict[str, dict[str, dict]] = {}
    for r in runs:
        by_label.setdefault(r.label, {}).update(r.tasks)
    overview_vals: list[float] = []
    humans = {id(r): human_ratings(r) for r in runs}
    for tname in tnames:
        holders = [(r, r.tasks[tname]) for r in runs if tname in r.tasks]
        first = holders[0][1]
        metric_names = list(dict.fromkeys(m for _, t in holders for m in (t.get("metrics") or {})))
        headline = primary_metric(first)
        rows = []
        bases = []
        for r, t in holders:
            recs = r.samples_of(tname)
            if recs:
                bases.append(outcome_basis(recs, metric_of(t, headline)))
            rows.append({
                "label": r.label, "color": colors[r.label], "t": t,
                "metrics": [(m, (t.get("metrics") or {}).get(m)) for m in metric_names],
                "outcomes": outcome_counts(recs, metric_of(t, headline)) if recs else None,
            })
        # overview: the headline metric per model
        for lab in labels:
            t = by_label[lab].get(tname)
            trip = _triple((t.get("metrics") or {}).get(headline)) if t else None
            overview_series[lab].append(trip)
            if trip:
                overview_vals.append(trip[0])
        outcome_svg = ""
        with_outcomes = [row for row in rows if row["outcomes"]]
        if with_outcomes:
            outcome_svg = plots.outcome_bars([row["label"] for row in with_outcomes], [row["outcomes"] for row in with_outcomes])
        slices = []
        fields = list(dict.fromkeys(f for _, t in holders for f in (t.get("slices") or {})))
        for field in fields:
            values = sorted({v for _, t in holders for v in ((t.get("slices") or {}).get(field) or {})},
                            key=lambda v: (len(v), v))
            series, table = [], []
            for r, t in holders:
                sl = (t.get("slices") or {}).get(field) or {}
                series.append((r.label, colors[r.label], [_triple((sl.get(v) or {}).get("metrics", {}).get(headline)) for v in values]))
                table.append((r.label, [(sl.get(v) or {}) for v in values]))
            ns = [max(((t.get("slices") or {}).get(field) or {}).get(v, {}).get("n", 0) for _, t in holders) for v in values]
            svg = plots.slice_bars(field, values, series, headline, ns) if values else ""
            slices.append({"field": field, "slice_values": values, "svg": svg, "table": table, "metric": headline})
        tasks_ctx.append({
            "name": tname, "anchor": "task-" + "".join(ch if ch.isalnum() else "-" for ch in tname),
            "language": first.get("language", ""), "headline": headline, "metric_names": metric_names,
            "lower_better": not higher_is_better(first, headline), "counterpart": first.get("counterpart"),
            "rows": rows, "outcome_svg": outcome_svg, "slices": slices,
            "human": [(r.label, humans[id(r)][tname]) for r, _ in holders if tname in humans[id(r)]],
            "outcome_caption": _outcome_caption(bases, headline),
        })

    overview_svg = ""
    if tnames:
        overview_svg = plots.grouped_hbar(
            [f"{t['name']} ({t['headline']})" for t in tasks_ctx],
            [(lab, colors[lab], overview_series[lab]) for lab in labels],
            "score (headline metric per task, 95% bootstrap interval)", xmax=_xmax(overview_vals))

    samples = []
    for i, r in enumerate(runs):
        samples.extend(sample_rows(i, r, r.tasks, max_samples_per_task))
    truncated = any(len(r.samples_of(t)) > (max_samples_per_task or 10**12) for r in runs for t in r.tasks)

    summary = []
    for t in tasks_ctx:
        cells = []
        for lab in labels:
            tr = by_label[lab].get(t["name"])
            cells.append({"t": tr, "m": (tr.get("metrics") or {}).get(t["headline"]) if tr else None})
        summary.append({"task": t, "cells": cells})

    errors = [(r.label, e) for r in runs for e in (r.results.get("errors") or [])]
    return {
        "title": title or ("glotbench report · " + ", ".join(labels)),
        "generated": _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "runs": run_infos,
        "labels": labels,
        "models": [{"label": lab, "color": colors[lab]} for lab in labels],
        "colors": colors,
        "tasks": tasks_ctx,
        "summary": summary,
        "overview_svg": overview_svg,
        "samples": {"models": [r.label for r in runs], "colors": [colors[r.label] for r in runs],
                    "tasks": tnames, "outcomes": list(OUTCOMES), "rows": samples},
        "samples_truncated": truncated,
        "max_samples_per_task": max_samples_per_task,
        "errors": errors[:100],
        "n_errors_total": len(errors),
    }


def render_report(runs: list[RunData], title: str | None = None, max_samples_per_task: int | None = 2000) -> str:
    from glotbench.plots._mpl import pyplot

    pyplot()  # select the Agg backend before any figure
    ctx = build_context(runs, title, max_samples_per_task)
    return _env().get_template("report.html").render(**ctx)


def write_report(run_dirs: list[str | Path], out: str | Path, title: str | None = None,
                 max_samples_per_task: int | None = 2000) -> Path:
    runs = load_runs(run_dirs)
    html = render_report(runs, title, max_samples_per_task)
    p = Path(out)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(p.suffix + ".tmp")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(p)
    return p
