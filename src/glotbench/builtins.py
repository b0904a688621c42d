"""The generic built-ins: extractors, scorers, generic metrics and model backends.

:func:`glotbench.catalog.build` calls :func:`register` before the benchmark packages register, so a
name resolves the same in every process whichever modules were imported before. Add a line here
when a generic module registers something; a benchmark's names live in its own package
(``glotbench/benchmarks/<name>/__init__.py``).
"""

from __future__ import annotations

# text-generation metrics (BLEU, chrF, ROUGE, ROUGE_RAW, BERTScore) and the scorers that feed them,
# loaded on first lookup (sacrebleu, rouge-score and bert-score load only then)
TEXT_METRICS = ("bleu", "chrf", "chrfpp", "rouge1", "rouge2", "rougeL", "rouge_l", "rouge_raw_1", "rouge_raw_2", "rouge_raw_l",
                "rouge_raw_1_precision", "rouge_raw_2_precision", "rouge_raw_l_precision", "rouge_raw_1_recall",
                "rouge_raw_2_recall", "rouge_raw_l_recall", "rouge_raw_1_full", "rouge_raw_2_full", "rouge_raw_l_full",
                "bertscore_f1", "bertscore", "bertscore_precision", "bertscore_recall", "comet")

def register(bench) -> None:
    """Declare the generic built-ins on ``bench`` (a :class:`glotbench.catalog.Benchmark`)."""
    import glotbench.extract  # noqa: F401  choice, number, json, text
    import glotbench.scoring.extractive_qa_scorer  # noqa: F401  extractive_qa + bow_f1, *_raw, *_lemma ...
    import glotbench.scoring.judge_metrics  # noqa: F401  judge_score, judge_unreadable_rate, judge_co... (judges declared in YAML; the grade_rate kind)
    import glotbench.scoring.ll_calibration  # noqa: F401  ll_ece, ll_brier, ll_auroc_macro (--mode loglikelihood)
    import glotbench.scoring.metrics  # noqa: F401  accuracy, macro_f1, weighted_f1, mcc, exact_match, ...
    import glotbench.scoring.perplexity  # noqa: F401  bits_per_byte, perplexity, word_perplexity
    import glotbench.scoring.scorers  # noqa: F401  label, numeric, exact_match, option_value

    for name in TEXT_METRICS:
        bench.metric(name, f"glotbench.scoring.text_metrics:TM.{name}")
    bench.metric_kind("text", "glotbench.scoring.text_metrics:TEXT_KIND")
    bench.scorer("text", "glotbench.scoring.text_metrics:text")
    bench.scorer("text_bertscore", "glotbench.scoring.bertscore:text_bertscore")
    bench.scorer("text_comet", "glotbench.scoring.comet:text_comet")
    # model backends, loaded on the first model built: `glotbench tasks` imports no HTTP client or llama.cpp binding
    bench.backend("anthropic", factory="glotbench.models.anthropic_api:from_spec", light=True)
    bench.backend("embedded", "default", factory="glotbench.models.embedded:from_spec", needs_name=False,
                  renders_prompts=True)
    bench.backend("hf", "transformers", factory="glotbench.models.hf:from_spec", renders_prompts=True)
    bench.backend("llamacpp", "gguf", factory="glotbench.models.llamacpp:from_spec", renders_prompts=True)
    bench.backend("openai", "vllm", "ollama", factory="glotbench.models.openai_compat:from_spec", light=True)
    bench.backend("recorded", factory="glotbench.models.recorded:from_spec")
