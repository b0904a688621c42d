"""Rolling windows for the log-likelihood of a whole text (lm-eval's ``loglikelihood_rolling``).

A backend asked for log P(text) (a :class:`~glotbench.models.base.LoglikelihoodRequest` with an
empty context) scores every token of the text exactly once. lm-eval's rule, restated
(``lm_eval.utils.get_rolling_token_windows(tokens, prefix_token, max_seq_len, context_len=1)``
then ``make_disjoint_window``):

* the first window predicts the first ``min(max_len, n)`` tokens, conditioned on the prefix token
  alone (BOS, or EOS where the tokenizer has no BOS);
* each later window predicts the next ``max_len`` tokens (fewer at the end) and is conditioned on
  the tokens just before them, as many as fill the model's input to ``max_len`` tokens;
* windows are disjoint in what they predict: the text's log-likelihood is the sum over windows.

Each window is ``(context tokens, continuation tokens)``; the model's input is
``context + continuation[:-1]``, at most ``max_len`` tokens.
"""

from __future__ import annotations


def rolling_windows(tokens: list[int], prefix_token: int, max_len: int) -> list[tuple[list[int], list[int]]]:
    """The disjoint ``(context, continuation)`` windows covering ``tokens`` (none for an empty text)."""
    if max_len < 1:
        raise ValueError(f"rolling windows need max_len >= 1, not {max_len}")
    tokens = list(tokens)
    if not tokens:
        return []
    first = min(max_len, len(tokens))
    windows = [([prefix_token], tokens[:first])]
    done = first
    while done < len(tokens):
        n = min(len(tokens) - done, max_len)
        end = done + n
        windows.append((tokens[max(0, end - max_len - 1): end - n], tokens[end - n: end]))
        done = end
    return windows
