"""HuLU (Hungarian Language Understanding) as prompted tasks for LLMs.

The task files are ``tasks/*.yaml``; they name
:class:`glotbench.benchmarks.hulu.task.HuluTask` as ``task_class``. It scores with the generic
``option_value`` scorer and ``answered`` metric (:mod:`glotbench.scoring.scorers`, :mod:`glotbench.scoring.metrics`), so a run
stores the *dataset's own* label strings ("1"/"0", "positive", "entailment") as predictions,
which is what the paper's metrics and the leaderboard's submission files use.

Its ``register`` adds the task files, the task class and the leaderboard submission writer
(:mod:`.submissions`).
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent


def register(bench) -> None:
    bench.tasks(HERE / "tasks")
    bench.files(HERE / "files")  # build/labels/hucb-markers.labels.yaml (`build classify`)
    bench.task_class("hulu", f"{__name__}.task:HuluTask")
    bench.submission_writer("hulu", f"{__name__}.submissions:build_submissions")
