"""Tasks see only the request settings, merged in one place; a knob has one value.

The requests built now are checked against a plain re-statement of the old path (the task built
its requests, then ``engine/overrides.apply`` rewrote them): same fields, so the same request keys
and every journal written before still answers."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import fields, replace
from pathlib import Path

import pytest

from glotbench.models.base import GenRequest
from glotbench.settings import RunSettings
from glotbench.tasks.registry import resolve
from glotbench.tasks.request_settings import RequestSettings

REPO = Path(__file__).resolve().parents[1]
OLD_FIELDS = {"temperature": float, "top_p": float, "max_tokens": int, "seed": int}


def old_path(task, sample, chat: bool, cfg: RunSettings) -> list:
    """The pre-#39 requests: the task's own fields, then --system-prompt / --gen-kwargs applied."""
    g = task.spec.generation
    common = dict(max_tokens=cfg.max_tokens or g.max_tokens,
                  temperature=g.temperature if cfg.temperature is None else cfg.temperature,
                  top_p=g.top_p, stop=tuple(g.stop), seed=cfg.seed, extra=tuple(sorted(g.extra.items())))
    if chat:
        base = dict(messages=tuple(task.chat_messages(sample, cfg.num_fewshot, cfg.system_prompt)))
    else:
        base = dict(prompt=task.plain_prompt(sample, cfg.num_fewshot, cfg.system_prompt))
    reqs = [GenRequest(**base, **common, sample_index=k) for k in range(cfg.samples)]
    out = []
    for r in reqs:
        change, extra = {}, dict(r.extra)
        if cfg.system_prompt is not None and r.messages is not None:
            rest = tuple(m for m in r.messages if m.get("role") != "system")
            change["messages"] = ({"role": "system", "content": cfg.system_prompt},) + rest
        for k, v in (cfg.gen_kwargs or {}).items():
            if k in OLD_FIELDS:
                change[k] = OLD_FIELDS[k](v)
            elif k == "stop":
                change["stop"] = tuple(v) if isinstance(v, (list, tuple)) else (str(v),)
            else:
                extra[k] = v
        if cfg.gen_kwargs:
            change["extra"] = tuple(sorted(extra.items()))
        out.append(replace(r, **change) if change else r)
    return out


CASES = [
    {},
    {"system_prompt": "Válaszolj magyarul."},
    {"temperature": 0.7, "max_tokens": 17, "samples": 2},
    {"gen_kwargs": {"top_p": 0.9, "repeat_penalty": 1.1, "stop": ["\n\n"]}},
    {"gen_kwargs": {"temperature": 0.3, "seed": 9, "min_p": 0.05}, "system_prompt": "Buď stručný."},
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("chat", [True, False])
def test_requests_equal_the_old_task_plus_overrides_path(case, chat, data_root):
    cfg = RunSettings(**case)
    (task,) = resolve(["mm_eval.knowledge"])
    req = RequestSettings.from_values(cfg.model_dump())
    for sample in task.run_samples(req)[:3]:
        new = task.requests(sample, mode="generate", chat=chat, settings=req)
        old = old_path(task, sample, chat, cfg)
        assert [r.to_dict() for r in new] == [r.to_dict() for r in old]
        assert [r.key("m") for r in new] == [r.key("m") for r in old]


def test_request_settings_hold_no_run_machinery():
    """Nothing of the model, judge, shards, retries or output reaches a task."""
    names = {f.name for f in fields(RequestSettings)}
    assert names == {"split", "limit", "sample", "stratify", "seed", "num_fewshot", "prompt_lang", "system_prompt",
                     "temperature", "max_tokens", "samples", "mode", "circular", "gen_kwargs", "perturb"}
    assert not names & {"model", "judge", "shards", "executor", "ray_args", "max_retries", "output", "base_url"}


def test_the_engine_hands_tasks_request_settings(tmp_path, stub_server, monkeypatch):
    """A run gives every task method a RequestSettings, never the run's settings object."""
    from glotbench.engine.session import run_evaluation
    from glotbench.tasks.task import Task

    seen = set()
    orig_requests, orig_samples = Task.requests, Task.run_samples

    def spy_requests(self, sample, *, mode, chat, settings):
        seen.add(type(settings).__name__)
        return orig_requests(self, sample, mode=mode, chat=chat, settings=settings)

    def spy_samples(self, settings):
        seen.add(type(settings).__name__)
        return orig_samples(self, settings)

    monkeypatch.setattr(Task, "requests", spy_requests)
    monkeypatch.setattr(Task, "run_samples", spy_samples)
    base = stub_server()
    cfg = RunSettings(model="openai:stub", base_url=base, tasks=["mm_eval.knowledge"], limit=2, output=str(tmp_path / "r"),
                      bootstrap=0)
    run_evaluation(cfg, show_progress=False)
    assert seen == {"RequestSettings"}


def test_one_knob_two_values_is_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "glotbench", "run", "--model", "openai:x", "--base-url",
                           "http://127.0.0.1:9/v1", "--tasks", "mm_eval.knowledge", "--temperature", "0.2",
                           "--gen-kwargs", "temperature=0.7", "-o", str(tmp_path / "r")],
                          env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin", "NO_COLOR": "1",
                               "HOME": str(tmp_path), "GLOTBENCH_OFFLINE": "1"},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert lines == ["error: --gen-kwargs temperature=0.7 and --temperature 0.2 set one knob to two values; give one"]
