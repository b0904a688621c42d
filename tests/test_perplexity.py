"""A text's log-likelihood (``output_type: loglikelihood_rolling``): perplexity, bits per byte and word
perplexity, against plain re-statements from per-token log-probabilities, on the stub server's echo
(deterministic per-character log-probabilities), the hf: backend on a tiny random model (direct
torch), and (slow) the embedded model (llama-cpp-python's own logits). The windows are lm-eval's
(``lm_eval.utils.get_rolling_token_windows`` + ``make_disjoint_window``)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

SRC = str(Path(__file__).resolve().parents[1] / "src")

TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "Příliš žluťoučký kůň úpěl ďábelské ódy.",
    "Монгол хэл бол Монгол улсын албан ёсны хэл юм.",
    "中文 测试 句子",
    "  leading and trailing spaces  ",
]


def cli(*args: str, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "250", "PYTHONPATH": SRC}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)


def write_text_task(tmp_path: Path, texts=TEXTS) -> Path:
    data = tmp_path / "texts.jsonl"
    data.write_text("".join(json.dumps({"id": f"t{k}", "body": t}, ensure_ascii=False) + "\n" for k, t in enumerate(texts)),
                    encoding="utf-8")
    yaml = tmp_path / "texts.yaml"
    yaml.write_text(f"""name: test.texts
version: "1"
language: en
dataset:
  format: jsonl
  splits:
    test: {data}
fields:
  id: id
  text: body
output_type: loglikelihood_rolling
""", encoding="utf-8")
    return yaml


# ------------------------------------------------------------------ the windows


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.integers(0, 60), st.integers(1, 12))
def test_windows_are_lm_evals(n, max_len):
    lm_utils = pytest.importorskip("lm_eval.utils", reason="pip install --no-deps lm-eval")
    from glotbench.models.rolling import rolling_windows

    tokens = list(range(100, 100 + n))
    want = [lm_utils.make_disjoint_window(w) for w in lm_utils.get_rolling_token_windows(tokens, 7, max_len, 1)]
    got = rolling_windows(tokens, 7, max_len)
    assert [(list(a), list(b)) for a, b in want] == got
    assert [t for _, c in got for t in c] == tokens  # every token predicted once
    assert all(len(c) + len(x) - 1 <= max_len for c, x in got)  # the model's input fits


# ------------------------------------------------------------------ stub server (echo)


def echo_restated(text: str) -> dict:
    """The stub's echo: one token per character, log-probability -(1 + ord(c) % 7) / 10, the first
    character's null (not scored). Pooled re-statement of the three metrics."""
    lps = [-(1 + ord(c) % 7) / 10 for c in text[1:]]
    return {"ll": sum(lps), "tokens": len(lps), "bytes": len(text[1:].encode("utf-8")), "words": words(text[1:])}


def words(text: str) -> int:
    """lm-eval's word count (its wikitext task): the pieces of ``re.split(r"\\s+", text)``."""
    import re

    return len(re.split(r"\s+", text))


def pooled(parts: list[dict]) -> dict:
    ll = sum(p["ll"] for p in parts)
    return {"perplexity": math.exp(-ll / sum(p["tokens"] for p in parts)),
            "bits_per_byte": -ll / sum(p["bytes"] for p in parts) / math.log(2),
            "word_perplexity": math.exp(-ll / sum(p["words"] for p in parts))}


def test_stub_echo_perplexity_equals_the_per_token_restatement(tmp_path):
    from glotbench.testing.servers import start_stub, stop

    task = write_text_task(tmp_path)
    base, proc = start_stub("--answer", "A")
    try:
        r = cli("run", "-m", "openai:stub", "--base-url", base, "-M", "logprobs_trusted=true", "-t", str(task),
                "-o", "run", "--no-progress", "--bootstrap", "50", "--max-retries", "0", cwd=tmp_path)
    finally:
        stop(proc)
    assert r.returncode == 0, r.stderr
    assert "bits_per_byte" in r.stdout and "perplexity" in r.stdout
    t = json.loads((tmp_path / "run" / "results.json").read_text())["tasks"]["test.texts"]
    assert t["mode"] == "loglikelihood_rolling" and t["n_scored"] == len(TEXTS) and t["status"] == "ok"
    assert t["headline"] == "bits_per_byte"
    want = pooled([echo_restated(text) for text in TEXTS])
    for m in ("perplexity", "bits_per_byte", "word_perplexity"):
        assert t["metrics"][m]["value"] == pytest.approx(want[m], abs=2e-6), m
        lo, hi = t["metrics"][m]["ci95"]
        assert lo is not None and lo <= hi
    recs = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    for rec, text in zip(sorted(recs, key=lambda r: r["sample_id"]), TEXTS):
        assert rec["extracted"]["unscored_chars"] == 1  # the echoed first token has no log-probability
        assert rec["values"]["nll"] == pytest.approx(-echo_restated(text)["ll"])


def test_a_model_without_log_probabilities_is_refused_before_any_request(tmp_path):
    from glotbench.testing.servers import start_stub, stop

    task = write_text_task(tmp_path)
    base, proc = start_stub("--answer", "A")
    try:
        r = cli("run", "-m", "openai:stub", "--base-url", base, "-t", str(task), "-o", "run", "--no-progress", cwd=tmp_path)
    finally:
        stop(proc)
    assert r.returncode != 0
    assert "test.texts: a text's log-likelihood (output_type loglikelihood_rolling) needs a backend" in r.stderr + r.stdout


def test_a_record_without_its_text_is_one_line(tmp_path):
    from glotbench.errors import DataError
    from glotbench.tasks.registry import resolve

    task_file = write_text_task(tmp_path, texts=["ok"])
    (tmp_path / "texts.jsonl").write_text('{"id": "a", "body": 3}\n', encoding="utf-8")
    [task] = resolve([str(task_file)])
    with pytest.raises(DataError, match=r"record 0: field 'body' \(for text\) must be a string"):
        task.samples("test")


# ------------------------------------------------------------------ hf: tiny random model, direct torch

_missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
needs_hf = pytest.mark.skipif(bool(_missing), reason=f"the hf: backend needs {', '.join(_missing)}")


@pytest.fixture(scope="module")
def tiny_causal(tmp_path_factory):
    if _missing:
        pytest.skip(f"the hf: backend needs {', '.join(_missing)}")
    from glotbench.testing.tiny_hf import make_tiny_causal

    return make_tiny_causal(tmp_path_factory.mktemp("hub"))


def torch_text_logprob(snap: Path, text: str, max_len: int | None) -> tuple[float, int]:
    """Directly: the model's log-softmax over [prefix] + tokens in one pass (max_len None), or over
    lm-eval's disjoint windows (lm_eval.utils) of max_len tokens."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(snap)
    model = AutoModelForCausalLM.from_pretrained(snap).eval()
    prefix = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
    ids = tok(text, add_special_tokens=False).input_ids
    if max_len is None:
        windows = [([prefix], ids)]
    else:
        lm_utils = pytest.importorskip("lm_eval.utils", reason="pip install --no-deps lm-eval")
        windows = [lm_utils.make_disjoint_window(w) for w in lm_utils.get_rolling_token_windows(ids, prefix, max_len, 1)]
    total = 0.0
    with torch.no_grad():
        for ctx, cont in windows:
            inp = torch.tensor([list(ctx) + list(cont)[:-1]])
            lp = torch.log_softmax(model(input_ids=inp).logits[0].double(), dim=-1)
            for k, t in enumerate(cont):
                total += float(lp[len(ctx) - 1 + k, t])
    return total, len(ids)


@needs_hf
@pytest.mark.parametrize("max_len", [None, 16])
def test_hf_text_loglikelihood_equals_direct_torch(tiny_causal, max_len):
    from glotbench.models.base import LoglikelihoodRequest
    from glotbench.models.registry import load_model

    kw = {"max_length": max_len} if max_len else {}
    m = load_model(f"hf:{tiny_causal}", **kw)
    text = TEXTS[1]
    res = asyncio.run(m.loglikelihood(LoglikelihoodRequest(context="", continuation=text)))
    want, n = torch_text_logprob(tiny_causal, text, max_len)
    assert res.n_tokens == n == len(text.encode("utf-8"))  # ByT5's byte tokenizer
    if max_len:
        assert n > 2 * max_len  # several windows
    assert res.logprob == pytest.approx(want, rel=1e-6)


@needs_hf
def test_hf_run_of_a_text_task_pools_the_backends_numbers(tiny_causal, tmp_path):
    task = write_text_task(tmp_path, TEXTS[:3])
    r = cli("run", "-m", f"hf:{tiny_causal}", "-M", "max_length=16", "-t", str(task), "-o", "run", "--no-progress",
            "--bootstrap", "30", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    t = json.loads((tmp_path / "run" / "results.json").read_text())["tasks"]["test.texts"]
    parts = []
    for text in TEXTS[:3]:
        ll, n = torch_text_logprob(tiny_causal, text, 16)
        parts.append({"ll": ll, "tokens": n, "bytes": len(text.encode("utf-8")), "words": words(text)})
    want = pooled(parts)
    for m in ("perplexity", "bits_per_byte", "word_perplexity"):
        assert t["metrics"][m]["value"] == pytest.approx(want[m], rel=1e-5), m


# ------------------------------------------------------------------ embedded: llama-cpp-python's own logits


def llama_own_logprob(path: Path, tokens: list[int], prefix: int, max_len: int | None) -> float:
    """llama-cpp-python's own logits (``logits_all=True``, ``Llama.eval``, ``Llama.scores``), log-softmax
    in numpy: one pass over [prefix] + tokens (max_len None), or one fresh pass per lm-eval window."""
    import llama_cpp

    if max_len is None:
        windows = [([prefix], tokens)]
    else:
        lm_utils = pytest.importorskip("lm_eval.utils", reason="pip install --no-deps lm-eval")
        windows = [lm_utils.make_disjoint_window(w) for w in lm_utils.get_rolling_token_windows(tokens, prefix, max_len, 1)]
    llm = llama_cpp.Llama(model_path=str(path), n_ctx=512, logits_all=True, verbose=False, seed=0)
    total = 0.0
    try:
        for ctx, cont in windows:
            llm.reset()
            inp = list(ctx) + list(cont)[:-1]
            llm.eval(inp)
            scores = np.asarray(llm.scores[: len(inp)], dtype=np.float64)
            lp = scores - scores.max(axis=1, keepdims=True)
            lp = lp - np.log(np.exp(lp).sum(axis=1, keepdims=True))
            total += float(sum(lp[len(ctx) - 1 + k, t] for k, t in enumerate(cont)))
    finally:
        llm.close()
    return total


@pytest.mark.slow
@pytest.mark.parametrize("n_ctx", [None, 8])
def test_embedded_text_loglikelihood_equals_llama_cpp_pythons_own_logits(smollm2_path, n_ctx):
    from glotbench.models.base import LoglikelihoodRequest
    from glotbench.models.registry import load_model

    text = TEXTS[0] + " " + TEXTS[1]
    m = load_model("embedded", n_seq=1, **({"n_ctx": n_ctx} if n_ctx else {}))
    try:
        res = asyncio.run(m.loglikelihood(LoglikelihoodRequest(context="", continuation=text)))
        tokens = m.tokenize(text, add_special=False)
        prefix = m._bos
    finally:
        asyncio.run(m.aclose())
    if n_ctx:
        assert len(tokens) > 2 * n_ctx  # several windows
    want = llama_own_logprob(smollm2_path, tokens, prefix, n_ctx)
    assert res.n_tokens == len(tokens)
    assert res.logprob == pytest.approx(want, abs=2e-3)
    assert math.exp(-res.logprob / res.n_tokens) == pytest.approx(math.exp(-want / len(tokens)), rel=1e-3)
