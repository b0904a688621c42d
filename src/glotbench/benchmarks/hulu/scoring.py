"""HuLU's scorer and metric, kept importable from here. Both are generic and registered by the
package itself: the ``option_value`` scorer in :mod:`glotbench.scoring.scorers`, the
``answered`` metric in :mod:`glotbench.scoring.metrics`.

* scorer ``option_value``: maps the option label the model chose ("A", "1") to the dataset's
  label string through ``sample.vars["option_values"]`` (built by
  :class:`~glotbench.benchmarks.hulu.task.HuluTask`).
* metric ``answered``: the fraction of items with a parseable answer. HuLU tasks report it
  instead of their paper metrics on unlabelled splits (``--split test``), where no score exists.
"""

from __future__ import annotations

from glotbench.scoring.metrics import answered
from glotbench.scoring.scorers import option_value

__all__ = ["answered", "option_value"]
