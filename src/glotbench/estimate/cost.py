"""What a run will cost before it is run: requests, tokens in and out, money.

As in Czech-Bench (Appendix B: "The estimates were computed by iterating over the datasets,
generating the evaluation prompts, and counting their included tokens"), input tokens are
counted on the rendered prompts; unlike it, expected output tokens are priced too (the thesis
ignored them and notes its GPT estimates came out "slightly optimistic").
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable, Sequence

from glotbench.errors import DataError
from glotbench.estimate.prices import Price, PriceTable, load_prices
from glotbench.estimate.tokens import TokenCounter, get_token_counter
from glotbench.estimate.words import count_words


@dataclass
class CostEstimate:
    model: str
    n_requests: int
    input_tokens: int
    output_tokens: int
    token_method: str  # "tiktoken:cl100k_base", "llama.cpp", "chars/4", ...
    approximate: bool  # True when input tokens are an approximation
    words: int  # words in the prompts (see estimate.words)
    tokens_per_word: float  # input tokens / words (NaN when there are no words)
    input_cost: float | None = None  # None when the model has no price entry
    output_cost: float | None = None
    total_cost: float | None = None
    currency: str | None = None
    price_taken: str | None = None  # when the price was recorded
    price_source: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def estimate_cost(
    prompts: Sequence[str],
    expected_output_tokens: int | Sequence[int],
    model: str,
    prices: PriceTable | None = None,
    count_tokens: Callable[[str], int] | TokenCounter | None = None,
    per_request_overhead: int = 0,
    allow_download: bool = False,
) -> CostEstimate:
    """Estimate one model's cost for ``prompts`` (one rendered prompt per request).

    ``expected_output_tokens``: one number for every request, or one per request.
    ``per_request_overhead``: tokens a chat template adds to each request (role markers etc.),
    0 by default as in the thesis. ``count_tokens`` overrides the price table's tokenizer.
    A model missing from the price table still gets token counts; its costs are None and a
    note says so.
    """
    prices = prices or load_prices()
    n = len(prompts)
    if isinstance(expected_output_tokens, int):
        if expected_output_tokens < 0:
            raise DataError(f"estimate: expected_output_tokens must be >= 0, got {expected_output_tokens}")
        out_tokens = expected_output_tokens * n
    else:
        if len(expected_output_tokens) != n:
            raise DataError(
                f"estimate: {n} prompts but {len(expected_output_tokens)} expected_output_tokens values"
            )
        out_tokens = int(sum(expected_output_tokens))
    for i, p in enumerate(prompts):
        if not isinstance(p, str):
            raise DataError(f"estimate: prompt #{i} is {type(p).__name__}, expected a string")
    price: Price | None = prices.get(model)
    counter = get_token_counter(price.tokenizer if price else None, count_tokens, allow_download)
    in_tokens = sum(counter(p) for p in prompts) + per_request_overhead * n
    n_words = sum(count_words(p) for p in prompts)
    est = CostEstimate(
        model=model,
        n_requests=n,
        input_tokens=int(in_tokens),
        output_tokens=int(out_tokens),
        token_method=counter.method,
        approximate=counter.approximate,
        words=n_words,
        tokens_per_word=(in_tokens / n_words) if n_words else float("nan"),
    )
    if counter.note:
        est.notes.append(counter.note)
    if price is None:
        est.notes.append(f"no price for {model!r} in the price table; add it with --prices FILE")
    else:
        ic, oc = price.cost(in_tokens, out_tokens)
        est.input_cost, est.output_cost, est.total_cost = ic, oc, ic + oc
        est.currency, est.price_taken, est.price_source = price.currency, price.taken, price.source
    return est


def tokens_per_word(texts: Sequence[str], count_tokens: Callable[[str], int] | TokenCounter | None = None) -> dict:
    """Tokens per word over ``texts`` with the given counter (chars/4 if none), with the method."""
    counter = get_token_counter(None, count_tokens)
    toks = sum(counter(t) for t in texts)
    n_words = sum(count_words(t) for t in texts)
    return {
        "tokens": toks,
        "words": n_words,
        "tokens_per_word": toks / n_words if n_words else float("nan"),
        "method": counter.method,
        "approximate": counter.approximate,
    }
