"""Czech-Bench's run configuration (its ``eval_config.yml``) read as a glotbench run config.

The framework's file::

    model_name: embedded            # glotbench model spec here (the framework names a models/*.py file)
    model_parameters: {max_new_tokens: 4, base_url: ...}
    benchmarks:
    - name: agree                   # a Czech-Bench benchmark name, or any glotbench task/suite name
      use: true                     # false: skipped
      local: true                   # accepted; glotbench always reads local data when it is there
    stop_idx: 5                     # the first N items of each benchmark (null: all)
    note: "free text"               # the framework's -n; also `glotbench run --note`

maps to ``model``, ``model_args`` (``max_new_tokens`` becomes ``max_tokens``; ``base_url``,
``api_key_env``, ``temperature`` become the run settings of those names), ``tasks`` (the used
benchmarks; a Czech-Bench name becomes its task: ``agree`` -> ``czech_bench.agree``,
``klokanek`` -> ``czech_bench.klokanek``), ``limit`` and ``note``; a used benchmark whose data is absent is set aside (listed as data
missing), as the framework goes on when one benchmark fails. Keys glotbench's own run config has
(``seed``, ``output``, ``concurrency``...) may sit beside them.
"""

from __future__ import annotations

from typing import Any

FRAMEWORK_KEYS = ("model_name", "model_parameters", "benchmarks", "stop_idx")
TASK_OF: dict[str, str] = {}  # a benchmark whose task is not czech_bench.<name> (none since Klokánek's rename)
_SETTINGS = {"max_new_tokens": "max_tokens", "base_url": "base_url", "api_key_env": "api_key_env", "temperature": "temperature"}


def is_framework_config(raw: dict) -> bool:
    return any(k in raw for k in FRAMEWORK_KEYS)


def task_name(bench: str) -> str:
    from glotbench.tasks.registry import all_specs, suites

    if bench in all_specs() or bench in suites():
        return bench
    return TASK_OF.get(bench, f"czech_bench.{bench}")


def from_framework(raw: dict, where: str) -> dict[str, Any]:
    """The glotbench run-config mapping for a framework-shaped one; errors name the file and field."""
    from glotbench.errors import GlotbenchError

    raw = dict(raw)
    out: dict[str, Any] = {}
    if "model_name" in raw:
        out["model"] = raw.pop("model_name")
    params = raw.pop("model_parameters", None) or {}
    if not isinstance(params, dict):
        raise GlotbenchError(f"{where}: field 'model_parameters' must be a mapping")
    args = {}
    for k, v in params.items():
        if k in _SETTINGS:
            out[_SETTINGS[k]] = v
        else:
            args[k] = v
    if args:
        out["model_args"] = {**(raw.pop("model_args", None) or {}), **args}
    benches = raw.pop("benchmarks", None) or []
    if not isinstance(benches, list):
        raise GlotbenchError(f"{where}: field 'benchmarks' must be a list of {{name, use, local}}")
    tasks = list(raw.pop("tasks", None) or [])
    for i, b in enumerate(benches):
        if not isinstance(b, dict) or not isinstance(b.get("name"), str):
            raise GlotbenchError(f"{where}: benchmarks[{i}]: needs a 'name'")
        unknown = set(b) - {"name", "use", "local"}
        if unknown:
            raise GlotbenchError(f"{where}: benchmarks[{i}]: unknown field {sorted(unknown)[0]!r} (known: name, use, local)")
        if b.get("use", True):
            tasks.append(task_name(b["name"]))
    if benches and not tasks:
        raise GlotbenchError(f"{where}: field 'benchmarks': no benchmark has use: true")
    out["tasks"] = tasks
    if benches:
        out["skip_missing_data"] = True  # like the framework, a benchmark that cannot load does not stop the others
    if "stop_idx" in raw:
        stop = raw.pop("stop_idx")
        if stop is not None:
            out["limit"] = int(stop)
    return {**raw, **out}


class _Reader:
    """The reader registered with ``bench.config_reader`` (glotbench.config_readers)."""

    is_mine = staticmethod(is_framework_config)
    read = staticmethod(from_framework)


READER = _Reader()
