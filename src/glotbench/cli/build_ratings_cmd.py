"""`glotbench build review import-ratings RUN_DIR SHEET...`: human ratings (or labels) of a run's
outputs joined on its sample ids, their agreement with the automatic scores (Spearman's rho or Cohen's
kappa, percentile bootstrap interval), written to ``RUN_DIR/human_ratings.json`` for ``glotbench
report`` (:mod:`glotbench.build.human_ratings`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from glotbench.cli.build_items_cmd import review_app
from glotbench.cli.option_groups import options, setting_option


@review_app.command("import-ratings")
@options()
def import_ratings(
    run_dir: Path = typer.Argument(..., help="A run directory (glotbench run -o DIR)."),
    sheets: list[Path] = typer.Argument(..., help="Annotators' sheets (CSV/TSV/JSONL: sample_id, task, rating or label, annotator)."),
    kind: str = setting_option("rating", "--kind", help="rating (numbers: Spearman's rho against the automatic score) or "
                               "label (Cohen's kappa against the run's prediction): what the sheets hold."),
    task: Optional[str] = setting_option(None, "--task", help="The run's task the sheets rate (needed when the run holds several)."),
    column: Optional[str] = setting_option(None, "--column", help="The sheets' column holding the human value (default: the kind's name, label or rating)."),
    automatic: Optional[str] = setting_option(None, "--automatic", help="The per-item automatic value: a key of the samples' values "
                                              "(default: the headline metric's), or pred (the prediction)."),
    n_boot: int = setting_option(2000, "--n-boot", help="Bootstrap resamples for the 95% interval."),
    seed: int = setting_option(0, "--seed", help="Seed of the bootstrap resampling."),
) -> None:
    """Human ratings of model outputs brought back into the run: agreement with the automatic scores, with an interval.

    The kind setting: rating (numbers, the default: Spearman's rho against the automatic score) or label (Cohen's
    kappa against the run's prediction)."""
    from glotbench.build import human_ratings as hr
    from glotbench.errors import GlotbenchError
    from glotbench.report.runs import load_run

    kind = kind or "rating"
    if kind not in ("rating", "label"):
        raise GlotbenchError(f"build review import-ratings: kind must be rating or label, got {kind!r}")
    if n_boot < 1:
        raise GlotbenchError("build review import-ratings: n_boot must be at least 1")
    run = load_run(run_dir)
    joined = hr.join(run, list(sheets), kind=kind, task=task, column=column or kind, automatic=automatic)
    entry = hr.summarise(joined, n_boot, seed, list(sheets))
    path = hr.write(run.path, entry)
    v, (lo, hi) = entry["value"], entry["ci95"]
    name = "Spearman's rho" if kind == "rating" else "Cohen's kappa"
    shown = "undefined (a constant side, or under 2 items)" if v is None else (
        f"{v:.3f} [95% CI {lo:.3f}, {hi:.3f}]" if lo is not None else f"{v:.3f} (no interval)")
    typer.echo(f"{joined.task}: human {kind} vs automatic {joined.automatic}: {name} {shown} over {entry['n_items']} items "
               f"({joined.annotators} annotator(s); blank {joined.blank} · ties {joined.ties} · no automatic value {joined.no_automatic})")
    if entry["annotators_alpha"] is not None:
        typer.echo(f"annotators' agreement: Krippendorff's alpha ({entry['annotators_alpha_level']}) {entry['annotators_alpha']:.3f}")
    typer.echo(f"wrote {path} (glotbench runs report {run_dir} shows it)")
