"""OpenHuEval (Hungarian): prompt building and scoring, one module per task.

* :mod:`~glotbench.openhueval.matching_fib` - HuMatchingFIB (option letters per blank)
* :mod:`~glotbench.openhueval.standard_fib` - HuStandardFIB (open blanks, fuzzy match)
* :mod:`~glotbench.openhueval.proverb_rea` - HuProverbRea (2CQ and OE with a judge)
* :mod:`~glotbench.openhueval.wildbench` - HuWildBench (checklist judge, WB-Score)

Each module has ``load`` (records), prompt builders taking ``prompt_lang`` where the task has
prompt variants, ``score`` (one record + output(s) -> ScoredItem with the record's category
fields in ``metadata``) and ``summarize`` (items -> the task's numbers).
:func:`~glotbench.openhueval.common.breakdown` splits any of them by a metadata field.
"""

from glotbench.openhueval.common import breakdown

__all__ = ["breakdown"]
