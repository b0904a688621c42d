"""Published scores from a paper, as a CSV, for ``glotbench compare --ranks --published FILE``.

The papers' rank tables (OpenHuEval Tables 7/9, Chinese SimpleQA Fig. 8) put a model's rank on one
benchmark beside its rank on another. With published numbers either side (or both) can come from
the paper, the other from glotbench runs. The CSV has a header and one score per line::

    model,benchmark,score
    GPT-4o,simpleqa,38.2
    GPT-4o,chinese_simpleqa,59.3

``benchmark`` is the name given to ``--a`` / ``--b``; a side whose name is a benchmark of the CSV
takes its scores from the CSV, otherwise from the runs. Scores are compared as given (any scale, the
same on one side); a model is matched by its exact name (a run's label is its model id, with or without the
backend prefix: ``openai:gpt-4o`` matches ``gpt-4o``).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from glotbench.errors import DataError

COLUMNS = ("model", "benchmark", "score")


def read_published(path: Path) -> dict[str, dict[str, float]]:
    """benchmark -> model -> score; a bad line is one error naming the file, line and field."""
    if not path.is_file():
        raise DataError(f"{path}: published scores file not found")
    out: dict[str, dict[str, float]] = {}
    with path.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise DataError(f"{path}: header lacks column(s) {', '.join(missing)} (need {', '.join(COLUMNS)})")
        for lineno, row in enumerate(reader, start=2):
            model, bench, raw = ((row.get(c) or "").strip() for c in COLUMNS)
            if not model or not bench:
                raise DataError(f"{path}:{lineno}: field '{'model' if not model else 'benchmark'}' is empty")
            try:
                score = float(raw.rstrip("%"))
            except ValueError:
                raise DataError(f"{path}:{lineno}: field 'score': {raw!r} is not a number") from None
            if math.isnan(score):
                raise DataError(f"{path}:{lineno}: field 'score' is NaN")
            if model in out.setdefault(bench, {}):
                raise DataError(f"{path}:{lineno}: model {model!r} listed twice for {bench!r}")
            out[bench][model] = score
    if not out:
        raise DataError(f"{path}: no scores")
    return out


def _match(label: str, names: set[str]) -> str:
    if label in names:
        return label
    bare = label.partition(":")[2]
    return bare if bare in names else label


def ranks_with_published(runs, a: str, b: str, published: dict[str, dict[str, float]], metric: str | None = None,
                         style: str = "arrow"):
    """Like :func:`glotbench.report.comparisons.ranks_from_runs`, a side named by a CSV benchmark
    taking its scores from the CSV."""
    from glotbench.analysis.ranks import rank_movement
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
