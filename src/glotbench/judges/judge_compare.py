"""Collect judge grades from finished runs for ``glotbench compare-judges``: each run directory is
one model's run, graded by two or more judges (``glotbench run --judge A`` then ``glotbench judge
--judge B``). Grades come from the journal's ``judgments`` table (the first answer of each item,
``sample_index`` 0), limited to the items of the run's current task fingerprint."""

from __future__ import annotations

import fnmatch
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from glotbench.engine.journal import Journal
from glotbench.errors import GlotbenchError
from glotbench.judges.agreement import compare_judges
from glotbench.scoring.grades import JUDGE_ERROR

JOURNAL_NAME = "journal.sqlite"


@dataclass
class JudgedRun:
    run_dir: Path
    model_id: str
    settings: dict
    # task -> judge -> {sample_id: grade}
    grades: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    label: str = ""


def load_judged_run(run_dir: Path) -> JudgedRun:
    run_dir = Path(run_dir)
    res_path, db = run_dir / "results.json", run_dir / JOURNAL_NAME
    if not res_path.is_file() or not db.is_file():
        raise GlotbenchError(f"{run_dir}: not a finished glotbench run (needs results.json and {JOURNAL_NAME})")
    results = json.loads(res_path.read_text(encoding="utf-8"))
    run = JudgedRun(run_dir=run_dir, model_id=results["model"]["model_id"], settings=results.get("settings") or {})
    journal = Journal(db)
    try:
        for task, entry in (results.get("tasks") or {}).items():
            run_key = (entry.get("fingerprint") or {}).get("id")
            ids = {r["sample_id"] for r in journal.iter_samples(run_key, task)}
            per_judge: dict[str, dict[str, str]] = {}
            for j in journal.iter_judgments(task=task):
                if j["sample_index"] == 0 and j["sample_id"] in ids:
                    per_judge.setdefault(j["judge_id"], {})[j["sample_id"]] = j.get("grade") or JUDGE_ERROR.value
            if per_judge:
                run.grades[task] = per_judge
    finally:
        journal.close()
    return run


RECORDED_PATTERN = "recorded-grades:*"


def parse_judge_names(specs: list[str] | None) -> list[tuple[str, str]]:
    """``--judge-name NAME[=PATTERN]`` as (name, glob over judge ids); PATTERN defaults to every
    recorded-grades judge (``recorded-grades:*``: each run's file is its own judge id)."""
    out = []
    for spec in specs or []:
        name, eq, pattern = spec.partition("=")
        name, pattern = name.strip(), (pattern.strip() if eq else RECORDED_PATTERN)
        if not name or not pattern:
            raise GlotbenchError(f"--judge-name {spec!r}: expected NAME or NAME=PATTERN (e.g. released=recorded-grades:*)")
        out.append((name, pattern))
    return out


def rename_judges(run: JudgedRun, names: list[tuple[str, str]]) -> None:
    """Give the judges whose ids match a ``--judge-name`` pattern that one name in ``run`` (the
    first pattern that matches wins), so one grade source compares across runs as one judge."""
    if not names:
        return
    for task, per_judge in run.grades.items():
        renamed: dict[str, dict[str, str]] = {}
        for jid, grades in per_judge.items():
            new = next((n for n, pat in names if fnmatch.fnmatchcase(jid, pat)), jid)
            if new in renamed:
                raise GlotbenchError(f"{run.run_dir}: task {task}: --judge-name {new}: two judges of this run match "
                                     f"it; give a narrower pattern (NAME=PATTERN)")
            renamed[new] = grades
        run.grades[task] = renamed


def short_ids(ids: list[str]) -> dict[str, str]:
    """Model / judge ids without their "@server-or-file-hash" part, where that stays unambiguous."""
    short = {i: i.split("@")[0] for i in ids}
    clash = Counter(short.values())
    return {i: (s if clash[s] == 1 else i) for i, s in short.items()}


def _label_runs(runs: list[JudgedRun]) -> None:
    """Label each run by its model id; where two runs share one, add the settings that differ."""
    counts = Counter(r.model_id for r in runs)
    names = short_ids(sorted(counts))
    for r in runs:
        r.label = names[r.model_id]
    for mid, n in counts.items():
        if n < 2:
            continue
        same = [r for r in runs if r.model_id == mid]
        keys = sorted({k for r in same for k in r.settings})
        differ = [k for k in keys if len({json.dumps(r.settings.get(k), sort_keys=True) for r in same}) > 1]
        for r in same:
            shown = lambda v: "default" if v is None else v
            extra = ", ".join(f"{k}={shown(r.settings.get(k))}" for k in differ) if differ else r.run_dir.name
            r.label = f"{names[mid]} ({extra})"
    seen = Counter(r.label for r in runs)
    for r in runs:
        if seen[r.label] > 1:
            r.label = f"{r.label} [{r.run_dir}]"


def compare_runs(run_dirs: list[Path], *, metric: str = "F", tasks: list[str] | None = None,
                 judge_names: list[str] | None = None) -> dict[str, Any]:
    """``{task: compare_judges(...) result + "missing"}`` for every task graded by >= 2 judges
    over the runs (models = runs; judges = those that graded every run of the task).
    ``judge_names``: ``NAME[=PATTERN]`` (:func:`parse_judge_names`), judges named across runs."""
    names_given = parse_judge_names(judge_names)
    runs = [load_judged_run(Path(d)) for d in run_dirs]
    for r in runs:
        rename_judges(r, names_given)
    _label_runs(runs)
    names = sorted({t for r in runs for t in r.grades})
    if tasks:
        names = [t for t in names if t in tasks]
    out: dict[str, Any] = {}
    for task in names:
        having = [r for r in runs if task in r.grades]
        judges = sorted(set.intersection(*(set(r.grades[task]) for r in having)))
        partial = sorted(set().union(*(set(r.grades[task]) for r in having)) - set(judges))
        # items some judge did not grade are left out of that run's comparison (aligned by id)
        ungraded = {}
        for r in having:
            sets = [set(r.grades[task][j]) for j in judges] or [set()]
            left_out = len(set.union(*sets) - set.intersection(*sets))
            if left_out:
                ungraded[r.label] = left_out
        missing = {"judges_not_on_every_run": partial, "items_left_out": ungraded}
        if len(judges) < 2:
            out[task] = {"skipped": f"fewer than two judges graded every run ({', '.join(judges) or 'none'})",
                         "missing": missing}
            continue
        jname = short_ids(judges)
        table = {jname[j]: {r.label: r.grades[task][j] for r in having} for j in judges}
        res = compare_judges(table, metric=metric)
        res["judge_ids"] = {jname[j]: j for j in judges}
        res["missing"] = missing
        res["runs"] = {r.label: {"run_dir": str(r.run_dir), "model_id": r.model_id} for r in having}
        out[task] = res
    if not out:
        raise GlotbenchError("no judge-graded task in these runs (run with --judge, then `glotbench judge rerun RUN_DIR --judge J2`)")
    return out
