"""The resume bound of docs/footguns.md, checked at the moment each request leaves: a request that
was sent but whose answer is not committed yet is one a kill would send again, and those may never
be more than the run's concurrency (model and judge together, for a judged run).

The answers of one event-loop iteration are committed at the start of the next (group commit). No
request may leave before the commit of the answer that freed its slot: with Python 3.12+ aiohttp
writes a request to the socket as soon as it is made (its writer task starts eagerly), so without
the wait (``Journal.committed``, awaited by ``CachedCaller``) the next request was on the wire while
the previous answer still sat in memory, twice the bound at a kill. The model here counts, when each request arrives, the requests in flight plus the
answers given but not yet in the journal (read through a second connection, as a resume would)."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from glotbench.engine import runner
from glotbench.engine.caller import CachedCaller
from glotbench.engine.journal import Journal
from glotbench.engine.retry import RetryPolicy
from glotbench.models.base import GenRequest, GenResult, Model
from glotbench.tasks.registry import resolve
from glotbench.engine.plan import task_plans
from glotbench.settings import RunSettings


def _task(tmp_path, name: str, questions: list[str], scoring: str):
    """A CSV task of ``questions`` (one item each), scored as ``scoring`` (YAML lines) says."""
    csv = tmp_path / "items.csv"
    csv.write_text("qid,problem,gold\n" + "".join(f"q{i},{q},x\n" for i, q in enumerate(questions)), encoding="utf-8")
    yaml = tmp_path / f"{name}.yaml"
    yaml.write_text(f"name: {name}\nversion: '1.0'\nlanguage: zh\n"
                    f"dataset: {{format: csv, splits: {{test: {csv}}}}}\n"
                    "fields: {id: qid, question: problem, target: gold}\n"
                    "prompt: {user: '{{ question }}'}\n" + scoring, encoding="utf-8")
    [task] = resolve([str(yaml)])
    return task


class Counting(Model):
    """Answers after one loop iteration; records the sent-but-uncommitted requests at every send."""

    def __init__(self, model_id: str, db, ledger: dict):
        self.model_id, self.is_chat, self.db, self.ledger = model_id, True, db, ledger

    def _committed(self) -> int:
        con = sqlite3.connect(self.db)
        try:
            return con.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        finally:
            con.close()

    async def generate(self, request):
        led = self.ledger
        led["in_flight"] += 1
        led["peak"] = max(led["peak"], led["in_flight"] + led["answered"] - self._committed())
        await asyncio.sleep(0)  # a server answers in a later iteration
        led["in_flight"] -= 1
        led["answered"] += 1
        return GenResult(text="4", input_tokens=1, output_tokens=1, finish_reason="stop")


def _run(tmp_path, task, concurrency: int, judge_concurrency: int | None = None) -> dict:
    """Run every item of ``task`` (judged when ``judge_concurrency`` is given); the ledger after."""
    journal = Journal(tmp_path / "journal.sqlite")
    ledger = {"in_flight": 0, "answered": 0, "peak": 0}  # one ledger: model and judge requests together
    model = Counting("model", journal.path, ledger)
    judge = Counting("judge", journal.path, ledger) if judge_concurrency else None
    try:
        runs = [tp.task_run(journal) for tp in task_plans([task], RunSettings(), {"model_id": model.model_id})]
        asyncio.run(runner.execute(runs, model, journal, concurrency=concurrency, policy=RetryPolicy(),
                                   judge_model=judge, judge_concurrency=judge_concurrency))
    finally:
        journal.close()
    return ledger


@pytest.mark.parametrize("concurrency", [1, 3])
def test_sent_but_uncommitted_requests_never_exceed_the_concurrency(tmp_path, concurrency):
    task = _task(tmp_path, "commit_first", [f"{i}+{i}?" for i in range(12)], "scorer: exact_match\nmetrics: [exact_match]\n")
    ledger = _run(tmp_path, task, concurrency)
    assert ledger["answered"] == 12
    assert ledger["peak"] <= concurrency


def test_judged_run_keeps_the_bound_of_both_concurrencies(tmp_path):
    """Each item sends the model's request, then the judge's: sent-but-uncommitted requests of both
    stay within the two concurrencies together (the bound docs/footguns.md gives a judged run)."""
    task = _task(tmp_path, "commit_first_judged", [f"问题{i}？" for i in range(12)],
                 "scorer: label\nmetrics: [factuality_co]\ntask_class: glotbench.benchmarks.factuality.task:SimpleQATask\n"
                 "options: {grader: chinese_simpleqa}\n")
    ledger = _run(tmp_path, task, 2, judge_concurrency=2)
    assert ledger["answered"] == 24
    assert ledger["peak"] <= 2 + 2


def test_requests_sent_through_a_caller_alone_keep_the_bound(tmp_path):
    """``glotbench judge``, translate and build send through ``CachedCaller`` without the run's
    workers (all requests gathered at once, the semaphore queueing them): the same bound."""
    journal = Journal(tmp_path / "journal.sqlite")
    ledger = {"in_flight": 0, "answered": 0, "peak": 0}
    model = Counting("model", journal.path, ledger)

    async def go() -> None:
        caller = CachedCaller(model, journal, concurrency=2, policy=RetryPolicy())
        await asyncio.gather(*(caller(GenRequest(prompt=f"q{i}")) for i in range(12)))

    try:
        asyncio.run(go())
    finally:
        journal.close()
    assert ledger["answered"] == 12
    assert ledger["peak"] <= 2
