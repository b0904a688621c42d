"""Multiple choice scored by comparing the options' log-probabilities with the embedded model."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from glotbench.engine.config import RunConfig
from glotbench.engine.session import run_evaluation


def test_loglikelihood_mode_on_embedded_model(data_root, smollm2_path, tmp_path):
    cfg = RunConfig(model="embedded", tasks=["mm_eval.semantics"], limit=4, mode="loglikelihood",
                    output=str(tmp_path / "ll"), bootstrap=50)
    results, out = run_evaluation(cfg, show_progress=False)
    t = results["tasks"]["mm_eval.semantics"]
    assert t["mode"] == "loglikelihood" and t["n_scored"] == 4 and t["n_unparseable"] == 0
    samples = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    hits = {"accuracy": [], "accuracy_norm": [], "accuracy_norm_bytes": [], "accuracy_norm_tokens": []}
    for s in samples:
        lps = s["extracted"]["logprobs"]
        assert len(lps) == 4 and all(lp < 0 and math.isfinite(lp) for lp in lps)
        # the prediction is the option with the highest log-probability
        assert s["pred"] == "ABCD"[max(range(4), key=lambda k: lps[k])]
        assert s["prompt"].endswith("Хариулт:")  # plain prompt with the Mongolian answer cue
        # lm-eval's acc / acc_norm over doc_to_choice (the labels A-D scored after " "), and the same
        # rule divided by bytes and by the backend's token counts
        choices, n_tokens, gold = list("ABCD"), [o["n_tokens"] for o in s["outputs"]], "ABCD".index(s["gold"])
        hits["accuracy"].append(float(np.argmax(lps) == gold))
        for m, lengths in (("accuracy_norm", [len(c) for c in choices]), ("accuracy_norm_bytes", [len(c.encode()) for c in choices]),
                           ("accuracy_norm_tokens", n_tokens)):
            hits[m].append(float(np.argmax(np.array(lps) / np.array(lengths, dtype=float)) == gold))
    assert set(t["metrics"]) == set(hits) | {"ll_ece", "ll_brier", "ll_auroc_macro"}  # calibration: test_ll_calibration.py
    for m, h in hits.items():
        assert t["metrics"][m]["value"] == pytest.approx(sum(h) / len(h), abs=1e-6), m
    # one loglikelihood request per option, journaled
    assert results["run"]["requests_sent"] == 16
