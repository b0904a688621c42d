"""Pairwise judging: for every pair of runs and every item both answered, the judge sees the
question and the two answers twice, once in each order, and says which is better.

The judge's calls go through a journal (``OUT/journal.sqlite``, responses with role ``judge``),
like every judge call: an answer is committed the moment it arrives and is never asked for
again, so the same command rerun sends nothing and a killed one resumes where it stopped. The
verdicts are read from the journaled replies each time (parsing is cheap and deterministic).

Items. An item is (task, item id). A pair judges the items both runs answered; an item that only
one of the two answered (the other lacks it, or its record is an error) is left out of that pair
and counted (``only_a`` / ``only_b``). Verdicts and their combination into win/tie/loss:
:mod:`glotbench.judges.pairwise_verdict`. A judge request that fails after its retries leaves
the item out too (``failed``); the rerun asks again.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field
from pathlib import Path

from glotbench.engine.caller import CachedCaller, RequestFailed
from glotbench.engine.journal import Journal
from glotbench.engine.lock import journal_lock
from glotbench.engine.retry import RetryPolicy
from glotbench.errors import GlotbenchError
from glotbench.judges.pairwise_prompts import pairwise_prompt
from glotbench.judges.pairwise_runs import JOURNAL_NAME, ItemKey, RunAnswers
from glotbench.judges.pairwise_verdict import combine, kind_of, parse_pairwise_reply
from glotbench.models.base import GenRequest, Model

DEFAULT_MAX_TOKENS = 2048  # MT-Bench's judge setting (temperature 0, 2048 tokens)


@dataclass
class ItemOutcome:
    task: str
    item: str
    outcome: str  # for run A of the pair: win, tie, loss, unreadable or failed
    kind: str  # consistent, flip, half_tie, unreadable or failed
    prompt_language: str
    verdicts: list[dict] = field(default_factory=list)  # [A first, B first]: choice, reason, mt_bench, request_key
    error: str | None = None

    def to_dict(self) -> dict:
        return {"task": self.task, "item": self.item, "outcome": self.outcome, "kind": self.kind,
                "prompt_language": self.prompt_language, "verdicts": self.verdicts,
                **({"error": self.error} if self.error else {})}


@dataclass
class PairResult:
    a: int  # index into the runs
    b: int
    items: list[ItemOutcome] = field(default_factory=list)
    only_a: int = 0  # answered by A only (B lacks the item or has no answer)
    only_b: int = 0

    def outcomes(self) -> list[str]:
        """win/tie/loss (for A) of the items that count, in item order."""
        return [o.outcome for o in self.items if o.outcome in ("win", "tie", "loss")]


@dataclass
class PairwiseStats:
    judge_id: str = ""
    requests_sent: int = 0
    requests_cached: int = 0
    failed: int = 0
    english_fallback: dict[str, str] = field(default_factory=dict)  # task -> its language, judged in English
    stopped: str | None = None  # why the judge's requests were stopped (refused credentials, a dead server)


def pair_keys(a: RunAnswers, b: RunAnswers) -> tuple[list[ItemKey], int, int]:
    """(the items both answered, in a stable order; how many only A answered; only B)."""
    shared = sorted(set(a.answers) & set(b.answers), key=_order)
    return shared, len(set(a.answers) - set(b.answers)), len(set(b.answers) - set(a.answers))


def _order(key: ItemKey):
    task, item = key
    return (task, 0, int(item), item) if item.isdigit() else (task, 1, 0, item)


def default_output(runs: list[Path], judge_id: str) -> Path:
    """Deterministic, like a run's: the same runs and judge land in the same folder (resume), in
    whatever order the runs were given (``A B`` and ``B A`` judge the same comparisons: every item is
    sent in both positions, so the judge's requests are the same and the second order sends none)."""
    from glotbench.models.base import canonical_json, sha256_hex

    ident = {"runs": sorted(str(Path(p).resolve()) for p in runs), "judge": judge_id}
    return Path("runs") / "pairwise" / sha256_hex(canonical_json(ident))[:10]


Plan = list[tuple[PairResult, list[ItemKey]]]


def plan_pairs(runs: list[RunAnswers]) -> Plan:
    """Every pair (i < j: run i is "A" against every later run j) with the items both answered;
    one line when there are fewer than two runs or no pair shares an item."""
    if len(runs) < 2:
        raise GlotbenchError("judge-pairwise compares two or more runs (got one)")
    plan = []
    for i, j in itertools.combinations(range(len(runs)), 2):
        shared, only_a, only_b = pair_keys(runs[i], runs[j])
        plan.append((PairResult(a=i, b=j, only_a=only_a, only_b=only_b), shared))
    if not any(shared for _, shared in plan):
        names = " and ".join(r.label for r in runs) if len(runs) == 2 else "any two of " + ", ".join(r.label for r in runs)
        raise GlotbenchError(f"no shared items: {names} have no item (same task, same item id) that both answered")
    return plan


def judge_pairwise(runs: list[RunAnswers], judge_model: Model, out_dir: Path, *, concurrency: int | None = None,
                   max_tokens: int = DEFAULT_MAX_TOKENS, timeout: float | None = None, max_retries: int = 4,
                   wait: bool = False, on_item=None, plan: Plan | None = None) -> tuple[list[PairResult], PairwiseStats]:
    """Judge every pair of ``runs`` (``plan``: :func:`plan_pairs` of them, made here when not given)."""
    plan = plan or plan_pairs(runs)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    lock = journal_lock(out_dir / JOURNAL_NAME, wait=wait)
    try:
        journal = Journal(out_dir / JOURNAL_NAME)
        try:
            journal.set_meta("pairwise", {"runs": [str(r.path) for r in runs], "judge": judge_model.settings()})
            return _judge_all(runs, plan, judge_model, journal, concurrency, max_tokens, timeout, max_retries, on_item)
        finally:
            journal.close()
    finally:
        lock.release()


def _judge_all(runs, plan, judge_model: Model, journal: Journal, concurrency, max_tokens, timeout, max_retries,
               on_item):
    stats = PairwiseStats(judge_id=judge_model.model_id)
    policy = RetryPolicy(max_attempts=max(1, max_retries + 1), timeout=timeout or RetryPolicy.timeout)
    caller = CachedCaller(judge_model, journal, role="judge", policy=policy,
                          concurrency=concurrency or judge_model.max_parallel or 8)

    async def one(pair: PairResult, key: ItemKey) -> ItemOutcome:
        a, b = runs[pair.a].answers[key], runs[pair.b].answers[key]
        prompt, fell_back = pairwise_prompt(a.lang)
        if fell_back:
            stats.english_fallback[key[0]] = str(a.lang)
        requests = [GenRequest(messages=tuple(prompt.render(a.question, first.text, second.text)),
                               max_tokens=max_tokens, temperature=0.0)
                    for first, second in ((a, b), (b, a))]
        keys = [r.key(judge_model.model_id) for r in requests]
        replies = await asyncio.gather(*(caller(r, task=key[0], sample_id=key[1]) for r in requests),
                                       return_exceptions=True)
        stop = next((e for e in replies if isinstance(e, BaseException) and not isinstance(e, RequestFailed)), None)
        if stop is not None:  # the run was stopped (refused credentials, the breaker): raised once all are back
            raise stop
        failed = next((e for e in replies if isinstance(e, RequestFailed)), None)
        if failed is not None:
            stats.failed += 1
            out = ItemOutcome(key[0], key[1], "failed", "failed", prompt.language, error=f"judge request failed: {failed}")
        else:
            verdicts = [parse_pairwise_reply(r.text) for r in replies]
            choices = [v.choice for v in verdicts]
            out = ItemOutcome(key[0], key[1], combine(*choices), kind_of(*choices), prompt.language,
                              [{**v.to_dict(), "first": runs[first].label, "request_key": k}
                               for v, k, first in zip(verdicts, keys, (pair.a, pair.b))])
        if on_item:
            on_item()
        return out

    async def go():
        try:
            done = await asyncio.gather(*(one(pair, k) for pair, shared in plan for k in shared), return_exceptions=True)
            stopped = next((e for e in done if isinstance(e, BaseException)), None)
            if stopped is not None:  # every item is back (none left unretrieved); the first reason stops the command
                raise stopped
            it = iter(done)
            for pair, shared in plan:
                pair.items = [next(it) for _ in shared]
        finally:
            await judge_model.aclose()

    try:
        asyncio.run(go())
    finally:
        stats.requests_sent, stats.requests_cached = caller.stats.sent, caller.stats.cached
        stats.stopped = caller.guard.stopped
    return [pair for pair, _ in plan], stats
