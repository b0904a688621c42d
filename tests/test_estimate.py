"""Cost estimates: price table, token counting with honest fallbacks, words per language."""

from __future__ import annotations

import math

import pytest

from glotbench.errors import DataError, ModelError
from glotbench.estimate import (
    count_words,
    estimate_cost,
    get_token_counter,
    llama_cpp_counter,
    load_prices,
    tokens_per_word,
    words,
)


def _split_count(text: str) -> int:
    return len(text.split())


# --- price table ---------------------------------------------------------------------------

def test_shipped_prices_quote_the_thesis():
    prices = load_prices()
    p = prices.get("gpt-3.5-turbo-0125")
    assert (p.input, p.output, p.currency, p.taken) == (0.5, 1.5, "USD", "2024-05")
    assert prices.get("gpt-3.5-turbo") is p  # alias
    assert prices.get("openai/gpt-4o").input == 5.0  # provider prefix ignored
    assert prices.get("anthropic:claude-3-haiku").output == 1.25
    assert prices.get("no-such-model") is None
    # Appendix B (Table B.1, input tokens only) totals: GPT-4 Turbo / GPT-3.5 Turbo = 604.82 / 30.24
    # and Claude 3 Opus / Haiku = 994.00 / 16.57; the shipped input prices give the same ratios.
    assert prices.get("gpt-4-turbo").input / p.input == pytest.approx(604.82 / 30.24, rel=1e-3)
    assert prices.get("claude-3-opus").input / prices.get("claude-3-haiku").input == pytest.approx(994.00 / 16.57, rel=1e-3)


def test_prices_file_overrides_and_extends(tmp_path):
    f = tmp_path / "prices.yaml"
    f.write_text(
        "currency: EUR\nmodels:\n"
        "  gpt-4o:\n    input: 2.5\n    output: 10\n    taken: '2025-01'\n"
        "  my-model:\n    input: 1\n    output: 2\n    aliases: [mine]\n",
        encoding="utf-8",
    )
    prices = load_prices(f)
    assert prices.get("gpt-4o").input == 2.5 and prices.get("gpt-4o").currency == "EUR"
    assert prices.get("gpt-4o-2024-05-13").input == 5.0  # shipped dated entry untouched
    assert prices.get("mine").output == 2.0
    assert prices.get("gpt-3.5-turbo") is not None  # shipped entries stay
    assert load_prices(f, replace=True).get("gpt-3.5-turbo") is None


@pytest.mark.parametrize(
    "text,match",
    [
        ("models:\n  m:\n    input: 1\n", r"model 'm': missing field 'output'"),
        ("models:\n  m:\n    input: -1\n    output: 1\n", r"model 'm': field 'input' must be a number >= 0"),
        ("models: [1, 2]\n", "'models' mapping"),
        ("models:\n  m: [\n", "not valid YAML"),
    ],
)
def test_bad_price_files(tmp_path, text, match):
    f = tmp_path / "bad.yaml"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match=match) as err:
        load_prices(f)
    assert str(f) in str(err.value) and "\n" not in str(err.value)


def test_missing_price_file(tmp_path):
    with pytest.raises(DataError, match="price file not found"):
        load_prices(tmp_path / "nope.yaml")


# --- estimate ----------------------------------------------------------------------------

def test_estimate_with_exact_counter():
    prompts = ["one two three four", "five six"]
    est = estimate_cost(prompts, 10, "gpt-3.5-turbo-0125", count_tokens=_split_count)
    assert (est.n_requests, est.input_tokens, est.output_tokens) == (2, 6, 20)
    assert est.approximate is False and est.token_method == "_split_count"
    assert est.input_cost == pytest.approx(6 * 0.5 / 1e6)
    assert est.output_cost == pytest.approx(20 * 1.5 / 1e6)
    assert est.total_cost == pytest.approx(est.input_cost + est.output_cost)
    assert est.currency == "USD" and est.price_taken == "2024-05"
    assert est.words == 6 and est.tokens_per_word == pytest.approx(1.0)
    per = estimate_cost(prompts, [5, 7], "gpt-3.5-turbo", count_tokens=_split_count, per_request_overhead=3)
    assert per.output_tokens == 12 and per.input_tokens == 6 + 2 * 3


def test_estimate_falls_back_to_flagged_approximation(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # empty cache: nothing offline
    est = estimate_cost(["x" * 40, "y" * 41], 0, "gpt-4o")
    assert est.approximate is True and est.token_method == "chars/4"
    assert est.input_tokens == 10 + 11
    assert any("o200k_base" in n and "approximated" in n for n in est.notes)
    assert est.total_cost == pytest.approx(21 * 5.0 / 1e6)


def test_model_without_tokenizer_is_skipped_with_a_note():
    def count_tokens(text):  # like Model.count_tokens of an API backend
        return None

    c = get_token_counter(None, count_tokens)
    assert c.approximate and "no offline tokenizer" in c.note


def test_unknown_model_still_counts_tokens():
    est = estimate_cost(["abcd"], 1, "mystery-7b")
    assert est.input_tokens == 1 and est.total_cost is None
    assert any("no price for 'mystery-7b'" in n for n in est.notes)


def test_estimate_bad_input():
    with pytest.raises(DataError, match="2 prompts but 1"):
        estimate_cost(["a", "b"], [1], "gpt-4o")
    with pytest.raises(DataError, match="prompt #1 is int"):
        estimate_cost(["a", 3], 1, "gpt-4o")


def test_tiktoken_when_cached():
    from glotbench.estimate.tokens import tiktoken_cached

    pytest.importorskip("tiktoken")
    if not tiktoken_cached("cl100k_base"):
        pytest.skip("tiktoken's cl100k_base encoding is not cached offline (downloaded at first use)")
    c = get_token_counter("tiktoken:cl100k_base")
    assert not c.approximate and c("hello world") == 2


def test_embedded_gguf_counts_tokens():
    llama_cpp = pytest.importorskip("llama_cpp")
    from glotbench.models.embedded import default_gguf_path

    try:
        path = default_gguf_path()
    except ModelError as err:
        pytest.skip(str(err))
    llm = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    counter = llama_cpp_counter(llm)
    assert counter("Hello world") == 2 and not counter.approximate
    en = tokens_per_word(["The capital of the Czech Republic is Prague."], counter)
    cs = tokens_per_word(["Hlavním městem České republiky je Praha."], counter)
    assert en["approximate"] is False and cs["tokens_per_word"] > en["tokens_per_word"]
    est = estimate_cost(["Hlavním městem České republiky je Praha."], 5, "embedded", count_tokens=counter)
    assert est.token_method == "llama.cpp" and est.total_cost == 0.0


# --- words ---------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "text,expected",
    [
        ("Kossuth-díj, a magyar állami kitüntetés: 3,14 és 1.5!", 8),  # hu: hyphen compound, decimals
        ("Příliš žluťoučký kůň úpěl ďábelské ódy.", 6),  # cs diacritics
        ("Монгол Улсын нийслэл Улаанбаатар хотод өвөл хүйтэн үү?", 8),  # mn Cyrillic with ө ү
        ("我爱北京 GPT-4 模型", 7),  # zh: one per Han character, Latin word kept whole
        ("don't stop_now", 3),
        ("Pr\u0131\u0301liš", 1),  # combining accent stays inside the word
    ],
)
def test_word_counts(text, expected):
    assert count_words(text) == expected, words(text)


def test_tokens_per_word_default_is_flagged():
    r = tokens_per_word(["abcdefgh ijkl"])
    assert r["approximate"] is True and r["tokens"] == 4 and r["words"] == 2 and r["tokens_per_word"] == 2
    assert math.isnan(tokens_per_word([""])["tokens_per_word"])
