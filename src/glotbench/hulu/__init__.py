"""HuLU (Hungarian Language Understanding) as prompted tasks for LLMs.

The six task files are ``glotbench/tasks/defs/hulu/*.yaml``; they name
:class:`glotbench.hulu.task.HuluTask` as ``task_class``. Importing that module registers the
``option_value`` scorer and the ``answered`` metric (:mod:`glotbench.hulu.scoring`), so a run
stores the *dataset's own* label strings ("1"/"0", "positive", "entailment") as predictions,
which is what the paper's metrics and the leaderboard's submission files use.
"""
