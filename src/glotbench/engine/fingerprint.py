"""One reproducibility id per task result.

A task's fingerprint hashes everything that can change its numbers: the data files' content, the
whole task spec (every field after defaults but ``FINGERPRINT_EXEMPT``: description, source, order,
suites, and ``prompts``, the other prompts a task declares: each variant runs as a task of its own),
the language pack the task reads answers with, the source files of user code the spec
names (a ``record_fn``, ``task_class``, scorer, extractor or metric outside glotbench; glotbench's own
code is stood for by its version), the model settings and the run settings. A run whose stored
fingerprint differs recomputes (engine/stored_summary.py).
"""

from __future__ import annotations

import hashlib
import inspect
from typing import Any

from glotbench.version import __version__
from glotbench.models.base import canonical_json, sha256_hex
from glotbench.settings import RunSettings
from glotbench.tasks.modes import task_mode
from glotbench.tasks.request_settings import RequestSettings
from glotbench.tasks.task import Task


def task_fingerprint(task: Task, settings: RunSettings, model_settings: dict, pack: Any = None) -> dict:
    """``pack``: the language pack the plan resolved for the task (None: resolve it here, in the
    run's mode; a pack the task's scoring needs and that does not exist is a TaskSpecError)."""
    split = settings.split or task.spec.dataset.eval_split
    if pack is None:
        pack = task.language_pack(task_mode(task, RequestSettings.from_values(settings.model_dump())))
    parts = {
        "data": task.data_fingerprint(split),
        "spec": task.spec.spec_hash(),
        "pack": pack_fingerprint(pack, task.spec.language),
        "code": code_fingerprint(task),
        "glotbench": __version__.rsplit(".", 1)[0],
        "model": sha256_hex(canonical_json(model_settings))[:8],
        "settings": sha256_hex(canonical_json(settings.request_settings()))[:8],
    }
    parts["id"] = sha256_hex(canonical_json(parts))[:12]
    return parts


def fingerprint_once(task: Task, settings: RunSettings, model_settings: dict, pack: Any = None) -> dict:
    """:func:`task_fingerprint`, computed once per task object, settings and model settings (kept on
    the task): the plan, the re-report check before any item is read and the same check under the
    run's lock hash the data files once."""
    key = canonical_json([settings.request_settings(), model_settings])
    hit = getattr(task, "_fingerprint_memo", None)
    if hit is not None and hit[0] == key:
        return hit[1]
    fp = task_fingerprint(task, settings, model_settings, pack)
    task._fingerprint_memo = (key, fp)
    return fp


def pack_fingerprint(pack: Any, language: str) -> str:
    """Hash of the language pack's content (its words and rules); of the bare code for a task whose
    scoring reads no pack in a language that has none (``Task.language_pack`` returned None)."""
    # ``perturbations`` says which --perturb names apply; a perturbed run's settings hold what it did
    # ``normalization.fold`` while empty, as every pack was before the field existed: their hashes stay
    if pack is None:
        content = {"unknown": language}
    else:
        content = pack.model_dump(mode="json", exclude={"perturbations": True} if pack.normalization.fold else
                                  {"perturbations": True, "normalization": {"fold"}})
    return sha256_hex(canonical_json(content))[:8]


def _code_objects(task: Task) -> list[Any]:
    """The code a task's numbers come from: its class (and bases), record_fn, scorer, extractor, metrics."""
    from glotbench.extract import get_extractor
    from glotbench.scoring.metrics import get_metric

    spec = task.spec
    objs: list[Any] = list(type(task).__mro__)
    if spec.dataset.record_fn:
        objs.append(task._record_fn)
    try:
        objs.append(getattr(task.scorer, "fn", task.scorer))
    except Exception:  # noqa: BLE001 - a task class that scores without the YAML's scorer
        pass
    try:
        objs.append(get_extractor(spec.extractor.name))
    except Exception:  # noqa: BLE001
        pass
    for name in spec.metrics:
        try:
            m = get_metric(name)
        except Exception:  # noqa: BLE001
            continue
        impl = m.implementation()  # a plugin's kind is its code
        objs += [impl.fn, impl.fast] if impl is not None else []
    return [o for o in objs if o is not None]


def _source_file(obj: Any) -> str | None:
    """The source file of ``obj``'s module when that module is not glotbench's own (None then)."""
    module = inspect.getmodule(obj)
    name = getattr(module, "__name__", "") or ""
    if module is None or name == "builtins" or name == "glotbench" or name.startswith("glotbench."):
        return None
    return getattr(module, "__file__", None) or f"<{name}>"


def code_fingerprint(task: Task) -> str:
    """Hash of the content of every user source file the task's code comes from ("" when none)."""
    files = sorted({f for f in map(_source_file, _code_objects(task)) if f})
    if not files:
        return ""
    digests = {}
    for f in files:
        try:
            with open(f, "rb") as fh:
                digests[f] = hashlib.sha256(fh.read()).hexdigest()
        except OSError:
            digests[f] = f  # no file (a module built in memory): its name stands for it
    return sha256_hex(canonical_json(sorted(digests.values())))[:8]


def run_fingerprint(task_fps: dict[str, dict]) -> str:
    return sha256_hex(canonical_json({k: v["id"] for k, v in sorted(task_fps.items())}))[:12]
