"""What a run builds per item before the model call is what the slower paths it replaced built
(docs/performance.md): field paths compiled once per path (data/fields.getter) read what
``get_path`` reads, on every record of every built-in task; a task's requests carry the same fields
and their keyed JSON (the cache key's bytes: KeyTemplate) is what ``_keyed_json`` gives, for chat
and plain models, few-shot, Best-of-N, --system-prompt, --gen-kwargs, multi-turn and loglikelihood
requests; a ``--limit`` run, which now builds only its first N items, takes the items, warnings and
split size the whole split gave; and a stub run with the old paths put back writes the same journal
rows, samples.jsonl bytes and metrics."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from glotbench.data import fields as fields_mod
from glotbench.data.fields import FieldDecodeError, MissingField, get_path, getter
from glotbench.models.base import GenRequest, LoglikelihoodRequest, _keyed_json
from glotbench.prompts.render import plain_from_chat, render
from glotbench.tasks import subsets
from glotbench.tasks import task as task_mod
from glotbench.tasks.request_settings import RequestSettings
from glotbench.tasks.task import ROLLING, Task
from journal_rows import stored_rows
from mc_task import mc_task_yaml
from test_fast_paths_same_output import stub  # noqa: F401 - the module's stub server fixture

REPO = Path(__file__).resolve().parents[1]
MODEL = "openai:stub@x"
NEW_BUILD, NEW_REQUESTS, NEW_CHOSEN = Task.build_sample, Task.requests, Task._chosen_samples  # before any monkeypatch


def _outcome(fn, *args):
    try:
        return ("ok", fn(*args))
    except (MissingField, FieldDecodeError) as err:
        return (type(err).__name__, str(err))


PATHS = ["a", "a.b", "a.b.c", "l[0]", "l[-1]", "l[5]", "l[*]", "l[*].t", "l[*].t.u", "m|json.k", "m|python-literal.k",
         "m|json", "bad|json.k", "=const", "", "a.l[*][0]", "*", "a.*"]
RECORDS = [
    {"a": {"b": {"c": 1}, "l": [[1, 2], [3]]}, "l": [{"t": "x"}, {"t": "y"}], "m": '{"k": [1, 2]}', "bad": "{nope"},
    {"a": {"b": None}, "l": [], "m": "{'k': None}", "bad": {"k": 3}},
    {"a": [1], "l": [{"t": {"u": 2}}, 5], "m": {"k": "already"}},
    {"a": "text", "l": "not a list", "m": "[1"},
    {},
]


def test_compiled_paths_read_what_get_path_reads():
    for path in PATHS:
        for rec in RECORDS:
            assert _outcome(getter(path), rec) == _outcome(get_path, rec, path), (path, rec)
    with pytest.raises(fields_mod.DataError, match="unknown decoder"):
        getter("a|nope")


def _builtin_tasks():
    from glotbench.tasks.registry import all_specs, resolve

    out = []
    for name in sorted(all_specs()):
        try:
            out.append(resolve([name])[0])
        except Exception:  # noqa: BLE001 - a task whose class needs more than its name
            continue
    return out


def test_every_builtin_field_path_on_every_record(data_root):
    checked = 0
    for task in _builtin_tasks():
        try:
            records = task.raw_records(task.spec.dataset.eval_split)
        except Exception:  # noqa: BLE001 - its data is not here
            continue
        fn = task._record_fn
        for rec in records[:3000]:
            rec = fn(rec) if fn is not None else rec
            if rec is None:
                continue
            for path in task.spec.fields.values():
                assert _outcome(getter(path), rec) == _outcome(get_path, rec, path), (task.name, path)
                checked += 1
    assert checked > 10_000


def old_build_sample(self, rec, index, where):
    """Task.build_sample reading each field with get_path, as before its compiled getters."""
    saved = task_mod._getter_or_raise
    task_mod._getter_or_raise = lambda path: (lambda record: get_path(record, path))
    try:
        self.__dict__.pop("_getters", None)
        return NEW_BUILD(self, rec, index, where)
    finally:
        task_mod._getter_or_raise = saved
        self.__dict__.pop("_getters", None)


def old_chat_messages(task, sample, num_fewshot=None, system=None):
    if type(task).chat_messages is not Task.chat_messages:  # a task class's own
        return task.chat_messages(sample, num_fewshot, system)
    msgs = []
    if system is not None:
        msgs.append({"role": "system", "content": system})
    elif task.spec.prompt.system:
        msgs.append({"role": "system", "content": render(task.spec.prompt.system, task._vars(sample), task=task.name,
                                                         record=sample.id, field="prompt.system")})
    for shot in task.fewshot_for(sample, num_fewshot):
        msgs.append({"role": "user", "content": task.render_user(shot)})
        msgs.append({"role": "assistant", "content": task.render_answer(shot)})
    msgs.append({"role": "user", "content": task.render_user(sample)})
    return msgs


def old_plain_prompt(task, sample, num_fewshot=None, system=None):
    p = task.spec.prompt
    if p.plain or type(task).plain_prompt is not Task.plain_prompt:
        return task.plain_prompt(sample, num_fewshot, system)
    if system is None:
        system = render(p.system, task._vars(sample), task=task.name, record=sample.id, field="prompt.system") if p.system else None
    shots = [(task.render_user(s), task.render_answer(s)) for s in task.fewshot_for(sample, num_fewshot)]
    return plain_from_chat(system, shots, task.render_user(sample), p.answer_cue)


def old_requests(task, sample, *, mode, chat, settings):
    """Task.requests before the cached sampling settings, key template and constant system prompt."""
    if mode in (ROLLING, "loglikelihood"):
        return NEW_REQUESTS(task, sample, mode=mode, chat=chat, settings=settings)
    common = settings.sampling(task.spec.generation)
    if chat:
        base = dict(messages=settings.with_system(old_chat_messages(task, sample, settings.num_fewshot,
                                                                    settings.system_prompt)))
    else:
        base = dict(prompt=old_plain_prompt(task, sample, settings.num_fewshot, settings.system_prompt))
    return [GenRequest(**base, **common, sample_index=k) for k in range(settings.samples)]


def _same_request(new, old):
    assert type(new) is type(old)
    assert new == old and new.to_dict() == old.to_dict()
    assert {k: v for k, v in vars(new).items() if k != "_key_template"} == vars(old)  # every field, item too
    kind = "generate" if isinstance(new, GenRequest) else "loglikelihood"
    assert new.keyed_json(MODEL) == _keyed_json(old, kind, MODEL) == old.keyed_json(MODEL)
    if isinstance(new, GenRequest):
        copy = new.with_item(("t", "item"))
        assert copy == dataclasses.replace(new, item=("t", "item")) and copy.item == ("t", "item")
        assert copy.keyed_json(MODEL) == new.keyed_json(MODEL)
        other = dataclasses.replace(new, max_tokens=new.max_tokens + 1)  # a copy with another field: no template
        assert other.keyed_json(MODEL) == _keyed_json(other, "generate", MODEL)


SETTINGS = [
    {},
    {"samples": 2, "system_prompt": "Be brief. {{ not a template }} «ё»", "gen_kwargs": {"top_k": 5, "stop": "\n\n"}},
    {"num_fewshot": 2, "max_tokens": 7, "temperature": 0.5, "seed": 3},
]


def _examples():
    """The shipped example task files (multi-turn among them)."""
    from glotbench.tasks.registry import resolve

    out = []
    for path in sorted((REPO / "docs" / "examples").rglob("*.yaml")):
        try:
            out.append(resolve([str(path)])[0])
        except Exception:  # noqa: BLE001 - not a task file
            continue
    return out


def test_every_builtin_request_and_its_key(data_root):
    checked = turns = 0
    for task in _builtin_tasks() + _examples():
        own = type(task).requests is not Task.requests  # a class's own requests (a judged task's): keys checked only
        try:
            samples = task.samples(None, 4)
        except Exception:  # noqa: BLE001 - its data is not here
            continue
        modes = ["generate"]
        if task.spec.output_type == "multiple_choice" and not task.spec.prompt.turns:
            modes.append("loglikelihood")
        for values in SETTINGS:
            if values.get("num_fewshot") and not task.spec.fewshot.split:
                continue
            settings = RequestSettings.from_values(values)
            for mode in modes:
                for chat in (True, False):
                    for s in samples:
                        try:
                            old = (type(task).requests if own else old_requests)(task, s, mode=mode, chat=chat,
                                                                            settings=settings)
                        except Exception:  # noqa: BLE001 - a combination the task refuses: refused both ways
                            with pytest.raises(Exception):
                                task.requests(s, mode=mode, chat=chat, settings=settings)
                            continue
                        new = task.requests(s, mode=mode, chat=chat, settings=settings)
                        assert len(new) == len(old)
                        for n, o in zip(new, old):
                            if own:
                                kind = "generate" if isinstance(n, GenRequest) else "loglikelihood"
                                assert n.keyed_json(MODEL) == _keyed_json(n, kind, MODEL)
                            else:
                                _same_request(n, o)
                            checked += 1
                        if mode == "generate" and task.n_turns > 1:
                            for k in range(settings.samples):
                                got = task.turn_request(s, ["first answer «1»"], chat=chat, settings=settings,
                                                        sample_index=k)
                                assert got.keyed_json(MODEL) == _keyed_json(got, "generate", MODEL)
                                turns += 1
    assert checked > 500 and turns > 0, (checked, turns)


def test_built_samples_equal_the_get_path_build(data_root):
    checked = 0
    for task in _builtin_tasks():
        if type(task).build_sample is not Task.build_sample or type(task).samples is not Task.samples:
            continue
        try:
            records = task.raw_records(task.spec.dataset.eval_split)
        except Exception:  # noqa: BLE001 - its data is not here
            continue
        fn = task._record_fn
        where = task.spec.dataset.splits[task.spec.dataset.eval_split]
        for i, rec in enumerate(records[:300]):
            rec = fn(rec) if fn is not None else rec
            if rec is None:
                continue
            assert _outcome_build(task.build_sample, rec, i, where) == _outcome_build(old_build_sample, task, rec, i,
                                                                                        where), task.name
            checked += 1
    assert checked > 1000


def _outcome_build(fn, *args):
    try:
        return ("ok", fn(*args))
    except Exception as err:  # noqa: BLE001 - the same refusal either way
        return (type(err).__name__, str(err))


def old_one_class_warning(taken, every_targets, limit):
    """subsets.one_class_warning before it stopped at the first other class."""
    if len(taken) < 2:
        return None
    try:
        first = {subsets._key(s.target) for s in taken}
    except Exception:  # noqa: BLE001
        return None
    if len(first) != 1:
        return None
    classes = {subsets._key(t) for t in every_targets}
    if not 1 < len(classes) <= 50:
        return None
    return (f"--limit {limit} takes the first {len(taken)} items, whose gold labels are all {next(iter(first))!r} "
            f"(the split has {len(classes)} classes): a constant answer scores 100%; for a representative "
            f"subset use --set sample={len(taken)} (seeded random) or --set sample={len(taken)},stratify=gold")


def old_chosen_samples(self, settings):
    """Task._chosen_samples before a --limit run built only its first N items (the whole split, then a slice)."""
    if settings.limit is None or settings.sample is not None:
        return NEW_CHOSEN(self, settings)
    every = self.samples(settings.split)
    self._split_sizes[settings.split or self.spec.dataset.eval_split] = len(every)
    taken = every[:settings.items_for(len(every))]
    if len(taken) < len(every):
        warn = old_one_class_warning(taken, [s.target for s in every], settings.limit)
        if warn and warn not in self.load_warnings:
            self.load_warnings.insert(0, warn)
    return taken


def _limit_task(tmp_path, golds, extra=""):
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps({"id": f"i{k}", "q": f"Q{k}?", "opts": ["x", "y", "z"], "gold": g}) + "\n"
                            for k, g in enumerate(golds)), encoding="utf-8")
    path = tmp_path / "limit.yaml"
    path.write_text(mc_task_yaml("limit.t", data) + extra, encoding="utf-8")
    from glotbench.tasks.registry import resolve

    return lambda: resolve([str(path)])[0]


@pytest.mark.parametrize("limit", [1, 3, 5, 6, 12, 0.25, 0.5, 0.99])
@pytest.mark.parametrize("golds", ["AAAAAABCAB", "AAAAAAAAAA", "ABABABABAB", "AAAAAAAAAAAB"])
def test_a_limited_run_takes_what_the_whole_split_gave(tmp_path, limit, golds):
    make = _limit_task(tmp_path, golds)
    settings = RequestSettings.from_values({"limit": limit})
    new_task, old_task = make(), make()
    new = new_task.run_samples(settings)
    old = old_chosen_samples(old_task, settings)
    assert new == old
    assert new_task.load_warnings == old_task.load_warnings
    assert new_task.dataset_size(settings) == old_task.dataset_size(settings) == len(golds)


def test_a_limited_run_warns_as_before_with_a_default_target(tmp_path):
    """A record without its gold takes the task's default, in the warning's count of classes too."""
    make = _limit_task(tmp_path, ["A", "A", "A", None, "B"], extra="default: {target: C}\n")
    settings = RequestSettings.from_values({"limit": 2})
    new_task, old_task = make(), make()
    assert new_task.run_samples(settings) == old_chosen_samples(old_task, settings)
    assert new_task.load_warnings == old_task.load_warnings and "3 classes" in new_task.load_warnings[0]


def test_a_limited_builtin_run_takes_the_first_items(data_root):
    from glotbench.tasks.registry import resolve

    for name in ("mm_eval.knowledge", "mm_eval.syntax"):
        settings = RequestSettings.from_values({"limit": 7})
        new_task, old_task = resolve([name])[0], resolve([name])[0]
        assert new_task.run_samples(settings) == old_chosen_samples(old_task, settings)
        assert new_task.load_warnings == old_task.load_warnings
        assert new_task.dataset_size(settings) == old_task.dataset_size(settings)


def _run(base, tmp, name, task_paths, **extra):
    from glotbench.engine.config import RunConfig
    from glotbench.engine.session import run_evaluation

    os.environ.setdefault("OPENAI_API_KEY", "stub")
    out = tmp / name
    cfg = RunConfig(model="openai:stub", base_url=base, tasks=task_paths, concurrency=4, output=str(out),
                    bootstrap=50, max_retries=0, **extra)
    results, _ = run_evaluation(cfg, show_progress=False)
    rows = stored_rows(out / "journal.sqlite")
    summary = {t: (r["metrics"], r.get("n_scored"), r.get("warnings")) for t, r in results["tasks"].items()}
    return (out / "samples.jsonl").read_bytes(), rows, summary


@pytest.mark.parametrize("extra", [{}, {"limit": 9, "samples": 2, "system_prompt": "Answer with a letter."}])
def test_a_run_writes_what_the_old_paths_wrote(stub, monkeypatch, extra):  # noqa: F811 - the imported fixture
    from test_fast_paths_same_output import _tasks

    base, tmp = stub
    paths = _tasks(tmp)
    tag = "l" if extra else "d"
    fast = _run(base, tmp, f"prep-fast-{tag}", paths, **extra)
    monkeypatch.setattr(GenRequest, "keyed_json", lambda self, model_id: _keyed_json(self, "generate", model_id))
    monkeypatch.setattr(GenRequest, "with_item", lambda self, item: dataclasses.replace(self, item=item))
    monkeypatch.setattr(Task, "build_sample", old_build_sample)
    monkeypatch.setattr(Task, "requests", old_requests)
    monkeypatch.setattr(Task, "_chosen_samples", old_chosen_samples)
    slow = _run(base, tmp, f"prep-slow-{tag}", paths, **extra)
    assert fast[0] == slow[0]  # samples.jsonl, byte for byte
    assert fast[1] == slow[1]  # journal rows (request bytes, keys, checksums)
    assert fast[2] == slow[2]
    assert len(fast[1]["samples"]) == (2 * 9 if extra else 2 * 12) and fast[1]["responses"]


def test_loglikelihood_requests_unchanged():
    """LoglikelihoodRequest has no template: its keyed JSON is _keyed_json's."""
    r = LoglikelihoodRequest(context="Q", continuation=" A")
    assert r.keyed_json(MODEL) == _keyed_json(r, "loglikelihood", MODEL)
