"""The generic built-ins: extractors, scorers, generic metrics and model backends.

:func:`glotbench.plugins.load` imports this module before the benchmark packages register, so a
name resolves the same in every process whichever modules were imported before. Add a module
here when a generic module registers something; a benchmark's names live in its own package
(``glotbench/benchmarks/<name>/__init__.py``).
"""

from __future__ import annotations

import glotbench.extract  # noqa: F401  choice, number, json, text
# The model backends (anthropic:, embedded, hf:, llamacpp:, openai:/vllm:/ollama:, recorded:) register
# on the first backend lookup: glotbench.models.backends.BUILTIN_MODULES
import glotbench.scoring.extractive_qa_scorer  # noqa: F401  extractive_qa + bow_f1, *_raw, *_lemma ...
import glotbench.scoring.judge_metrics  # noqa: F401  judge_score, judge_unreadable_rate, judge_co... (judges declared in YAML; the grade_rate kind)
import glotbench.scoring.ll_calibration  # noqa: F401  ll_ece, ll_brier, ll_auroc_macro (--mode loglikelihood)
import glotbench.scoring.metrics  # noqa: F401  accuracy, macro_f1, weighted_f1, mcc, exact_match, ...
import glotbench.scoring.perplexity  # noqa: F401  bits_per_byte, perplexity, word_perplexity
import glotbench.scoring.scorers  # noqa: F401  label, numeric, exact_match, option_value
from glotbench.scoring.metric_kinds import METRIC_KINDS  # noqa: E402
from glotbench.scoring.metrics import METRICS  # noqa: E402
from glotbench.scoring.scorers import SCORERS  # noqa: E402

# text-generation metrics (BLEU, chrF, ROUGE, ROUGE_RAW, BERTScore) and the scorers that feed them,
# imported on first lookup (sacrebleu, rouge-score and bert-score load only then)
TEXT_METRICS = ("bleu", "chrf", "chrfpp", "rouge1", "rouge2", "rougeL", "rouge_l", "rouge_raw_1", "rouge_raw_2", "rouge_raw_l",
                "rouge_raw_1_precision", "rouge_raw_2_precision", "rouge_raw_l_precision", "rouge_raw_1_recall",
                "rouge_raw_2_recall", "rouge_raw_l_recall", "rouge_raw_1_full", "rouge_raw_2_full", "rouge_raw_l_full",
                "bertscore_f1", "bertscore", "bertscore_precision", "bertscore_recall")
for _name in TEXT_METRICS:
    METRICS.register_lazy(_name, f"glotbench.scoring.text_metrics:TM.{_name}")
METRIC_KINDS.register_lazy("text", "glotbench.scoring.text_metrics:TEXT_KIND")

SCORERS.register_lazy("text", "glotbench.scoring.text_metrics:text")
SCORERS.register_lazy("text_bertscore", "glotbench.scoring.bertscore:text_bertscore")
