"""Reports and comparisons built from finished run directories (no model calls).

* :mod:`glotbench.report.runs`: read results.json + samples.jsonl, label the models;
* :mod:`glotbench.report.items`: per-item values and outcomes of sample records;
* :mod:`glotbench.report.comparisons`: cross-lingual gaps, rank movement, paired tests (glue
  over :mod:`glotbench.report.analysis`);
* :mod:`glotbench.report.html` + ``templates/``: the self-contained HTML report;
* :mod:`glotbench.report.plots`: its plots, as inline SVG;
* :mod:`glotbench.report.estimate`: requests, tokens and cost of a run before it is made.
"""

from glotbench.report.runs import RunData, load_run, load_runs

__all__ = ["RunData", "load_run", "load_runs"]
