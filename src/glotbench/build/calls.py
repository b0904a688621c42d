"""Model calls of the `glotbench build` steps, through the run journal.

Every step that asks a model turns its work into a list of :class:`Call` (an item id plus a
:class:`~glotbench.models.base.GenRequest`) and hands it to :func:`run_calls`, which sends them
through the engine's :class:`~glotbench.engine.caller.CachedCaller` and
:class:`~glotbench.engine.journal.Journal` (content-hashed keys: model identity + full request).
A response is committed the moment it arrives, so a step killed part-way and run again sends only
what is not yet in the journal. :func:`estimate` is the ``--dry-run`` count: how many calls a step
makes and how many of them the journal already answers.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from glotbench.build.provenance import prompt_sha256
from glotbench.engine.caller import CachedCaller, RequestFailed
from glotbench.engine.journal import Journal
from glotbench.engine.lock import journal_lock
from glotbench.engine.retry import RetryPolicy
from glotbench.models.base import GenRequest, Model

JOURNAL_NAME = "build.journal.sqlite"


@dataclass(frozen=True)
class Call:
    item: str  # the item (or passage, or pair) this call is for: the journal's sample_id
    request: GenRequest

    @property
    def prompt_sha256(self) -> str:
        """sha256 of the prompt as sent (the messages' contents, in order)."""
        r = self.request
        text = r.prompt if r.prompt is not None else "\n\n".join(str(m.get("content", "")) for m in r.messages or ())
        return prompt_sha256(text)


@dataclass
class CallReport:
    sent: int = 0
    cached: int = 0  # answered by the journal before this step ran
    failed: int = 0
    repeated: int = 0  # the same request again within this step (e.g. a Swiss pair met twice): no call, no journal hit
    errors: dict[str, str] = field(default_factory=dict)  # item -> error message

    def line(self) -> str:
        again = f" · repeated in this run {self.repeated}" if self.repeated else ""
        return f"calls sent {self.sent} · from the journal {self.cached}{again} · failed {self.failed}"


def journal_path(output: Path, journal: Path | None = None) -> Path:
    """The journal a step uses: ``--journal`` or ``build.journal.sqlite`` beside its output, so the
    steps of one build share one journal."""
    return Path(journal) if journal else Path(output).parent / JOURNAL_NAME


def chat(text: str, *, max_tokens: int, system: str | None = None) -> GenRequest:
    msgs = ({"role": "system", "content": system},) if system else ()
    return GenRequest(messages=msgs + ({"role": "user", "content": text},), max_tokens=max_tokens, temperature=0.0)


class Session:
    """One model and one journal for a step whose calls come in batches (Swiss rounds): one event
    loop for all of them, so an HTTP client bound to it lives across batches."""

    def __init__(self, model: Model, journal: Path, *, step: str, role: str = "model", concurrency: int = 4,
                 policy: RetryPolicy | None = None, wait: bool = False):
        self.model, self.step = model, step
        self.lock = journal_lock(Path(journal), wait=wait)  # the run lock of the journal's folder
        try:
            self.journal = Journal(journal)
        except BaseException:
            self.lock.release()
            raise
        self.loop = asyncio.new_event_loop()
        self.report = CallReport()
        self.caller = CachedCaller(model, self.journal, role=role, policy=policy or RetryPolicy(max_attempts=3),
                                   concurrency=concurrency)

    def run(self, calls: list[Call]) -> dict[str, str]:
        """``{item: reply text}``; a failed call is absent (its error is in ``report.errors``)."""

        async def one(c: Call):
            try:
                return c.item, (await self.caller(c.request, task=f"build:{self.step}", sample_id=c.item)).text or ""
            except RequestFailed as err:
                self.report.errors[c.item] = str(err)
                return c.item, None

        async def go():
            return await asyncio.gather(*(one(c) for c in calls))

        results = self.loop.run_until_complete(go())
        st = self.caller.stats
        self.report.sent, self.report.failed = st.sent, st.failed
        self.report.cached = st.cached - st.repeat_hits
        self.report.repeated = st.repeat_hits + st.inflight_shared
        return {k: v for k, v in results if v is not None}

    def close(self) -> None:
        try:
            self.loop.run_until_complete(self.model.aclose())
        finally:
            self.loop.close()
            self.journal.close()
            self.lock.release()


def run_calls(model: Model, journal: Path, calls: list[Call], *, step: str, role: str = "model",
              concurrency: int = 4, policy: RetryPolicy | None = None, wait: bool = False) -> tuple[dict[str, str], CallReport]:
    """Send ``calls`` through the journal; returns ``{item: reply text}`` (failed calls are absent,
    their error is in the report) and the accounting. Calls for the same item must be distinct."""
    s = Session(model, journal, step=step, role=role, concurrency=concurrency, policy=policy, wait=wait)
    try:
        return s.run(calls), s.report
    finally:
        s.close()


def dry_model_id(spec: str, base_url: str | None = None, model_args: list[str] | None = None) -> str:
    """The model identity the journal keys use, for ``--dry-run``: a GGUF file (``embedded``,
    ``llamacpp:PATH``) is fingerprinted without loading its weights; other backends are built
    (that sends nothing)."""
    from glotbench.models.llamacpp import file_fingerprint

    prefix, _, rest = spec.strip().partition(":")
    path = None
    if prefix.lower() == "embedded" and not rest:
        from glotbench.models.embedded import default_gguf_path

        path = default_gguf_path()
    elif prefix.lower() == "llamacpp" and rest and Path(rest).expanduser().is_file():
        path = Path(rest).expanduser()
    if path is not None:
        return f"llamacpp:{path.name}@{file_fingerprint(path)}"
    from glotbench.models.registry import load_cli_model

    return load_cli_model(spec, model_args, base_url=base_url).model_id


def estimate(calls: list[Call], model_id: str | None, journal: Path) -> dict:
    """``--dry-run``: the calls a step would make and how many the journal already answers."""
    answered = 0
    if model_id and Path(journal).exists():
        j = Journal(journal)
        try:
            known = j.cached_keys()
        finally:
            j.close()
        answered = sum(1 for c in calls if c.request.key(model_id) in known)
    return {"calls": len(calls), "in_journal": answered, "to_send": len(calls) - answered}
