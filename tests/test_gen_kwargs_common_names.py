"""``--gen-kwargs`` takes the common knob names (HF/vLLM: repetition_penalty, top_k, min_p ...) on every
backend that has the knob, mapped to its own name (llama.cpp: repeat_penalty), and refuses in one
line, before any request, a knob the backend has none of."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _glotbench(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": SRC, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], capture_output=True, text=True, timeout=600,
                          cwd=cwd, env=env)


def _bare_llamacpp():
    from glotbench.models.llamacpp import LlamaCppModel

    m = object.__new__(LlamaCppModel)  # no GGUF loaded: _gen_kwargs only reads these
    m.model_id, m.seed = "llamacpp:x", 0
    return m


def test_llamacpp_maps_the_common_names():
    from glotbench.models.base import GenRequest

    m = _bare_llamacpp()
    kw = m._gen_kwargs(GenRequest(prompt="x", extra=(("repetition_penalty", 1.1), ("top_k", 20), ("min_p", 0.1))))
    assert kw["repeat_penalty"] == 1.1 and kw["top_k"] == 20 and kw["min_p"] == 0.1
    assert "repetition_penalty" not in kw
    m.check_knobs(["repetition_penalty", "top_k", "min_p", "repeat_penalty"])  # no error


def test_hf_maps_llamacpp_names_and_both_refuse_unknown_ones():
    import pytest

    from glotbench.errors import GlotbenchError
    from glotbench.models.hf import HFModel

    hf = object.__new__(HFModel)
    hf.model_id = "hf:x"
    assert hf.knob_name("repeat_penalty") == "repetition_penalty"
    hf.check_knobs(["repeat_penalty", "top_k", "min_p"])
    with pytest.raises(GlotbenchError, match=r"--gen-kwargs mirostat_tau: model hf:x has no such generation knob"):
        hf.check_knobs(["mirostat_tau"])
    with pytest.raises(GlotbenchError, match="no_repeat_ngram_size"):
        _bare_llamacpp().check_knobs(["no_repeat_ngram_size"])


def test_readme_gen_kwargs_work_on_the_default_model(data_root, tmp_path, smollm2_path):
    """README's ``--gen-kwargs top_k=20,repetition_penalty=1.1`` on the default (embedded) model."""
    common = ["--tasks", "hulu.cola", "--limit", "1", "--max-tokens", "2", "--no-progress", "--bootstrap", "10"]
    ok = _glotbench("run", *common, "--gen-kwargs", "top_k=20,repetition_penalty=1.1", "-o", str(tmp_path / "a"),
                    cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr[-2000:]
    res = json.loads((tmp_path / "a" / "results.json").read_text())
    assert res["errors"] == [], res["errors"]
    bad = _glotbench("run", *common, "--gen-kwargs", "no_repeat_ngram_size=3", "-o", str(tmp_path / "b"), cwd=tmp_path)
    assert bad.returncode != 0
    lines = [x for x in bad.stderr.strip().splitlines() if x.strip()]
    assert "no_repeat_ngram_size" in lines[-1] and "no such generation knob" in lines[-1], bad.stderr
    assert "Traceback" not in bad.stderr
    assert not (tmp_path / "b" / "journal.sqlite").exists()  # refused before the run directory was made
