"""The generic built-ins: extractors, scorers, generic metrics and model backends.

:func:`glotbench.plugins.load` imports this module before the benchmark packages register, so a
name resolves the same in every process whichever modules were imported before. Add a module
here when a generic module registers something; a benchmark's names live in its own package
(``glotbench/benchmarks/<name>/__init__.py``).
"""

from __future__ import annotations

import glotbench.extract  # noqa: F401  choice, number, json, text
import glotbench.models.anthropic_api  # noqa: F401  model backend anthropic:
import glotbench.models.embedded  # noqa: F401  model backend embedded
import glotbench.models.hf  # noqa: F401  model backend hf: / transformers: (torch imported on load)
import glotbench.models.llamacpp  # noqa: F401  model backend llamacpp: / gguf:
import glotbench.models.openai_compat  # noqa: F401  model backends openai: / vllm: / ollama:
import glotbench.models.recorded  # noqa: F401  model backend recorded: (answers from a file)
import glotbench.scoring.extractive_qa_scorer  # noqa: F401  extractive_qa + bow_f1, *_raw, *_lemma ...
import glotbench.scoring.metrics  # noqa: F401  accuracy, macro_f1, weighted_f1, mcc, exact_match, ...
import glotbench.scoring.scorers  # noqa: F401  label, numeric, exact_match, option_value
