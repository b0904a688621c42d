"""`glotbench compare`: cross-lingual gaps, rank movement, paired tests, duels and groups by model
description (``--by size``) over finished runs."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from glotbench.cli.nouns import runs_app
from glotbench.cli.option_groups import one_of, options, setting_option
from glotbench.output.table import unclipped


def fmt(x: float | None, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.{digits}f}"


def pct(x: float | None, digits: int = 1, signed: bool = False) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{100 * x:+.{digits}f}%" if signed else f"{100 * x:.{digits}f}%"


def pval(p: float | None) -> str:
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "-"
    return f"{p:.2e}" if p < 1e-3 else f"{p:.4f}"


def with_interval(x: float | None, ci: list | None, digits: int = 3) -> str:
    """``0.667 [0.500, 0.800]``: the score and the run's 95% interval, when it has one."""
    if ci is None or fmt(x, digits) == "-":
        return fmt(x, digits)
    return f"{fmt(x, digits)} [{fmt(ci[0], digits)}, {fmt(ci[1], digits)}]"


def pct_interval(x: float | None, ci: list | None, signed: bool = False) -> str:
    """``+12.3% [4.1%, 20.0%]``: a gap and its item-paired bootstrap interval, when it has one."""
    if ci is None or pct(x) == "-":
        return pct(x, signed=signed)
    return f"{pct(x, signed=signed)} [{pct(ci[0], signed=signed)}, {pct(ci[1], signed=signed)}]"


def _print_crosslingual(runs, console: Console, metric: str | None = None, n_boot: int = 1000, seed: int = 0) -> dict:
    from glotbench.report.comparisons import crosslingual_from_runs

    res = crosslingual_from_runs(runs, metric=metric, n_boot=n_boot, seed=seed)
    gaps = res.gaps
    t = Table(title="Cross-lingual gap (Czech-Bench §6.4): relative difference = (en - native) / max(en, native); "
                    "[95% bootstrap interval] of each score where the run has one; of each difference and gap: "
                    f"item-paired bootstrap over the items both tasks scored ({n_boot} resamples, seed {seed})")
    for col in ("model", "pair", "native", "counterpart", "difference", "relative diff", "items"):
        t.add_column(col, justify="left" if col in ("model", "pair") else "right")
    english_of = {p: e for p, _, e in res.pairs}
    for r in res.table.rows:
        ci_native, ci_english = res.intervals.get((r.model, r.pair), (None, None))
        bad = res.invalid.get((r.model, r.pair), (None, None))
        g = (gaps.pairs.get((r.model, r.pair)) if gaps else None) or {}
        t.add_row(r.model, f"{r.pair} vs {english_of.get(r.pair, '?')}",
                  bad[0] or with_interval(r.native, ci_native), bad[1] or with_interval(r.english, ci_english),
                  with_interval(r.difference if not math.isnan(r.difference) else None, g.get("difference_ci95")),
                  pct_interval(r.relative_gap, g.get("relative_gap_ci95"), signed=True),
                  str(g["n_items"]) if g else "-")
    console.print(unclipped(t))
    over = f"metric {metric}" if metric else "each pair's headline metrics; --metric NAME for one metric"
    s = Table(title=f"Average relative gap per model: mean of |relative diff| over {over} "
                    "(missing: pairs with a side invalid, failed or absent, left out)")
    for col in ("model", "pairs", "missing", "average relative gap", "average signed gap", "counterpart higher", "native higher"):
        s.add_column(col, justify="left" if col == "model" else "right")
    for g in res.table.models.values():
        avg = (gaps.models.get(g.model) if gaps else None) or {}
        s.add_row(g.model, str(g.n_pairs), str(g.n_missing),
                  pct_interval(g.average_relative_gap, avg.get("average_relative_gap_ci95")),
                  pct(g.average_signed_gap, signed=True), str(g.n_english_higher), str(g.n_native_higher))
    console.print(unclipped(s))
    for n in res.notes:
        console.print(f"note: {n}", style="yellow")
    return {"crosslingual": res.table.to_dict(), "pairs": res.pairs, "notes": res.notes,
            "intervals": [{"model": m, "pair": p, "native_ci95": a, "counterpart_ci95": b}
                          for (m, p), (a, b) in res.intervals.items()],
            "gap_intervals": None if gaps is None else {
                "n_resamples": gaps.n_resamples, "seed": gaps.seed, "method": "item-paired percentile bootstrap",
                "pairs": [{"model": m, "pair": p, **v} for (m, p), v in gaps.pairs.items()],
                "models": [{"model": m, **v} for m, v in gaps.models.items()]},
            "invalid": [{"model": m, "pair": p, "native": a, "counterpart": b} for (m, p), (a, b) in res.invalid.items()]}


def _print_ranks(runs, a: str, b: str, metric: str | None, style: str, console: Console,
                 published: Path | None = None) -> dict:
    from glotbench.report.comparisons import ranks_from_runs

    if published is not None:
        from glotbench.report.analysis.published import ranks_with_published, read_published

        res = ranks_with_published(runs, a, b, read_published(published, metric), metric=metric, style=style)
    else:
        res = ranks_from_runs(runs, a, b, metric=metric, style=style)
    c = res.comparison
    t = Table(title=f"Ranks: A = {a} ({res.metric_a}) vs B = {b} ({res.metric_b})")
    for col in ("rank A", "model (A order)", "score A", "rank B", "model (B order)", "score B", "movement"):
        t.add_column(col, justify="right" if col.startswith(("rank", "score")) else "left")
    by_a = sorted(c.rows, key=lambda r: (r.rank_a, r.model))
    for ra, rb in zip(by_a, c.rows):
        t.add_row(str(ra.rank_a), ra.model, fmt(ra.score_a), str(rb.rank_b), rb.model, fmt(rb.score_b), rb.movement)
    console.print(unclipped(t))
    console.print(f"Kendall's tau-b = {fmt(c.tau)} (p = {pval(c.p_value)}) · rank changed for {pct(c.share_changed, 0)} "
                  f"of {len(c.rows)} models")
    if len(res.a_tasks) > 1 or len(res.b_tasks) > 1:
        console.print(f"A tasks: {', '.join(res.a_tasks)} · B tasks: {', '.join(res.b_tasks)}")
    if c.invalid:
        console.print(f"invalid: {len(c.invalid)} model(s) with no score on a side, left out of the ranks and tau: "
                      f"{', '.join(c.invalid)}", style="yellow")
    for n in res.notes + [f"only in A: {m}" for m in c.only_in_a] + [f"only in B: {m}" for m in c.only_in_b]:
        console.print(f"note: {n}", style="yellow")
    return {"ranks": c.to_dict(), "a": a, "b": b, "a_tasks": res.a_tasks, "b_tasks": res.b_tasks, "notes": res.notes}


def _print_paired(runs, n_boot: int, seed: int, console: Console) -> dict:
    from glotbench.report.comparisons import paired_rows

    if len(runs) != 2:
        from glotbench.errors import GlotbenchError

        raise GlotbenchError(f"--paired compares exactly two runs (got {len(runs)})")
    a, b = runs
    invalid: list = []
    rows, notes = paired_rows(a, b, n_boot=n_boot, seed=seed, invalid=invalid)
    t = Table(title=f"Paired: A = {a.label} vs B = {b.label} (difference A - B, paired bootstrap 95% CI, {n_boot} resamples)")
    for col in ("task", "metric", "n", "left out", "A", "B", "A - B", "95% CI", "McNemar b/c", "p", "test"):
        t.add_column(col, justify="left" if col in ("task", "metric", "test") else "right")
    for r in rows:
        mc = f"{r.mcnemar_b}/{r.mcnemar_c}" if r.mcnemar_b is not None else "-"
        t.add_row(r.task, r.metric, str(r.n_items), str(r.n_left_out), fmt(r.score_a), fmt(r.score_b),
                  f"{r.difference:+.3f}", f"[{fmt(r.low)}, {fmt(r.high)}]", mc, pval(r.p_value), r.method or "-")
    for r in invalid:  # no number: the side's score is invalid (left out, counted in the notes)
        t.add_row(r.task, r.metric, str(r.n_items), str(r.n_left_out), "invalid" if "A" in r.invalid else "-",
                  "invalid" if "B" in r.invalid else "-", "invalid", "-", "-", "-", "left out")
    console.print(unclipped(t))
    console.print("McNemar b = items A got right and B wrong, c = the reverse; exact binomial test when b + c < 25.")
    perturbed = [(run.results.get("settings") or {}).get("perturb") for run in (a, b)]
    if any(perturbed):  # a clean run against a perturbed one (run --perturb): the drop rate
        d = Table(title=f"Performance drop rate, 1 - B/A (A {'perturbed: ' + ','.join(perturbed[0]) if perturbed[0] else 'clean'}"
                        f", B {'perturbed: ' + ','.join(perturbed[1]) if perturbed[1] else 'clean'}; item-paired bootstrap 95% CI)")
        for col in ("task", "metric", "n", "A", "B", "drop 1 - B/A [95% CI]"):
            d.add_column(col, justify="left" if col in ("task", "metric") else "right")
        for r in rows:
            d.add_row(r.task, r.metric, str(r.n_items), fmt(r.score_a), fmt(r.score_b),
                      with_interval(r.drop_rate, [r.drop_low, r.drop_high]))
        console.print(unclipped(d))
        console.print("drop: undefined (-) when A is 0, and for a metric where lower is better.")
    for n in notes:
        console.print(f"note: {n}", style="yellow")
    return {"paired": [r.to_dict() for r in rows], "invalid": [r.to_dict() for r in invalid], "a": str(a.path),
            "b": str(b.path), "notes": notes}


def _print_duels(runs, metric: str | None, alpha: float, n_boot: int, seed: int, console: Console) -> dict:
    from glotbench.report.duels import duels_from_runs

    notes: list[str] = []
    res = duels_from_runs(runs, metric=metric, alpha=alpha, n_resamples=n_boot, seed=seed, notes=notes)
    t = Table(title=f"Duels: per task, each pair of models (McNemar exact for 0/1 items, paired permutation for "
                    f"real-valued items, paired bootstrap for corpus metrics; {n_boot} resamples, seed {seed}), "
                    f"Holm-corrected over the task's pairs; won when p (Holm) < {alpha} and the score is better")
    for col in ("task", "metric", "A", "B", "score A", "score B", "n", "test", "p", "p (Holm)", "winner"):
        t.add_column(col, justify="left" if col in ("task", "metric", "A", "B", "test", "winner") else "right")
    for d in res.duels:
        t.add_row(d.task, d.metric, d.a, d.b, fmt(d.score_a), fmt(d.score_b), str(d.n_items), d.test,
                  pval(d.p_value), pval(d.p_holm), d.winner or "draw")
    for model, tasks in sorted(res.invalid.items()):
        for task in tasks:
            t.add_row(task, res.metrics.get(task, "-"), model, "-", "invalid", "-", "-", "-", "-", "-", "left out")
    console.print(unclipped(t))
    s = Table(title="Share of duels won per model, averaged over the tasks where it has a valid score "
                    "(invalid scores left out and counted)")
    for col in ("model", "tasks", "invalid", "share of duels won"):
        s.add_column(col, justify="left" if col == "model" else "right")
    models = sorted(set(res.shares) | set(res.invalid), key=lambda m: -(res.average(m) or -1))
    for m in models:
        s.add_row(m, str(len(res.shares.get(m, {}))), str(len(res.invalid.get(m, []))), pct(res.average(m)))
    console.print(unclipped(s))
    n_invalid = sum(len(v) for v in res.invalid.values())
    if n_invalid:
        notes.append(f"{n_invalid} task score(s) invalid (over 50% unparseable, or a failed task): shown as invalid, "
                     "in no duel, not averaged")
    for n in notes:
        console.print(f"note: {n}", style="yellow")
    return {**res.to_dict(), "n_resamples": n_boot, "seed": seed, "notes": notes}


def _print_groups(runs, key: str, metric: str | None, n_boot: int, seed: int, console: Console,
                  plot: Path | None) -> dict:
    from glotbench.report.model_groups import groups_from_runs

    res = groups_from_runs(runs, key, metric=metric, n_boot=n_boot, seed=seed)
    if not res.points and not res.rows and len(res.notes) >= len(runs):
        from glotbench.errors import GlotbenchError

        raise GlotbenchError(f"--by {key}: no run has {key} in its model_meta (run --model-meta {key}=... or "
                             "--model-meta-file FILE when running)")
    t = Table(title=f"Models grouped by {key} (run --model-meta): mean of the models' scores per group, [95% "
                    f"percentile bootstrap over the group's models, {n_boot} resamples, seed {seed}; none for one model]; "
                    "invalid scores left out and counted")
    for col in ("task", "metric", key, "models", "invalid", "mean [95% CI]"):
        t.add_column(col, justify="right" if col in ("models", "invalid", "mean [95% CI]") else "left")
    for r in res.rows:
        t.add_row(r.task, r.metric, r.group, str(len(r.models)), str(r.n_invalid), with_interval(r.mean, r.ci95))
    console.print(unclipped(t))
    for n in res.notes:
        console.print(f"note: {n}", style="yellow")
    if plot is not None:
        from glotbench.report.model_groups import plot_score_vs_size

        plot_score_vs_size(res.points, plot)
        console.print(f"wrote {plot}")
    return {**res.to_dict(), "n_resamples": n_boot, "seed": seed}


def _print_contamination(runs, check: str, metric: str | None, n_boot: int, seed: int, console: Console) -> dict:
    from glotbench.report.contamination_split import split_rows, to_dicts

    rows, notes = split_rows(runs, check=check, metric=metric, n_boot=n_boot, seed=seed)
    if not rows:
        from glotbench.errors import GlotbenchError

        raise GlotbenchError(f"--contamination: {notes[-1]}")
    t = Table(title=f"Clean vs contaminated items (flags of analyze contamination --run, check {check}): the score on "
                    f"each side [95% bootstrap interval over its items, {n_boot} resamples, seed {seed}], and "
                    "contaminated - clean [interval of the difference of the two sides' resampled scores]")
    for col in ("model", "task", "metric", "clean n", "clean", "contaminated n", "contaminated", "contaminated - clean",
                "unchecked", "not flagged"):
        t.add_column(col, justify="left" if col in ("model", "task", "metric") else "right")
    for r in rows:
        if r.invalid:
            t.add_row(r.model, r.task, r.metric, "-", r.invalid, "-", r.invalid, "-", "-", "-")
            continue
        diff = "-" if r.difference is None else with_interval(r.difference, r.difference_ci95)
        t.add_row(r.model, r.task, r.metric, str(r.n_clean), with_interval(r.clean, r.clean_ci95), str(r.n_contaminated),
                  with_interval(r.contaminated, r.contaminated_ci95), diff, str(r.n_unchecked), str(r.n_unflagged))
    console.print(unclipped(t))
    for n in notes:
        console.print(f"note: {n}", style="yellow")
    return {"contamination": to_dicts(rows), "check": check, "n_resamples": n_boot, "seed": seed, "notes": notes}


@runs_app.command("compare")
@options()
def compare(
    run_dirs: Optional[list[Path]] = typer.Argument(None, help="Run directories (each written by `glotbench run -o DIR`)."),
    crosslingual: bool = typer.Option(False, "--crosslingual", help="Each task vs its `counterpart` task: relative gap per model."),
    ranks: bool = typer.Option(False, "--ranks", help="Rank the models on --a and --b side by side, with movement and Kendall's tau."),
    paired: bool = typer.Option(False, "--paired", help="Two runs on the same items: paired bootstrap difference and McNemar test."),
    duels: bool = typer.Option(False, "--duels", help="Several runs (one per model): per task a test per model pair, "
                               "Holm-corrected; the share of duels won per model (docs/trust-a-number.md)."),
    alpha: float = setting_option(0.05, "--alpha", help="--duels: a duel is won when the Holm-corrected p is below this."),
    a: Optional[str] = typer.Option(None, "--a", help="--ranks: reference task or suite."),
    b: Optional[str] = typer.Option(None, "--b", help="--ranks: compared task or suite."),
    metric: Optional[str] = setting_option(None, "--metric", help="--ranks: metric to rank on; --duels: metric to duel on; --crosslingual: the one metric to "
                                         "compare (default: each task's headline metric(s); parse rates never)."),
    style: str = setting_option("arrow", "--style", help="--ranks: movement as arrow (↑2, ↓1, -) or signed (+2, -1, 0)."),
    n_boot: Optional[int] = setting_option(None, "--n-boot", help="Bootstrap resamples: --paired (default 10000), --duels (permutations and "
                                         "bootstraps, default 10000; at most 2000 for a corpus metric without a fast form), "
                                         "--crosslingual's item-paired gap intervals (default 1000; 0: none)."),
    seed: int = setting_option(0, "--seed", help="--paired / --crosslingual / --duels: resampling seed."),
    contamination: bool = typer.Option(False, "--contamination", help="Each run's score on its clean and on its "
                                       "contaminated items, from the flags analyze contamination --run stored in its folder."),
    rule: str = setting_option("lm_eval_13gram", "--rule", help="--contamination: which check's flags: lm_eval_13gram "
                              "(lm-eval's rule) or length_aware."),
    by: Optional[str] = typer.Option(None, "--by", help="Group the runs' models by their --model-meta key (size, open, "
                                     "reasoning, or another key they were given): group means per task with intervals."),
    plot: Optional[Path] = setting_option(None, "--plot", help="With --by size: also draw score vs model size (log scale), one panel per task, to this PNG (needs the plots extra)."),
    published: Optional[Path] = setting_option(None, "--published", help="--ranks / --crosslingual: CSV of published scores "
                                             "(columns model, benchmark, score; optional metric, counterpart, language); --ranks: a side named by one "
                                             "of its benchmarks takes the paper's numbers; --crosslingual: each model of the CSV "
                                             "is one more run."),
    json_out: Optional[Path] = setting_option(None, "--json", help="Also write the result as JSON to this file."),
) -> None:
    """Compare finished runs: --crosslingual, --ranks (--a, --b), --paired RUN_A RUN_B, --duels RUN..., --by KEY RUN... or --contamination RUN..."""
    from glotbench.errors import GlotbenchError
    from glotbench.report.runs import load_runs

    chosen = [n for n, on in (("crosslingual", crosslingual), ("ranks", ranks), ("paired", paired), ("duels", duels),
                              ("by", by is not None), ("contamination", contamination)) if on]
    if len(chosen) != 1:
        raise GlotbenchError("choose exactly one of --crosslingual, --ranks, --paired, --duels, --by KEY, --contamination")
    one_of(rule, "--rule", ("lm_eval_13gram", "length_aware"))
    if plot is not None and by != "size":
        raise GlotbenchError("--plot draws score vs model size: it goes with --by size")
    if by is not None and (not by.strip() or published is not None):
        raise GlotbenchError("--by needs a --model-meta key (size, open, reasoning) and run directories")
    if duels and not 0 < alpha < 1:
        raise GlotbenchError(f"--alpha must be between 0 and 1, got {alpha}")
    if ranks and not (a and b):
        raise GlotbenchError("--ranks needs --a TASK_OR_SUITE and --b TASK_OR_SUITE")
    one_of(style, "--style", ("arrow", "signed"))
    if published is not None and (paired or duels or contamination):
        raise GlotbenchError("--published goes with --ranks or --crosslingual")
    if not run_dirs and published is None:
        raise GlotbenchError("give run directories (or, with --ranks or --crosslingual, a --published CSV)")
    console = Console(width=max(Console().width, 140))
    if n_boot is None:
        n_boot = 10_000 if paired or duels else 1000
    if n_boot < 0 or ((paired or duels) and n_boot < 1):
        raise GlotbenchError(f"--n-boot must be {'at least 1' if paired or duels else '0 or more'}, got {n_boot}")
    runs = load_runs(list(run_dirs), with_samples=paired or duels or contamination or (crosslingual and n_boot > 0)) if run_dirs else []
    if runs:
        console.print("runs: " + "; ".join(f"{r.label} = {r.path}" for r in runs))
    if crosslingual:
        if published is not None:
            from glotbench.report.analysis.published import published_runs

            runs = runs + published_runs(published)
            console.print(f"published scores: {published}")
        out = _print_crosslingual(runs, console, metric, n_boot, seed)
    elif ranks:
        out = _print_ranks(runs, a, b, metric, style, console, published)
    elif duels:
        out = _print_duels(runs, metric, alpha, n_boot, seed, console)
    elif contamination:
        out = _print_contamination(runs, rule, metric, n_boot, seed, console)
    elif by is not None:
        out = _print_groups(runs, by.strip(), metric, n_boot, seed, console, plot)
    else:
        out = _print_paired(runs, n_boot, seed, console)
    if json_out:
        json_out.write_text(json.dumps(out, ensure_ascii=False, indent=2, default=str), encoding="utf-8")
        console.print(f"wrote {json_out}")
