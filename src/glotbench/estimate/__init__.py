"""Cost estimates before a run: token counts (exact where a tokenizer is available offline,
flagged approximations otherwise), a user-editable price table, tokens per word per language."""

from glotbench.estimate.cost import CostEstimate, estimate_cost, tokens_per_word
from glotbench.estimate.prices import Price, PriceTable, load_prices
from glotbench.estimate.tokens import TokenCounter, get_token_counter, llama_cpp_counter
from glotbench.estimate.words import count_words, words

__all__ = [
    "CostEstimate",
    "Price",
    "PriceTable",
    "TokenCounter",
    "count_words",
    "estimate_cost",
    "get_token_counter",
    "llama_cpp_counter",
    "load_prices",
    "tokens_per_word",
    "words",
]
