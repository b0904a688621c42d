"""Chinese SimpleQA's analyses over finished runs (reads results.json and the journal; no model calls):

* ``glotbench analyze option-order RUN`` (App. C): the accuracy of ``T.mc``, ``T.mc_shuffled`` and
  the open-ended ``T`` on the same items, and the drops between them;
* ``glotbench analyze items RUN...`` (App. D, I): accuracy per answer type per run (heuristic type,
  :mod:`glotbench.benchmarks.factuality.answer_types`) and per-item difficulty across the runs (the share of
  runs that got the item right; items no run got right listed first).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from glotbench.cli.analyze_cmd import analyze_app, load_run_records
from glotbench.cli.option_groups import Flags, options
from glotbench.errors import DataError


def _results(run_dir: Path) -> dict:
    from glotbench.output.run_records import read_results

    return read_results(run_dir)


def _value(entry: dict, names: tuple[str, ...]) -> float | None:
    for n in names:
        m = (entry.get("metrics") or {}).get(n)
        if m and m.get("value") is not None:
            return float(m["value"])
    return None


OPEN_METRICS = ("factuality_co", "accuracy")


def option_order_rows(results: dict) -> list[dict]:
    """One row per base task that has an ``.mc`` and/or ``.mc_shuffled`` variant in the run."""
    tasks = results.get("tasks") or {}
    bases = sorted({n.rsplit(".", 1)[0] for n in tasks if n.endswith((".mc", ".mc_shuffled"))})
    rows = []
    for b in bases:
        mc = _value(tasks.get(f"{b}.mc", {}), ("accuracy",))
        sh = _value(tasks.get(f"{b}.mc_shuffled", {}), ("accuracy",))
        op = _value(tasks.get(b, {}), OPEN_METRICS)
        names = (("mc", f"{b}.mc"), ("mc_shuffled", f"{b}.mc_shuffled"), ("open", b))
        n = {k: (tasks.get(t) or {}).get("n_scored") for k, t in names}
        # the open-ended CO is over the items the judge graded (judge errors are out of its denominator)
        graded = (((tasks.get(b) or {}).get("factuality") or {}).get("overall") or {}).get("n_gradeable")
        if graded is not None:
            n["open"] = graded
        status = {k: (tasks.get(t) or {}).get("status") for k, t in names if (tasks.get(t) or {}).get("status") not in (None, "ok")}
        rows.append({"task": b, "mc": mc, "mc_shuffled": sh, "open": op, "n": n, "status": status,
                     "drop_shuffle": None if mc is None or sh is None else mc - sh,
                     "drop_open": None if mc is None or op is None else mc - op})
    return rows


def _p(x) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


@analyze_app.command("option-order")
def option_order(run_dir: Path = typer.Argument(..., help="A run holding T.mc, T.mc_shuffled and T (open-ended).")) -> None:
    """Multiple choice vs shuffled options vs open-ended accuracy and the drops (Chinese SimpleQA App. C)."""
    rows = option_order_rows(_results(run_dir))
    if not rows:
        raise DataError(f"{run_dir}: no T.mc / T.mc_shuffled task in this run (run e.g. --tasks "
                        "chinese_simpleqa.mc,chinese_simpleqa.mc_shuffled,chinese_simpleqa)")
    t = Table(title="Option-order analysis (Chinese SimpleQA App. C) · accuracy in %")
    for col in ("task", "MC", "MC shuffled", "open-ended", "drop MC→shuffled", "drop MC→open", "items (MC/shuffled/graded)"):
        t.add_column(col, justify="left" if col == "task" else "right")
    for r in rows:
        t.add_row(r["task"], _p(r["mc"]), _p(r["mc_shuffled"]), _p(r["open"]), _p(r["drop_shuffle"]), _p(r["drop_open"]),
                  "/".join(str(r["n"][k] if r["n"][k] is not None else "-") for k in ("mc", "mc_shuffled", "open")))
    console = Console(width=None if sys.stdout.isatty() else 160)
    console.print(t)
    for r in rows:
        for k, st in r["status"].items():
            console.print(f"{r['task']} ({k}): status {st} in results.json (see its unparseable / judge-error counts); "
                          "this accuracy is not a valid score", markup=False)
    (run_dir / "option_order.json").write_text(json.dumps(rows, ensure_ascii=False, indent=2), encoding="utf-8")


# ---------------------------------------------------------------- answer types and item difficulty

def item_outcomes(run_dir: Path) -> dict[str, dict[str, dict]]:
    """task -> sample_id -> {"correct": 0/1/None, "question", "gold"} for one run."""
    out: dict[str, dict[str, dict]] = defaultdict(dict)
    for rec in load_run_records(run_dir):
        v = rec.value_map
        c = next((v[k] for k in ("correct", "exact_match", "question_correct") if v.get(k) is not None), None)
        if c is None and isinstance(rec.pred, str):
            c = 1.0 if rec.pred.upper() == "CORRECT" else 0.0
        prompt = rec.prompt
        question = ""
        if isinstance(prompt, list):
            users = [m.get("content", "") for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
            question = users[-1] if users else ""
        elif prompt:
            question = str(prompt)
        out[rec.task][rec.id] = {"correct": c, "question": question, "gold": rec.gold}
    return out


def answer_type_table(runs: dict[str, dict[str, dict[str, dict]]], task: str) -> tuple[list[str], dict[str, dict[str, tuple[int, int]]]]:
    from glotbench.benchmarks.factuality.answer_types import answer_type

    types: dict[str, dict[str, tuple[int, int]]] = defaultdict(dict)
    for run, tasks in runs.items():
        acc: dict[str, list[float]] = defaultdict(list)
        for item in tasks.get(task, {}).values():
            if item["correct"] is None:
                continue
            acc[answer_type(item["question"], str(item["gold"]))].append(item["correct"])
        for t, vals in acc.items():
            types[t][run] = (int(sum(vals)), len(vals))
    return list(runs), dict(types)


def _cell(right_of: tuple[int, int] | None) -> str:
    if not right_of or not right_of[1]:
        return "-"
    c, n = right_of
    return f"{100 * c / n:.1f} ({c}/{n})"


@analyze_app.command("items")
@options((Flags, "task"), about={"task": "the task to read (default: every task all runs share)."})
def items(
    run_dirs: list[Path] = typer.Argument(..., help="Finished runs of the same task(s), one per model."),
    top: int = typer.Option(15, "--top", help="How many of the hardest items to list."),
    *, task: str | None = None,
) -> None:
    """Accuracy per answer type per run (App. D) and per-item difficulty across runs (App. I)."""
    runs = {str(d): item_outcomes(d) for d in run_dirs}
    shared = set.intersection(*(set(t) for t in runs.values())) if runs else set()
    names = [task] if task else sorted(shared)
    if not names or (task and task not in shared):
        raise DataError(f"no task shared by all runs{' named ' + task if task else ''}")
    con = Console(width=None if sys.stdout.isatty() else 160)
    report: dict = {}
    for name in names:
        run_names, types = answer_type_table(runs, name)
        t = Table(title=f"{name} · accuracy by answer type (heuristic type; App. D) · % (right/items)")
        t.add_column("answer type")
        for r in run_names:
            t.add_column(Path(r).name, justify="right")
        for typ in sorted(types):
            t.add_row(typ, *[_cell(types[typ].get(r)) for r in run_names])
        con.print(t)
        # difficulty: share of runs right, over items every run scored
        ids = set.intersection(*(set(k for k, v in tasks.get(name, {}).items() if v["correct"] is not None) for tasks in runs.values()))
        diff = []
        for sid in ids:
            vals = [runs[r][name][sid]["correct"] for r in run_names]
            first = runs[run_names[0]][name][sid]
            diff.append({"id": sid, "solved_by": sum(vals) / len(vals), "gold": first["gold"], "question": first["question"][-80:]})
        diff.sort(key=lambda d: (d["solved_by"], d["id"]))
        buckets = defaultdict(int)
        for d in diff:
            buckets[d["solved_by"]] += 1
        t = Table(title=f"{name} · per-item difficulty across {len(run_names)} run(s) (App. I): share of runs right")
        t.add_column("share of runs right", justify="right")
        t.add_column("items", justify="right")
        for share in sorted(buckets):
            t.add_row(f"{100 * share:.0f}%", str(buckets[share]))
        con.print(t)
        t = Table(title=f"{name} · the {min(top, len(diff))} hardest items")
        for col in ("id", "share right", "gold", "question (end)"):
            t.add_column(col)
        for d in diff[:top]:
            t.add_row(d["id"], f"{100 * d['solved_by']:.0f}%", str(d["gold"]), d["question"])
        con.print(t)
        report[name] = {"answer_types": {k: {r: list(v) for r, v in d.items()} for k, d in types.items()}, "difficulty": diff}
    out = Path(run_dirs[0]) / "items_analysis.json"
    out.write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
    con.print(f"report: {out}", soft_wrap=True)
