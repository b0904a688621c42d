"""Run tasks against a model: build requests, call through the journal, score, summarise."""

from __future__ import annotations

import asyncio
import hashlib
import dataclasses
import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from glotbench.tasks.request_settings import RequestSettings
from glotbench.engine.aggregate import summarise_task
from glotbench.engine.latency import latency_summary
from glotbench.scoring.circular import ROTATION
from glotbench.engine.caller import CachedCaller, RequestFailed
from glotbench.engine.journal import Journal
from glotbench.json_codec import reads_back_same
from glotbench.sample_record import RecordBrief, SampleRecord
from glotbench.engine.retry import RunGuard
from glotbench.errors import RunStopped
from glotbench.models.base import GenRequest, Model
from glotbench.tasks.task import Sample, Task


@dataclass
class TaskRun:
    task: Task
    mode: str
    fingerprint: dict
    samples: list[Sample]
    todo: list[Sample] = field(default_factory=list)
    settings: RequestSettings = field(default_factory=RequestSettings)  # what the task sees of the run
    _ids: frozenset[str] | None = field(default=None, repr=False)
    _n_items: int | None = field(default=None, repr=False)
    # sample id -> the RecordBrief (a tuple) of each record this process put (what summarise reads of it)
    briefs: dict[str, tuple] = field(default_factory=dict, repr=False, compare=False)
    # a task that keeps its records (its summary hook; loglikelihood): sample id -> each record this
    # process put, as its row reads back; None once over KEEP_MAX (then every row is read back)
    kept: dict[str, SampleRecord] | None = field(default_factory=dict, repr=False, compare=False)

    @property
    def run_key(self) -> str:
        return self.fingerprint["id"]

    @property
    def item_ids(self) -> frozenset[str]:
        return self._ids if self._ids is not None else frozenset(s.id for s in self.samples)

    @property
    def n_items(self) -> int:
        return self._n_items if self._n_items is not None else len(self.samples)

    def release_samples(self) -> None:
        """Drop the samples once every model call is done: summarising needs only their ids and count,
        and at 100k items the samples are most of a run's memory."""
        self._ids, self._n_items = self.item_ids, self.n_items
        self.samples, self.todo = [], []


def _prompt_of(request) -> Any:
    if type(request) is GenRequest:  # what to_dict() holds of it, without building the whole dict per item
        return list(request.messages) if request.messages is not None else request.prompt
    d = request.to_dict()
    if "messages" in d and d.get("messages") is not None:
        return d["messages"]
    return d.get("prompt") if "prompt" in d else d.get("context")


def _output_view(out, turn: int | None = None) -> dict:
    d = out.to_dict()
    d.pop("raw", None)
    if turn is not None:  # a multi-turn item: which user turn this answers (1-based)
        d["turn"] = turn
    return d


def _views(outputs: list, n_turns: int) -> list[dict]:
    """The outputs as the record holds them; a multi-turn item's each name its turn."""
    return [_output_view(o, k % n_turns + 1 if n_turns > 1 else None) for k, o in enumerate(outputs)]


def _for_item(requests: list, task: Task, sample: Sample, model: Model) -> list:
    """Each generation request names its item (``item``; with a backend that answers items, not prompts,
    also in the key: ``recorded:``)."""
    if getattr(model, "answers_items", False):
        requests = [dataclasses.replace(r, extra=(*r.extra, ("answers_item", f"{task.name}/{sample.id}")))
                    if isinstance(r, GenRequest) else r for r in requests]
    return requests


def _first_failure(results: list):
    """The first failed request of ``results`` (None: none failed); a run that is stopping is re-raised."""
    failures = [r for r in results if isinstance(r, BaseException)]
    for f in failures:
        if isinstance(f, (RunStopped, asyncio.CancelledError)) or not isinstance(f, Exception):
            raise f  # the run is stopping: leave the item for the rerun, record nothing
    return failures[0] if failures else None


def _failure_message(f: BaseException) -> str:
    return str(f) if isinstance(f, RequestFailed) else f"{type(f).__name__}: {f}"


async def later_turns(tr: TaskRun, sample: Sample, first: list, caller: CachedCaller, is_chat: bool,
                      request_keys: list[str]) -> tuple[list, BaseException | None, int]:
    """A multi-turn item's turns 2..n (``task.n_turns``): each chain's (Best-of-N) answers so far go back
    into the dialogue, turn by turn, every request through the journal like turn 1's (so a rerun takes
    the turns it has and sends the rest). Returns every answer, chain by chain in turn order, the first
    failure (None: none) and its turn (1-based); ``request_keys`` gets each turn's keys."""
    task = tr.task
    chains = [[r] for r in first]
    for turn in range(1, task.n_turns):
        reqs = [task.turn_request(sample, [task.fed_back(o) for o in chain], chat=is_chat, settings=tr.settings,
                                  sample_index=k) for k, chain in enumerate(chains)]
        reqs = _for_item(reqs, task, sample, caller.model)
        keyed = [(kj, hashlib.sha256(kj).hexdigest()) for kj in (r.keyed_json(caller.model.model_id) for r in reqs)]
        request_keys.extend(k for _, k in keyed)
        reqs = [r.with_item((task.name, sample)) for r in reqs]
        got = await _call_all(caller, reqs, task.name, sample.id, return_exceptions=True, keyed=keyed)
        failed = _first_failure(got)
        for chain, r in zip(chains, got):
            if not isinstance(r, BaseException):
                chain.append(r)
        if failed is not None:
            return [o for chain in chains for o in chain], failed, turn + 1
    return [o for chain in chains for o in chain], None, task.n_turns


async def _call_all(caller: CachedCaller, requests: list, task: str, sample_id: str, *,
                    return_exceptions: bool, keyed: list[tuple[bytes, str]] | None = None) -> list:
    """``gather`` of every request (``return_exceptions`` as there); one request (the common case)
    is awaited directly, without a task of its own. ``keyed``: each request's (keyed JSON, key),
    when already computed."""
    keys = keyed or [None] * len(requests)
    if len(requests) == 1:
        try:
            return [await caller(requests[0], task=task, sample_id=sample_id, keyed=keys[0])]
        except Exception as err:  # noqa: BLE001 - sorted by the caller, as gather would return it
            if not return_exceptions:
                raise
            return [err]
    return await asyncio.gather(*(caller(r, task=task, sample_id=sample_id, keyed=k) for r, k in zip(requests, keys)),
                                return_exceptions=return_exceptions)


async def judge_sample(tr: TaskRun, sample: Sample, outputs: list, judge: CachedCaller, journal: Journal) -> list[dict]:
    """Send the judge requests for one sample (through the journal) and record one verdict per output."""
    task = tr.task
    requests = task.judge_requests(sample, outputs)
    judge_id = judge.model.model_id
    keyed = [(kj, hashlib.sha256(kj).hexdigest()) for kj in (r.keyed_json(judge_id) for r in requests)]  # once each
    results = await _call_all(judge, requests, task.name, sample.id, return_exceptions=False, keyed=keyed)
    verdicts = []
    for k, out in enumerate(results):
        verdict = {**task.parse_judgment(sample, k, out.text), "judge_request_key": keyed[k][1]}
        journal.put_judgment(judge.model.model_id, task.name, sample.id, k, verdict)
        verdicts.append(verdict)
    return verdicts


def _put_recorded_grades(model: Model, task: str, sample: Sample, n: int, journal: Journal) -> None:
    """Grades that came with recorded answers become one more judge's judgments (compare-judges)."""
    grade_of = getattr(model, "recorded_grade", None)
    if grade_of is None:
        return
    for k in range(n):
        grade = grade_of(task, sample, k)  # checked when the file was read
        if grade is not None:
            journal.put_judgment(model.grade_judge_id, task, sample.id, k, {"grade": grade, "source": "recorded"})


def recorded_verdicts(model: Model, task: Task, sample: Sample, n: int) -> list[dict]:
    """The judge verdicts of one item's answers from the recorded file's grade column (no judge called)."""
    return [task.recorded_verdict(model.recorded_grade(task.name, sample, k), model.grade_judge_id) for k in range(n)]


async def process_sample(tr: TaskRun, sample: Sample, caller: CachedCaller, journal: Journal, is_chat: bool,
                         judge: CachedCaller | None = None) -> str:
    task = tr.task
    requests = _for_item(task.requests(sample, mode=tr.mode, chat=is_chat, settings=tr.settings), task, sample,
                         caller.model)
    model_id = caller.model.model_id
    keyed = [(kj, hashlib.sha256(kj).hexdigest()) for kj in (r.keyed_json(model_id) for r in requests)]  # once per request
    record = SampleRecord.start(task=task.name, sample_id=sample.id, idx=sample.index, run_key=tr.run_key,
                                lang=task.spec.language, prompt=_prompt_of(requests[0]),
                                request_keys=[k for _, k in keyed], gold=sample.target,
                                metadata=sample.metadata, mode=tr.mode)

    def put(rec: SampleRecord) -> str:
        row = rec.to_json()
        journal.put_sample(rec.run_key, rec.task, rec.sample_id, rec.idx, rec.status, row)
        if journal.read_only:
            return rec.status
        if not _keeps_records(tr):  # what the summary reads of it, so its row is not read back
            brief = RecordBrief.of(rec)
            if brief is not None:
                tr.briefs[rec.sample_id] = brief
            else:
                tr.briefs.pop(rec.sample_id, None)
        else:
            _keep(tr, rec, row)
        return rec.status
    # each generation request names its item, for backends that answer items, not prompts (recorded:)
    item = (task.name, sample)
    requests = [r.with_item(item) if isinstance(r, GenRequest) else r for r in requests]
    results = await _call_all(caller, requests, task.name, sample.id, return_exceptions=True, keyed=keyed)
    f = _first_failure(results)
    if f is not None:  # anything unexpected from a backend is this item's error, never the run's end
        return put(record.failed(_failure_message(f), attempts=getattr(f, "attempts", 1)))
    n_turns = task.n_turns if tr.mode == "generate" else 1
    if n_turns > 1:  # the model's answers go back into the dialogue, turn by turn (docs/multi-turn.md)
        results, f, turn = await later_turns(tr, sample, list(results), caller, is_chat, record.request_keys)
        if f is not None:
            return put(record.failed(f"turn {turn}: {_failure_message(f)}",
                                     attempts=getattr(f, "attempts", 1), outputs=_views(results, n_turns)))
    _put_recorded_grades(caller.model, task.name, sample, len(results), journal)
    verdicts = None
    judge_id = judge.model.model_id if judge is not None else None
    if task.needs_judge and judge is None:  # grades from the recorded file, no judge (plan.check_judge)
        verdicts = recorded_verdicts(caller.model, task, sample, len(results))
        judge_id = caller.model.grade_judge_id
    elif task.needs_judge:
        try:
            verdicts = await judge_sample(tr, sample, list(results), judge, journal)
        except RunStopped:
            raise
        except Exception as err:  # noqa: BLE001 - a failed or malformed judge answer is this item's error
            what = str(err) if isinstance(err, RequestFailed) else f"{type(err).__name__}: {err}"
            return put(record.failed(f"judge request failed: {what}", attempts=getattr(err, "attempts", 1),
                                     outputs=_views(results, n_turns)))
    try:
        if verdicts is not None:
            scored = task.score_judged(sample, list(results), verdicts)
        else:
            scored = task.score(sample, list(results), mode=tr.mode)
    except Exception as err:  # a scorer bug must not lose the responses: record it as an error item
        return put(record.failed(f"scoring failed: {type(err).__name__}: {err}",
                                 outputs=_views(results, n_turns)))
    detail = scored.detail
    if n_turns > 1:  # the first chain's dialogue as the model had it, its last answer included
        detail = {**detail, "dialogue": task.dialogue(sample, [task.fed_back(o) for o in results[:n_turns]])}
    return put(record.scored(outputs=_views(results, n_turns), extracted=scored.extracted, rule=scored.rule,
                             pred=scored.pred, values=scored.values, detail=detail,
                             judge=judge_id if verdicts is not None else None, judgments=verdicts))


def _new_tokens(tr: TaskRun) -> int:
    if tr.mode in ("loglikelihood", "loglikelihood_rolling"):
        return 0
    return (tr.settings.max_tokens or tr.task.spec.generation.max_tokens) * tr.settings.samples


def work_order(runs: list[TaskRun], model: Model) -> list[TaskRun]:
    """The order tasks' items are sent in. A model that decodes its requests in shared steps
    (``timeout_scale > 1``: the batched in-process model) gets the tasks with the longest
    generations first, so their last requests overlap the short ones instead of decoding nearly
    alone at the end of the run (MM-Eval --limit 20: 27% of the steps had 3-4 of 8 slots busy).
    The answers do not depend on the order; results and samples.jsonl are ordered by task and item."""
    if (getattr(model, "timeout_scale", 1) or 1) <= 1:
        return runs
    return sorted(runs, key=lambda tr: -_new_tokens(tr))  # stable: ties keep the run's order


def pool_size(caller: CachedCaller, judge: CachedCaller | None) -> int:
    """Workers of a run: one per request the model may have in flight, plus one per judge request
    (an item waiting for its grade holds no model slot). Fewer would leave the model's slots idle;
    more only queue at its semaphore, and every queued worker costs a wake-up per item (four
    times the concurrency, as before, was 7% slower against an instant server). An item with
    several requests (options, Best-of-N) fills several slots by itself."""
    return caller.concurrency + (judge.concurrency if judge is not None else 0)


@dataclass(frozen=True)
class CacheSettings:
    """The shared response cache a run reads and writes (docs/cache.md): ``--cache``, ``--no-cache``,
    ``--cache-trust-name``."""

    folder: str | None = None
    off: bool = False
    trust_name: bool = False


async def execute(runs: list[TaskRun], model: Model, journal: Journal, *, concurrency: int, policy, seed: int = 1234,
                  cache: CacheSettings = CacheSettings(), on_progress: Callable[[str], None] | None = None,
                  judge_model: Model | None = None, judge_concurrency: int | None = None,
                  say: Callable[[str], None] | None = None) -> CachedCaller:
    """Run every item still to do. When the run's guard trips (unreachable server, refused
    credentials, a journal that cannot be written), workers stop pulling items, items in flight
    are left unrecorded for the rerun, and ``caller.guard.stopped`` says why. ``caller.served``:
    what the model's (and judge's) server said it serves; ``caller.cache_report``: what the run
    did with the shared response cache (docs/cache.md)."""
    guard = RunGuard(policy)
    shared, idents, served, cache_report = open_shared_cache(cache, model, judge_model, say)
    caller = CachedCaller(model, journal, role="model", policy=policy, concurrency=concurrency, seed=seed,
                          guard=guard, shared=shared if idents.get("model") else None, shared_ident=idents.get("model"))
    caller.served, caller.cache_report = served, cache_report
    judge = None
    if judge_model is not None:
        judge = CachedCaller(judge_model, journal, role="judge", policy=policy,
                             concurrency=judge_concurrency or judge_model.max_parallel or concurrency, seed=seed,
                             guard=guard, shared=shared if idents.get("judge") else None, shared_ident=idents.get("judge"))
        caller.judge = judge
    on_answer = getattr(on_progress, "answer", None)  # the progress counts answers as they arrive
    for c in (caller, judge):
        if c is not None:
            c.on_answer = on_answer
    # A fixed pool of workers pulls items from one shared iterator, so the number of live sample
    # coroutines (and memory) stays flat however large the tasks; requests stay bounded by the
    # callers' semaphores (pool_size).
    pending = iter([(tr, s) for tr in work_order(runs, model) for s in tr.todo])

    async def worker() -> None:
        for tr, s in pending:
            if guard.stopped:
                return
            try:
                status = await process_sample(tr, s, caller, journal, model.is_chat, judge)
            except RunStopped:
                return
            if journal.write_error:
                guard.trip(f"cannot write the journal {journal.path} ({journal.write_error}); "
                           f"{journal.pending} write(s) held in memory")
            if on_progress:
                on_progress(status)

    try:
        await asyncio.gather(*(worker() for _ in range(pool_size(caller, judge))))
    finally:
        journal.flush()  # the last rows (committed with the loop's next iteration otherwise)
        # close network sessions inside the loop that opened them
        for m in (model, judge_model):
            if m is not None:
                await m.aclose()
        if shared is not None:
            cache_report.update(shared.report())
            shared.close()
            if say is not None and (shared.read_errors or shared.bad_rows):
                say(f"[yellow]response cache[/] {shared.path}: {shared.read_errors} unreadable and {shared.bad_rows} "
                    f"malformed row(s) read as misses (their requests were sent again; last: {shared.last_problem}); "
                    f"check it with: glotbench runs doctor RUN")
    return caller


def served_identities(model: Model, judge_model: Model | None) -> dict:
    """``{"model": ..., "judge": ...}``: what each one's server says it serves (None: it cannot say;
    absent: an in-process model)."""
    out = {}
    for role, m in (("model", model), ("judge", judge_model)):
        if m is not None and getattr(m, "serves_remotely", False):
            out[role] = m.served_identity()
    return out


def open_shared_cache(cache: CacheSettings, model: Model, judge_model: Model | None, say=None):
    """(the cache or None, {role: key identity}, {role: served identity}, report) of a run. A role
    whose server cannot say what it serves uses no cache unless ``--cache-trust-name`` (one line)."""
    from glotbench.engine.response_cache import cache_identity, open_cache

    served = served_identities(model, judge_model)
    shared = open_cache(cache.folder, cache.off)  # docs/cache.md; None unless asked for
    if shared is None:
        return None, {}, served, {}
    report: dict = {"keyed_on": {}}
    if shared.problem and say is not None:
        say(f"[yellow]response cache[/] {shared.folder}: {shared.problem}; this run uses no cache "
            f"(check it with: glotbench runs doctor RUN)")
    idents = {}
    for role, m in (("model", model), ("judge", judge_model)):
        if m is None:
            continue
        ident, how = cache_identity(m, served.get(role), cache.trust_name)
        report["keyed_on"][role] = how
        if ident is None:
            if say is not None:
                say(f"[yellow]response cache[/] {role} {m.model_id}: {how}")
            continue
        idents[role] = ident
    return shared, idents, served, report


def _needs_records(task: Task) -> bool:
    """Whether the task's own summary hook reads the scored records (then they are kept in memory)."""
    return type(task).extra_summary is not Task.extra_summary


def _keeps_records(tr: TaskRun) -> bool:
    """Whether summarising ``tr`` keeps its scored records (its summary hook; loglikelihood: the
    calibration block): then they are read from the journal, and no brief is kept."""
    return tr.mode == "loglikelihood" or _needs_records(tr.task)


KEEP_MAX = 20_000  # records a task keeps in memory for its summary (more: its rows are read back)


def _keep(tr: TaskRun, rec: SampleRecord, row: dict) -> None:
    """Keep ``rec`` for the summary of a task that keeps its records, as its journal row reads back
    (``row``: the record column's dict), so that row is not read and parsed again; a record whose values
    would not read back the same (a tuple, a non-string key) is read from its row."""
    kept = tr.kept
    if kept is None:
        return
    if len(kept) >= KEEP_MAX:
        tr.kept = None  # a large run: its summary reads the rows back, as before (bounded memory)
        return
    ident = (rec.run_key, rec.task, rec.sample_id, rec.status)
    if all(type(v) is str for v in ident) and type(rec.idx) is int and reads_back_same(row):
        kept[rec.sample_id] = SampleRecord.from_json({"run_key": rec.run_key, "task": rec.task, "sample_id": rec.sample_id,
                                                      "idx": rec.idx, "status": rec.status, **row})
    else:
        kept.pop(rec.sample_id, None)


def _extra_summary(task: Task, kept: list[SampleRecord], out_dir: Path | None, *, n_boot: int, seed: int) -> dict:
    """``task.extra_summary`` with the run's bootstrap settings; a hook written before it took them
    (``(records, out_dir)`` only) is still called, without them."""
    params = inspect.signature(task.extra_summary).parameters
    if "seed" in params or any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return task.extra_summary(kept, out_dir, n_boot=n_boot, seed=seed)
    return task.extra_summary(kept, out_dir)


def _ll_calibration(task_name: str, kept: list[SampleRecord], out_dir: Path | None, *, n_boot: int, seed: int) -> dict:
    """``{"ll_calibration": ...}`` of a loglikelihood task (glotbench.scoring.ll_calibration): the
    reliability table, per-class AUROC with intervals, and a reliability diagram PNG beside
    results.json when matplotlib is installed."""
    from glotbench.scoring.ll_calibration import ll_calibration_summary
    from glotbench.scoring.metrics import ScoredItem

    items = [ScoredItem(gold=r.gold, pred=r.pred, values=r.value_map) for r in kept if r.is_scored]
    block = ll_calibration_summary(items, n_boot=n_boot, seed=seed)
    if not block:
        return {}
    if out_dir is not None:
        from glotbench.extras import available

        if available("plots"):
            from glotbench.plots.reliability import save_reliability_diagram
            from glotbench.scoring.ll_calibration import plot_file_name

            label = "option probability"
            path = save_reliability_diagram({label: block["table"]}, Path(out_dir) / plot_file_name(task_name),
                                            title=f"{task_name}: option probability vs accuracy", ece={label: block["ece"]},
                                            xlabel="confidence: top option's softmax probability (%)")
            block["plot"] = path.name
        else:
            block["plot_note"] = "not drawn: needs pip install 'glotbench[plots]'"
    return {"ll_calibration": block}


def _dataset_size(tr: TaskRun) -> int | None:
    """The split's size before ``limit``; None when it cannot be read again (then exports use n_items)."""
    if tr.settings.limit is None:
        return tr.n_items
    try:
        return tr.task.dataset_size(tr.settings)
    except Exception:  # noqa: BLE001 - a count for exports must not fail a finished run
        return None


def summarise(runs: list[TaskRun], journal: Journal, *, n_boot: int = 1000, seed: int = 0,
              out_dir: Path | None = None, records_by_task: dict[str, list[SampleRecord]] | None = None) -> dict[str, dict]:
    out = {}
    latencies: dict[str, float] | None = None  # read from the journal once, for the first task
    for tr in runs:
        keep = _keeps_records(tr)
        briefs, tr.briefs = tr.briefs, {}
        known, tr.kept = (tr.kept or {}) if keep else briefs, {}  # what this process put: not read back
        if records_by_task is not None:
            source = iter(records_by_task.get(tr.task.name, []))
        elif _known_are_the_rows(known, journal, tr):  # every row was written by this process
            source = iter(sorted(known.values(), key=_by_idx))
        else:  # the rows this process wrote come from memory (briefs, kept records), the others are read
            source = (r if type(r) is tuple or type(r) is SampleRecord else SampleRecord.from_json(r)
                      for r in journal.iter_samples(tr.run_key, tr.task.name, ids=tr.item_ids, known=known))
        tokens = {"input": 0, "output": 0}
        kept: list[SampleRecord] = []
        requests: list[tuple[str, int | None]] = []  # (request key, output tokens): the latency block

        def stream():  # one pass over the records: token counts on the way, records kept only if needed
            for r in source:
                if type(r) is tuple:  # a RecordBrief: a record this process wrote (never kept: keep reads rows)
                    tokens["input"] += r[7]
                    tokens["output"] += r[8]
                    flat = r[9]  # (key, output tokens, key, ...)
                    requests.extend(zip(flat[::2], flat[1::2]))
                    yield r
                    continue
                outs = r.output_list
                for o in outs:
                    tokens["input"] += o.get("input_tokens") or 0
                    tokens["output"] += o.get("output_tokens") or 0
                if r.is_scored:
                    keys = r.request_keys or []
                    requests.extend((k, outs[i].get("output_tokens") if len(outs) == len(keys) else None)
                                    for i, k in enumerate(keys))
                if keep and r.is_scored and not (tr.settings.circular and r.metadata_map.get(ROTATION)):
                    kept.append(r)  # --circular: a task's own tables read the dataset's order, as its metrics do
                yield r

        summary = summarise_task(stream(), tr.task.metric_names(tr.mode), tr.task.spec.slice_by, tr.n_items,
                                 n_boot=n_boot, seed=seed, circular=tr.settings.circular)
        if tr.mode == "loglikelihood" and tr.task.spec.output_type == "multiple_choice":
            summary.update(_ll_calibration(tr.task.name, kept, out_dir, n_boot=n_boot, seed=seed))
        summary.update(_extra_summary(tr.task, kept, out_dir, n_boot=n_boot, seed=seed))
        if latencies is None:
            latencies = journal.latencies() if hasattr(journal, "latencies") else {}
        summary["latency"] = latency_summary(requests, latencies)
        spec = tr.task.spec
        out[tr.task.name] = {
            "language": spec.language,
            "version": spec.version,
            "prompt_hash": spec.prompt_hash({"num_fewshot": tr.settings.num_fewshot, "prompt_lang": tr.settings.prompt_lang}),
            "mode": tr.mode,
            "num_fewshot": tr.task.shots(tr.settings),
            **({"n_dataset": n} if (n := _dataset_size(tr)) is not None else {}),
            "fingerprint": tr.fingerprint,
            "data": _provenance(tr),
            **({"data_differs": f"data differs from its source: {', '.join(tr.task.data_differs)}"}
               if tr.task.data_differs else {}),
            "counterpart": spec.counterpart,
            "tokens": dict(tokens),
            **summary,
        }
    return out


def _by_idx(r: tuple | SampleRecord) -> int:
    """The index of a brief or of a kept record (a row's place in the journal's order)."""
    return r[RecordBrief.IDX] if type(r) is tuple else r.idx


def _known_are_the_rows(known: dict[str, tuple | SampleRecord], journal: Journal, tr: TaskRun) -> bool:
    """Whether the task's journal rows are exactly the records this process wrote (``known``: one per
    row, briefs or kept records, every index distinct), so they in index order are the rows in the journal's
    order (``ORDER BY task, idx``; rows of one index, --circular's rotations, are read from the journal)."""
    if not known or not hasattr(journal, "count_samples") or len({_by_idx(b) for b in known.values()}) != len(known):
        return False
    return journal.count_samples(tr.run_key, tr.task.name) == len(known)


def _provenance(tr: TaskRun) -> dict | None:
    """Where the task's data came from (root, source, requested and resolved revision, file hashes)."""
    from glotbench.sources.provenance import task_provenance

    split = tr.settings.split or tr.task.spec.dataset.eval_split
    try:
        return task_provenance(tr.task, split)
    except Exception as err:  # noqa: BLE001 - provenance never stops a finished run's results
        return {"error": f"{type(err).__name__}: {err}"}
