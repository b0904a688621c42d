"""Every built-in extractor, scorer, metric, task class and model backend, registered by the package itself.

:func:`glotbench.registry.load_builtins` imports this module on the first registry lookup, so a
name resolves the same in every process whichever modules were imported before. Add a module
here when it registers something. Task classes are registered lazily (``"module:Class"``), so
resolving a name imports only the class a task file uses.
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
import glotbench.scoring.factuality  # noqa: F401  factuality_co, _na, _in, _cga, _f
import glotbench.scoring.factuality_strict  # noqa: F401  factuality_*_strict
import glotbench.scoring.metrics  # noqa: F401  accuracy, macro_f1, weighted_f1, mcc, exact_match, ...
import glotbench.scoring.scorers  # noqa: F401  label, numeric, exact_match, option_value
import glotbench.scoring.task_metrics  # noqa: F401  OpenHuEval's blank_accuracy, question_accuracy, ...
from glotbench.output.hooks import RESULT_TABLES
from glotbench.tasks.classes import TASK_CLASSES

BUILTIN_TASK_CLASSES = {
    "simpleqa": "glotbench.factuality.task:SimpleQATask",
    "hulu": "glotbench.hulu.task:HuluTask",
    "klokanek": "glotbench.czech.klokanek:KlokanekTask",
    "czech_bench": "glotbench.czech.bench:CzechBenchTask",
    "openhueval.matching_fib": "glotbench.openhueval.tasks:MatchingFIBTask",
    "openhueval.standard_fib": "glotbench.openhueval.tasks:StandardFIBTask",
    "openhueval.proverb_rea_2cq": "glotbench.openhueval.tasks:ProverbRea2CQTask",
    "openhueval.proverb_rea_oe": "glotbench.openhueval.tasks:ProverbReaOETask",
    "openhueval.wildbench": "glotbench.openhueval.tasks:WildBenchTask",
}
for _name, _ref in BUILTIN_TASK_CLASSES.items():
    TASK_CLASSES.register_lazy(_name, _ref)

# tables printed below the results table, in this order (imported only when a run is printed)
for _name, _ref in {
    "factuality": "glotbench.output.factuality_tables:console_tables",
    "mm_eval.abilities": "glotbench.analysis.mm_eval_abilities:console_tables",
    "openhueval.table5": "glotbench.openhueval.table5:console_tables",
}.items():
    RESULT_TABLES.register_lazy(_name, _ref)

# Czech-Bench's cb_* metrics (its reference parse rules and denominators), imported on first lookup
from glotbench.scoring.metrics import METRICS  # noqa: E402

CZECH_BENCH_METRICS = ("cb_accuracy", "cb_macro_f1", "cb_topic_accuracy", "cb_mae", "cb_mre", "cb_parsed", "cb_na_accuracy",
                       "cb_na_macro_f1", "cb_em_raw", "cb_f1_raw", "cb_em_lemma", "cb_f1_lemma", "cb_em_root", "cb_f1_root",
                       "cb_accuracy_labelled", "cb_macro_f1_labelled")
for _name in CZECH_BENCH_METRICS:
    METRICS.register_lazy(_name, f"glotbench.scoring.czech_bench_rules:CB.{_name}")

# text-generation metrics (BLEU, chrF, ROUGE, ROUGE_RAW, BERTScore) and the scorers that feed them,
# imported on first lookup (sacrebleu, rouge-score and bert-score load only then)
TEXT_METRICS = ("bleu", "chrf", "chrfpp", "rouge1", "rouge2", "rougeL", "rouge_l", "rouge_raw_1", "rouge_raw_2", "rouge_raw_l",
                "rouge_raw_1_precision", "rouge_raw_2_precision", "rouge_raw_l_precision", "rouge_raw_1_recall",
                "rouge_raw_2_recall", "rouge_raw_l_recall", "rouge_raw_1_full", "rouge_raw_2_full", "rouge_raw_l_full",
                "bertscore_f1", "bertscore", "bertscore_precision", "bertscore_recall")
for _name in TEXT_METRICS:
    METRICS.register_lazy(_name, f"glotbench.scoring.text_metrics:TM.{_name}")

from glotbench.scoring.scorers import SCORERS  # noqa: E402

SCORERS.register_lazy("text", "glotbench.scoring.text_metrics:text")
SCORERS.register_lazy("text_bertscore", "glotbench.scoring.bertscore:text_bertscore")
