"""Published scores from a paper, as a CSV, for ``glotbench compare --ranks --published FILE``.

The papers' rank tables (OpenHuEval Tables 7/9, Chinese SimpleQA Fig. 8) put a model's rank on one
benchmark beside its rank on another. With published numbers either side (or both) can come from
the paper, the other from glotbench runs. The CSV has a header and one score per line::

    model,benchmark,score
    GPT-4o,bench_en,38.2
    GPT-4o,bench_zh,59.3

``benchmark`` is the name given to ``--a`` / ``--b``; a side whose name is a benchmark of the CSV
takes its scores from the CSV, otherwise from the runs. Optional columns: ``metric`` (several rows
per benchmark, e.g. ``cb_accuracy`` and ``cb_macro_f1``), ``counterpart`` and ``language`` (else
taken from the glotbench task of that name). With ``compare --crosslingual --published FILE`` each
model of the CSV becomes a published "run" (:func:`published_runs`): a benchmark and its
counterpart form a pair, and a score of ``-`` (the paper's invalid mark) is a missing one. Scores are compared as given (any scale, the
same on one side); a model is matched by its exact name (a run's label is its model id, with or without the
backend prefix: ``openai:gpt-4o`` matches ``gpt-4o``).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from glotbench.errors import DataError

COLUMNS = ("model", "benchmark", "score")
MISSING = ("-", "")  # a paper's "-": a score it did not report or marked invalid

PublishedTable = dict[str, dict[str, dict[str, "float | None"]]]  # benchmark -> model -> metric -> score


def read_published_table(path: Path) -> tuple[PublishedTable, dict[str, dict[str, str]]]:
    """``(benchmark -> model -> metric -> score, benchmark -> {"counterpart", "language"})``.

    ``metric`` (optional column; ``score`` when absent) lets one benchmark carry several rows
    (the Czech-Bench thesis prints Acc and F1). A score of ``-`` (or empty) is a score the paper
    left out or marked invalid: kept as None. A trailing ``*`` (the paper's "over 20% unparsed"
    mark) or ``%`` is dropped. A bad line is one error naming the file, line and field.
    """
    if not path.is_file():
        raise DataError(f"{path}: published scores file not found")
    out: PublishedTable = {}
    info: dict[str, dict[str, str]] = {}
    with path.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise DataError(f"{path}: header lacks column(s) {', '.join(missing)} (need {', '.join(COLUMNS)})")
        for lineno, row in enumerate(reader, start=2):
            model, bench, raw = ((row.get(c) or "").strip() for c in COLUMNS)
            metric = (row.get("metric") or "").strip() or "score"
            if not model or not bench:
                raise DataError(f"{path}:{lineno}: field '{'model' if not model else 'benchmark'}' is empty")
            raw = raw.rstrip("*%").strip()
            score: float | None
            if raw in MISSING:
                score = None
            else:
                try:
                    score = float(raw)
                except ValueError:
                    raise DataError(f"{path}:{lineno}: field 'score': {raw!r} is not a number") from None
                if math.isnan(score):
                    raise DataError(f"{path}:{lineno}: field 'score' is NaN")
            per_model = out.setdefault(bench, {}).setdefault(model, {})
            if metric in per_model:
                what = f"model {model!r} listed twice for {bench!r}" + (f" ({metric})" if metric != "score" else "")
                raise DataError(f"{path}:{lineno}: {what}")
            per_model[metric] = score
            for c in ("counterpart", "language"):
                if (row.get(c) or "").strip():
                    info.setdefault(bench, {})[c] = row[c].strip()
    if not out:
        raise DataError(f"{path}: no scores")
    return out, info


def read_published(path: Path, metric: str | None = None) -> dict[str, dict[str, float]]:
    """benchmark -> model -> score (``metric``'s row, else the benchmark's first metric listed);
    a score the paper left out ("-") is not a score."""
    table, _ = read_published_table(path)
    out: dict[str, dict[str, float]] = {}
    for bench, models in table.items():
        listed = list(dict.fromkeys(m for scores in models.values() for m in scores))
        pick = metric if metric in listed else listed[0]
        scores = {model: s[pick] for model, s in models.items() if s.get(pick) is not None}
        if scores:
            out[bench] = scores
    if not out:
        raise DataError(f"{path}: no scores")
    return out


def _task_info(bench: str) -> dict[str, str]:
    """counterpart and language of a glotbench task of that name (its YAML), when there is one."""
    try:
        from glotbench.tasks.registry import all_specs, canonical

        spec = all_specs().get(canonical(bench))
    except Exception:  # noqa: BLE001 - a broken task folder must not stop reading a paper's table
        spec = None
    if spec is None:
        return {}
    spec = spec[0]
    return {k: v for k, v in (("counterpart", spec.counterpart), ("language", spec.language)) if v}


def published_runs(path: Path):
    """A paper's table as one finished "run" per model (:class:`glotbench.report.runs.RunData`,
    labelled with the model's name), so ``compare --crosslingual`` reads it like runs.

    A benchmark's ``counterpart`` and ``language`` come from the CSV's columns, else from the
    glotbench task of that name. A row whose score is "-" is a missing score (the paper's invalid
    mark): the cross-lingual average skips that pair, as the thesis does.
    """
    from glotbench.report.runs import RunData

    table, info = read_published_table(path)
    runs: dict[str, RunData] = {}
    for bench, models in table.items():
        meta = {**_task_info(bench), **info.get(bench, {})}
        for model, scores in models.items():
            run = runs.setdefault(model, RunData(path=path, results={"model": {"model_id": model}, "tasks": {},
                                                                    "published": str(path)}, label=model))
            run.results["tasks"][bench] = {
                "metrics": {m: {"value": v} for m, v in scores.items()},
                "status": "published",
                **meta,
            }
    return list(runs.values())


def _match(label: str, names: set[str]) -> str:
    if label in names:
        return label
    bare = label.partition(":")[2]
    return bare if bare in names else label


def ranks_with_published(runs, a: str, b: str, published: dict[str, dict[str, float]], metric: str | None = None,
                         style: str = "arrow"):
    """Like :func:`glotbench.report.comparisons.ranks_from_runs`, a side named by a CSV benchmark
    taking its scores from the CSV."""
    from glotbench.report.analysis.ranks import rank_movement
    from glotbench.report.comparisons import RanksResult, _side_scores, _tasks_for, scores_by_model

    notes: list[str] = []
    per_model = scores_by_model(runs) if runs else {}
    available = list(dict.fromkeys(t for res in per_model.values() for t in res))

    def side(name: str, label: str) -> tuple[dict[str, float], list[str], str]:
        if name in published:
            return dict(published[name]), [name], "published"
        if not runs:
            raise DataError(f"{name!r} is not a benchmark of the published scores ({', '.join(published)}) and no run was given")
        tasks = _tasks_for(name, available)
        scores, used = _side_scores(per_model, tasks, metric, notes, label)
        return scores, tasks, used

    sa, ta, ma = side(a, "A")
    sb, tb, mb = side(b, "B")
    # A run's label is its model id ("openai:gpt-4o"); it matches a published "gpt-4o" too.
    names = {m for bench in published.values() for m in bench}
    sa, sb = ({_match(m, names): v for m, v in s.items()} for s in (sa, sb))
    if not set(sa) & set(sb):
        raise DataError(f"no model has scores for both {a!r} and {b!r} (model names must match exactly)")
    cmp = rank_movement(sa, sb, higher_is_better=True, style=style)  # type: ignore[arg-type]
    return RanksResult(cmp, a, b, ta, tb, ma, mb, notes)
