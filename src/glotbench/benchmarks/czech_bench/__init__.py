"""Czech-Bench (Czech, with its English twins) and Klokánek.

Task files in ``tasks/``; the task classes (:mod:`.bench`, :mod:`.klokanek`), the reference parse
rules and denominators as ``cb_*`` metrics (:mod:`.metrics`), and the reader for Czech-Bench's own
``eval_config.yml`` (:mod:`.run_config`). The Czech lemmatiser and DeriNet roots are a language
resource: ``glotbench.languages.cs_morpho``."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent

CB_METRICS = ("cb_accuracy", "cb_macro_f1", "cb_topic_accuracy", "cb_mae", "cb_mre", "cb_parsed", "cb_na_accuracy",
              "cb_na_macro_f1", "cb_em_raw", "cb_f1_raw", "cb_em_lemma", "cb_f1_lemma", "cb_em_root", "cb_f1_root",
              "cb_accuracy_labelled", "cb_macro_f1_labelled")


def register(bench) -> None:
    bench.tasks(HERE / "tasks")
    bench.task_alias("cs.klokanek", "czech_bench.klokanek")  # its name until issue 49: old runs, configs
    bench.task_class("klokanek", f"{__name__}.klokanek:KlokanekTask")
    bench.task_class("czech_bench", f"{__name__}.bench:CzechBenchTask")
    for name in CB_METRICS:  # imported on first lookup
        bench.metric(name, f"{__name__}.metrics:CB.{name}")
    bench.config_reader("czech_bench", f"{__name__}.run_config:READER")
