"""`glotbench estimate` on real items: the embedded model's tokenizer, and the flagged approximation."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from glotbench.cli import _register, app
from glotbench.errors import GlotbenchError
from glotbench.report.estimate import request_text
from glotbench.tasks.registry import resolve
from glotbench.tasks.request_settings import RequestSettings


def _cli(*args):
    _register()
    return CliRunner().invoke(app, ["runs", "estimate", *map(str, args)])


def _texts(task_name: str, limit: int, chat: bool = True, samples: int = 1) -> list[str]:
    task = resolve([task_name])[0]
    settings = RequestSettings(limit=limit, samples=samples)
    return [request_text(r) for s in task.samples(limit=limit) for r in task.requests(s, mode="generate", chat=chat, settings=settings)]


def test_embedded_tokenizer_counts_real_prompts(data_root, smollm2_path, tmp_path):
    import llama_cpp

    from glotbench.estimate import llama_cpp_counter

    res = _cli("--model", "embedded", "--tasks", "czech_bench.klokanek,mm_eval.knowledge", "--limit", 6, "--json", tmp_path / "e.json")
    assert res.exit_code == 0, (res.output, res.exception)
    est = json.loads((tmp_path / "e.json").read_text())
    # an independent count: the same GGUF's tokenizer loaded vocab-only, over prompts built as a run builds them
    counter = llama_cpp_counter(llama_cpp.Llama(model_path=str(smollm2_path), vocab_only=True, verbose=False))
    by_task = {t["task"]: t for t in est["tasks"]}
    for name, max_tokens in (("czech_bench.klokanek", 32), ("mm_eval.knowledge", 24)):
        texts = _texts(name, 6)
        e = by_task[name]["estimate"]
        assert e["n_requests"] == 6
        assert e["input_tokens"] == sum(counter(t) for t in texts)
        assert e["output_tokens"] == 6 * max_tokens  # default: max_tokens per request
        assert not e["approximate"]
    assert est["token_method"].startswith("llama.cpp") and not est["approximate"]
    assert est["total_cost"] == 0.0  # `embedded` is priced at 0
    assert set(est["per_language"]) == {"cs", "mn"}
    assert est["per_language"]["cs"]["prompt"]["tokens_per_word"] > 1.0
    assert "exact tokenizer" in res.output and "Tokens per word per language" in res.output


def test_approximation_is_flagged_and_priced(data_root, tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))  # no cached encoding: no exact count
    res = _cli("--model", "openai:gpt-4o", "--tasks", "mm_eval.knowledge", "--limit", 5, "--samples", 2,
               "--json", tmp_path / "e.json")
    assert res.exit_code == 0, (res.output, res.exception)
    est = json.loads((tmp_path / "e.json").read_text())
    texts = _texts("mm_eval.knowledge", 5, samples=2)
    assert len(texts) == 10  # Best-of-2 doubles the requests
    in_tok = sum(math.ceil(len(t) / 4) for t in texts)
    assert est["n_requests"] == 10 and est["input_tokens"] == in_tok and est["approximate"]
    assert est["output_tokens"] == 10 * 24
    # shipped price: GPT-4o $5 / $15 per 1M tokens (Czech-Bench thesis, May 2024)
    assert est["total_cost"] == pytest.approx(in_tok * 5 / 1e6 + 240 * 15 / 1e6)
    assert "APPROXIMATE" in res.output and "ceil(characters / 4)" in res.output


def test_output_token_bases_and_prices_file(data_root, tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    prices = tmp_path / "p.yaml"
    prices.write_text("models:\n  my-model: {input: 1.0, output: 2.0, source: test, taken: 2025-01}\n", encoding="utf-8")
    res = _cli("--model", "my-model", "--tasks", "czech_bench.klokanek", "--limit", 4, "--output-tokens", "answer",
               "--prices", prices, "--json", tmp_path / "e.json")
    assert res.exit_code == 0, (res.output, res.exception)
    est = json.loads((tmp_path / "e.json").read_text())
    assert est["output_tokens"] == 4  # the gold answer is one letter: ceil(1 / 4) = 1 token each
    assert est["total_cost"] == pytest.approx(est["input_tokens"] * 1.0 / 1e6 + 4 * 2.0 / 1e6)
    assert "gold answer" in res.output
    res = _cli("--model", "my-model", "--tasks", "czech_bench.klokanek", "--limit", 4, "--output-tokens", "7", "--prices", prices)
    assert res.exit_code == 0 and "7 tokens per request" in res.output
    bad = _cli("--model", "my-model", "--tasks", "czech_bench.klokanek", "--output-tokens", "lots")
    assert isinstance(bad.exception, GlotbenchError) and "--output-tokens" in str(bad.exception)


def test_the_run_flags_it_takes_are_settings_in_both_spellings(data_root, tmp_path):
    """num_fewshot, max_tokens, samples, mode, split and seed are the run's own fields (declared once, in
    RunSettings), unlisted here: --set NAME=VALUE and the run's flag give the same estimate."""
    common = ("--model", "gpt-4o", "--tasks", "mm_eval.knowledge", "--limit", 4)
    a = _cli(*common, "--set", "max_tokens=7,samples=2", "--json", tmp_path / "a.json")
    b = _cli(*common, "--max-tokens", 7, "--samples", 2, "--json", tmp_path / "b.json")
    assert a.exit_code == b.exit_code == 0, (a.output, b.output)
    ea, eb = (json.loads((tmp_path / f).read_text()) for f in ("a.json", "b.json"))
    assert ea["tasks"] == eb["tasks"] and ea["n_requests"] == 8 and ea["output_tokens"] == 8 * 7
    help_text = _cli("--help").output
    assert "--max-tokens" not in help_text and "max_tokens:" in help_text
    bad = _cli(*common, "--set", "samples=two")
    assert bad.exit_code != 0 and "samples" in str(bad.exception or bad.output)
