"""`--model hf:...`: the transformers backend end to end, on CPU, on the embedded SmolLM2 GGUF loaded
through transformers' ``gguf_file=`` (the same file the embedded backend runs), each run in a fresh
``glotbench run`` process. Hub ids are tested on a hub cache folder written here (offline)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

_missing = [m for m in ("torch", "transformers", "gguf") if importlib.util.find_spec(m) is None]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(_missing), reason=f"the hf: backend needs {', '.join(_missing)} (pip install 'glotbench[hf]')"),
]
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))


def glotbench(*args: str, env: dict | None = None, timeout: int = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "glotbench", *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "NO_COLOR": "1", "HF_HUB_OFFLINE": "1", **(env or {})})


def hf_spec(gguf: Path) -> list[str]:
    return ["-m", f"hf:{gguf.parent}", "-M", f"gguf_file={gguf.name}"]


def test_loglikelihood_agrees_with_embedded_on_mm_eval(tmp_path, data_root, smollm2_path):
    """Same items, same GGUF, both backends: every item picks the same option; log-probs within 0.5 nats
    (llama.cpp computes with Q4_1 weights and 8-bit activations, transformers with de-quantised float32;
    measured on 20 items: 20/20 same choice, max |diff| 0.20 nats, mean 0.07)."""
    from hf_vs_embedded import agreement

    common = ["-t", "mm_eval.knowledge", "--mode", "loglikelihood", "--limit", "6", "--no-progress"]
    r = glotbench("run", *hf_spec(smollm2_path), *common, "-o", str(tmp_path / "hf"), "-M", "batch_size=4")
    assert r.returncode == 0, r.stderr[-3000:]
    e = glotbench("run", "-m", "embedded", *common, "-o", str(tmp_path / "emb"))
    assert e.returncode == 0, e.stderr[-3000:]
    res = json.loads((tmp_path / "hf" / "results.json").read_text())
    assert res["model"]["backend"] == "hf" and res["model"]["gguf_file"] == smollm2_path.name
    assert res["model"]["dtype"] == "float32"
    a = agreement(tmp_path / "emb", tmp_path / "hf")
    assert a["items"] == 6 and a["options"] == 24
    assert a["same_argmax"] == 6, a
    assert a["max_abs_diff"] < 0.5, a
    # the lm-eval export of a loglikelihood run: one (context, continuation) request per option, as lm-eval logs them
    x = glotbench("runs", "export", str(tmp_path / "hf"), "--format", "lm-eval", "-o", str(tmp_path / "lm"))
    assert x.returncode == 0, x.stderr[-2000:]
    [samples] = list((tmp_path / "lm").glob("*/samples_mm_eval.knowledge_*.jsonl"))
    line = json.loads(samples.read_text().splitlines()[0])
    assert [a["arg_1"] for a in line["arguments"].values()] == [" A", " B", " C", " D"]
    assert all(a["arg_0"].endswith("Хариулт:") for a in line["arguments"].values())
    assert len(line["resps"]) == 4 and len(line["resps"][0][0]) == 2  # [logprob, is_greedy] per option
    # rerun: everything comes from the journal (the model id is stable across processes)
    again = glotbench("run", *hf_spec(smollm2_path), *common, "-o", str(tmp_path / "hf"), "-M", "batch_size=4")
    assert again.returncode == 0 and "no model calls" in again.stderr, again.stderr[-2000:]


def test_batched_scoring_equals_one_at_a_time(smollm2_path):
    """Shared-prefix batching (context once, options in one padded pass) gives the log-probs of
    scoring each option alone, multi-token options included."""
    import asyncio

    from glotbench.models.base import LoglikelihoodRequest
    from glotbench.models.registry import load_model

    m = load_model(f"hf:{smollm2_path.parent}", gguf_file=smollm2_path.name, batch_size=8)
    ctx = "Асуулт: Монголын нийслэл хот аль вэ?\nХариулт:"
    reqs = [LoglikelihoodRequest(ctx, " " + c) for c in ("Улаанбаатар", "Дархан", "A", "Эрдэнэт хот юм")]

    async def together():
        return await asyncio.gather(*(m.loglikelihood(r) for r in reqs))

    async def alone():
        return [await m.loglikelihood(r) for r in reqs]

    batched, single = asyncio.run(together()), asyncio.run(alone())
    assert [b.n_tokens for b in batched] == [s.n_tokens for s in single] and max(b.n_tokens for b in batched) > 2
    for b, s in zip(batched, single):
        assert abs(b.logprob - s.logprob) < 1e-3, (b, s)
        assert b.is_greedy == s.is_greedy
    # chat prompts: the tokenizer's own template, or a --chat-template text in its place
    from glotbench.models.base import GenRequest

    req = GenRequest(messages=({"role": "system", "content": "S"}, {"role": "user", "content": "Q?"}))
    assert m.render(req) == "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nQ?<|im_end|>\n<|im_start|>assistant\n"
    m.chat_template = "{% for x in messages %}[{{ x.role }}] {{ x.content }}\n{% endfor %}A:"
    assert m.render(req) == "[system] S\n[user] Q?\nA:"
    assert "chat_template_sha256" in m.settings()
    m.chat_template = None
    # the same token split as the embedded backend (lm-eval's rule)
    from glotbench.models.llamacpp import LlamaCppModel

    emb = LlamaCppModel(smollm2_path, n_ctx=512)
    try:
        for r in reqs:
            assert m.encode_pair(r.context, r.continuation) == emb.encode_pair(r.context, r.continuation)
    finally:
        asyncio.run(emb.aclose())


def test_generate_batched_with_chat_template(tmp_path, data_root, smollm2_path):
    """Generation mode: requests batched with left padding, prompts rendered with the model's own
    chat template; a batch of 3 gives the answers of one-at-a-time decoding (greedy)."""
    common = ["-t", "mm_eval.knowledge", "--limit", "3", "--max-tokens", "8", "--no-progress"]
    r = glotbench("run", *hf_spec(smollm2_path), "-M", "batch_size=3", *common, "-o", str(tmp_path / "b3"))
    assert r.returncode == 0, r.stderr[-3000:]
    one = glotbench("run", *hf_spec(smollm2_path), "-M", "batch_size=1", *common, "-o", str(tmp_path / "b1"))
    assert one.returncode == 0, one.stderr[-3000:]
    recs = [json.loads(x) for x in (tmp_path / "b3" / "samples.jsonl").read_text().splitlines()]
    assert len(recs) == 3 and all(x["status"] == "scored" for x in recs)
    texts3 = [x["outputs"][0]["text"] for x in recs]
    texts1 = [json.loads(x)["outputs"][0]["text"] for x in (tmp_path / "b1" / "samples.jsonl").read_text().splitlines()]
    assert texts3 == texts1
    assert all(t.strip() for t in texts3)
    res = json.loads((tmp_path / "b3" / "results.json").read_text())
    assert res["model"]["chat"] is True
    # the prompt is the chat template's rendering (SmolLM2: <|im_start|>user ... <|im_start|>assistant)
    assert recs[0]["outputs"][0]["input_tokens"] > 20


def _hub_cache(tmp_path: Path, gguf: Path) -> tuple[Path, str]:
    """A hub cache (models--org--name/snapshots/<sha>/, refs/main) holding SmolLM2 as saved by
    save_pretrained: what a hub download leaves on disk."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    sha = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--glotbench-test--smollm2"
    snap = repo / "snapshots" / sha
    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    # the weights are de-quantised already; drop the GGUF marker so they save as plain safetensors
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(snap)
    tok.save_pretrained(snap)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(sha)
    return tmp_path / "hub", sha


def test_hub_id_needs_revision_and_loads_offline(tmp_path, data_root, smollm2_path):
    hub, sha = _hub_cache(tmp_path, smollm2_path)
    env = {"HF_HUB_CACHE": str(hub), "HF_HUB_OFFLINE": "1"}
    common = ["-t", "mm_eval.knowledge", "--mode", "loglikelihood", "--limit", "3", "--no-progress"]
    bad = glotbench("run", "-m", "hf:glotbench-test/smollm2", *common, env=env)
    assert bad.returncode == 2, bad.stderr[-2000:]
    assert "revision" in bad.stderr and bad.stderr.strip().count("\n") < 3
    r = glotbench("run", "-m", "hf:glotbench-test/smollm2", "-M", f"revision={sha}", *common, "-o",
                  str(tmp_path / "run"), env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    assert res["model"]["revision"] == sha and res["model"]["model_id"] == f"hf:glotbench-test/smollm2@{sha}"
    assert res["tasks"]["mm_eval.knowledge"]["n_scored"] == 3


def test_bad_options_are_one_line(tmp_path, smollm2_path, data_root):
    r = glotbench("run", *hf_spec(smollm2_path), "-M", "dtype=int3", "-t", "mm_eval.knowledge", "--limit", "1")
    assert r.returncode == 2 and "dtype='int3'" in r.stderr, r.stderr[-2000:]
    r = glotbench("run", *hf_spec(smollm2_path), "-M", "colour=red", "-t", "mm_eval.knowledge", "--limit", "1")
    assert r.returncode == 2 and "colour" in r.stderr, r.stderr[-2000:]
