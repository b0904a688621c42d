"""Per-task latency and output speed from the journal (Czech-Bench §5.3 logs the average inference
time per benchmark; the median, the 90th percentile and output tokens per second are glotbench's
additions beside it).

Each model request's seconds are the journal's ``responses.latency_s``: the time the successful
call took, measured around the backend call (engine/caller.py). With requests in flight at once
(``--concurrency``) they overlap, so the sum of latencies is not the run's wall time; an answer
reused from the shared response cache (``--cache``) has no latency and is counted in ``n_untimed``.
``output_tokens_per_s`` is the timed requests' output tokens over their summed seconds (a request
without a token count adds its seconds and no tokens only when the backend reports none at all:
then the rate is None)."""

from __future__ import annotations

from typing import Any

import numpy as np


def _r(x: float | None) -> float | None:
    return None if x is None else round(float(x), 6)


def latency_summary(requests: list[tuple[str, int | None]], latencies: dict[str, float]) -> dict[str, Any]:
    """``requests``: (request key, output tokens or None) per model request of the task's items;
    ``latencies``: the journal's seconds per key. Counts, mean (Czech-Bench's average inference
    time), median and 90th percentile (numpy's linear interpolation) in seconds, and output tokens/s."""
    timed = [(latencies[k], tok) for k, tok in requests if k in latencies]
    secs = np.array([t for t, _ in timed], dtype=float)
    out: dict[str, Any] = {"n_requests": len(requests), "n_timed": len(timed), "n_untimed": len(requests) - len(timed),
                           "mean_s": None, "median_s": None, "p90_s": None, "output_tokens_per_s": None}
    if not timed:
        return out
    out.update(mean_s=_r(secs.mean()), median_s=_r(np.median(secs)), p90_s=_r(np.percentile(secs, 90)))
    counted = [(t, tok) for t, tok in timed if tok is not None]
    total_s = sum(t for t, _ in counted)
    if counted and total_s > 0:
        out["output_tokens_per_s"] = _r(sum(tok for _, tok in counted) / total_s)
    return out
