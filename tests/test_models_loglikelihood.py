"""Our in-process log-likelihoods agree with Hugging Face transformers on real MM-Eval items.

Runs bench/loglikelihood_check.py's comparison on 3 items (24 options). The gate is the run on an
F32 GGUF holding the de-quantised weights (the numbers transformers computes with); the Q4_1 run
only has to stay close, since quantised arithmetic moves summed log-probs by up to ~0.7 nats.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from glotbench.errors import ModelError
from glotbench.paths import resolve_data_file

_missing = [m for m in ("torch", "transformers", "gguf", "accelerate", "llama_cpp") if importlib.util.find_spec(m) is None]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(_missing), reason=f"reference check needs {', '.join(_missing)} "
                       "(pip install torch transformers accelerate gguf)"),
]


def _bench():
    path = Path(__file__).resolve().parents[1] / "bench" / "loglikelihood_check.py"
    spec = importlib.util.spec_from_file_location("loglikelihood_check", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def test_matches_transformers_on_mm_eval(tmp_path):
    for rel in ("mm_eval/semantics_eval.json", "mm_eval/knowledge_eval.json"):
        if not resolve_data_file(rel).is_file():
            pytest.skip(f"MM-Eval data not found ({rel}); set GLOTBENCH_DATA to the shared data root")
    from glotbench.models.embedded import default_gguf_path

    try:
        default_gguf_path()
    except ModelError as exc:
        pytest.skip(str(exc))
    bench = _bench()
    res = bench.compare(n_items=3, echo_items=0, workdir=tmp_path, verbose=False)
    assert res["cases"] == 24
    assert res["token_mismatches"] == 0
    assert res["f32"]["max_abs_diff"] < bench.TOLERANCE, res["f32"]
    assert res["f32"]["same_choice"][0] == res["f32"]["same_choice"][1]
    assert res["q4_1"]["max_abs_diff"] < 1.5, res["q4_1"]
