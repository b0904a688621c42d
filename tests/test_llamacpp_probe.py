"""The SIGILL probe (models/llamacpp_probe.py): a llama-cpp-python build that dies on this CPU is
found by a child process before the run, not by the run dying with "Illegal instruction".

This machine's CPU may well run the native build; the fault is injected on purpose in the probe's
child (``GLOTBENCH_LLAMA_PROBE_FAULT``), which then dies by a real SIGILL, as it does where the
CPU advertises AMX without allowing it."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from glotbench.errors import ModelError

if importlib.util.find_spec("llama_cpp") is None:
    pytest.skip("llama-cpp-python is not installed", allow_module_level=True)

from glotbench.models import llamacpp_probe as probe  # noqa: E402
from glotbench.models.llamacpp import LlamaCppModel, file_fingerprint  # noqa: E402
from glotbench.models.base import GenRequest, LoglikelihoodRequest  # noqa: E402

SRC = str(Path(__file__).resolve().parents[1] / "src")


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GLOTBENCH_PROBE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(probe.FAULT_ENV, raising=False)
    return tmp_path / "cache"


def test_child_dies_by_a_real_sigill_when_the_fault_is_injected(smollm2_path, cache, monkeypatch):
    monkeypatch.setenv(probe.FAULT_ENV, "sigill")
    assert probe._run_child(smollm2_path, probe.DEFAULT, 0) == ("signal", "SIGILL")
    assert probe._run_child(smollm2_path, probe.SAFE, 0) == ("ok", "")


def test_a_working_build_loads_as_usual_and_the_verdict_is_cached(smollm2_path, cache, monkeypatch):
    fp = file_fingerprint(smollm2_path)
    assert probe.choose_mode(smollm2_path, fp) == (probe.DEFAULT, None)
    (entry,) = cache.glob("*.json")
    assert json.loads(entry.read_text())["mode"] == probe.DEFAULT
    # Cached: a fault that would now kill every child is never met, no child runs.
    monkeypatch.setenv(probe.FAULT_ENV, "sigill-all")
    assert probe.choose_mode(smollm2_path, fp) == (probe.DEFAULT, None)


def test_sigill_in_the_default_setting_falls_back_and_says_so(smollm2_path, cache, monkeypatch):
    monkeypatch.setenv(probe.FAULT_ENV, "sigill")
    mode, notice = probe.choose_mode(smollm2_path, file_fingerprint(smollm2_path))
    assert mode == probe.SAFE
    assert "SIGILL" in notice and "extra_bufts=false" in notice and "GGML_NATIVE=OFF" in notice
    monkeypatch.setenv(probe.FAULT_ENV, "sigill-all")  # the cached verdict holds without a child
    assert probe.choose_mode(smollm2_path, file_fingerprint(smollm2_path))[0] == probe.SAFE


def test_sigill_in_every_setting_is_one_line_naming_the_cause_and_the_rebuild(smollm2_path, cache, monkeypatch):
    monkeypatch.setenv(probe.FAULT_ENV, "sigill-all")
    with pytest.raises(ModelError) as err:
        probe.choose_mode(smollm2_path, file_fingerprint(smollm2_path))
    text = str(err.value)
    assert "\n" not in text and "SIGILL" in text and probe.REBUILD in text
    assert not list(cache.glob("*.json"))  # nothing decided is cached: a rebuild probes again


def test_a_rebuild_or_another_cpu_probes_again(smollm2_path, cache, monkeypatch):
    key = probe.probe_key(file_fingerprint(smollm2_path), 0)
    assert key != probe.probe_key(file_fingerprint(smollm2_path), 1)
    monkeypatch.setattr(probe, "_cpu_flags", lambda: "fpu sse2 avx2 amx_tile amx_int8")
    assert probe.probe_key(file_fingerprint(smollm2_path), 0) != key


def test_without_extra_buffer_types_the_model_computes_the_same(smollm2_path, cache):
    """The fallback setting changes where weights live, not what the model computes here."""
    req = GenRequest(prompt="Mongolia's capital city is", max_tokens=12)
    ll = LoglikelihoodRequest(context="The capital of Mongolia is", continuation=" Ulaanbaatar")
    out = {}
    for flag in (True, False):
        m = LlamaCppModel(smollm2_path, n_ctx=512, n_seq=1, extra_bufts=flag)
        try:
            out[flag] = (asyncio.run(m.generate(req)).text, asyncio.run(m.loglikelihood(ll)).logprob)
        finally:
            asyncio.run(m.aclose())
    assert out[True][0] == out[False][0]
    assert out[True][1] == pytest.approx(out[False][1], abs=1e-3)


def _cli(tmp_path: Path, fault: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, probe.FAULT_ENV: fault, "GLOTBENCH_PROBE_CACHE": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH", "")) if p)}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], env=env, capture_output=True, text=True,
                          timeout=600, cwd=Path(__file__).resolve().parents[1], stdin=subprocess.DEVNULL)


def test_readme_command_runs_to_the_table_where_the_native_setting_dies(smollm2_path, data_root, tmp_path):
    done = _cli(tmp_path, "sigill", "run", "--tasks", "mm_eval.knowledge", "--limit", "2", "-o", str(tmp_path / "run"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert (done.stdout + done.stderr).count("SIGILL") == 1  # said once
    result = json.loads((tmp_path / "run" / "results.json").read_text())
    assert result["tasks"]["mm_eval.knowledge"]["n_scored"] == 2


def test_readme_command_stops_before_the_run_where_every_setting_dies(smollm2_path, data_root, tmp_path):
    done = _cli(tmp_path, "sigill-all", "run", "--tasks", "mm_eval.knowledge", "--limit", "2", "-o", str(tmp_path / "run"))
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.returncode != 128 + signal.SIGILL
    assert "Traceback" not in done.stderr + done.stdout
    lines = [ln for ln in (done.stderr + done.stdout).splitlines() if "SIGILL" in ln]
    assert len(lines) == 1 and "GGML_NATIVE=OFF" in lines[0]
    assert not (tmp_path / "run" / "journal.sqlite").exists()
