"""Option groups turned into flags: each flag is spelled in one place and means one thing everywhere.

A group is a small pydantic model whose fields declare their own flags and help
(:func:`glotbench.settings.setting`): :class:`~glotbench.settings.ModelOptions` (``-m/--model``,
``--base-url``, ``--api-key-env``, ``-M/--model-args``), :class:`~glotbench.settings.JudgeOptions`
(``--judge``, ``--judge-args``, ``--judge-base-url``), :class:`~glotbench.settings.CallOptions`
(``-j/--concurrency``, ``--timeout``, ``--max-retries``), :class:`JournalOptions` (``--journal``,
``--wait``) and :class:`DataOptions` below. ``glotbench run``'s options are every flag of
:class:`~glotbench.settings.RunSettings`, which is made of the first three groups and its own fields.

:func:`parameters` turns a model's fields into typer parameters; :func:`options` adds groups to a
command: the command function names a parameter per group and receives one validated instance of it
(a bad value is one line naming the flag's field, exit 2, before any model is loaded).
tests/test_cli_flags.py checks that every flag has one help, type and default across the command line.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from pathlib import Path
from typing import Any, Literal, Optional

import typer
from pydantic import BaseModel, ConfigDict

from glotbench.settings import setting


class JournalOptions(BaseModel):
    """The journal group: where model calls are journaled (rerunning sends nothing twice), and what
    to do when another process holds that folder."""

    model_config = ConfigDict(extra="forbid")

    journal: Optional[Path] = setting(None, "Journal of model calls (default: build.journal.sqlite beside --output).",
                                      "--journal")
    wait: bool = setting(False, "If another glotbench process holds the folder's run lock, wait for it instead of "
                         "refusing.", "--wait", rare=True)


class DataOptions(BaseModel):
    """The data group of the `data` commands: the download cache and the lock file."""

    model_config = ConfigDict(extra="forbid")

    cache_dir: Optional[Path] = setting(None, "Cache folder (default: $GLOTBENCH_CACHE_DIR, else the user cache "
                                        "folder, e.g. ~/.cache/glotbench).", "--cache-dir")
    lock: Optional[Path] = setting(None, "Data lock file (default: $GLOTBENCH_DATA_LOCK, else "
                                   "./glotbench-data.lock.json when it exists).", "--lock")


class Flags(BaseModel):
    """Single flags several commands share, each declared once (a command says in its description what
    the flag means for it: ``options(about=...)``)."""

    model_config = ConfigDict(extra="forbid")

    input: Optional[Path] = setting(None, "The items JSONL (or folder) the command reads; see its description.",
                                    "--input", "-i")
    language: Optional[str] = setting(None, "Language code (cs, en, hu ...) of the items or text; see the command's "
                                      "description for its default.", "--language", "-l")
    dry_run: bool = setting(False, "Print what the command would do (counts, the calls it would send); write and "
                            "send nothing.", "--dry-run")
    json_out: Optional[Path] = setting(None, "Also write the result as JSON to this file.", "--json")
    set_: Optional[list[str]] = setting(None, "A setting NAME=VALUE (repeat or comma-separate): a knob the command "
                                        "takes but does not list as a flag; its description lists them under "
                                        "Settings (glotbench run: any run-config key).", "--set")
    fmt: Optional[str] = setting(None, "The format the command writes (or reads); its description lists the choices "
                                 "and the default.", "--format", "-f")
    task: Optional[str] = setting(None, "One task by its name; the command's description says which and its default.",
                                  "--task")
    metric: Optional[str] = setting(None, "A metric by its name; the command's description says which and its default.",
                                    "--metric")
    name: Optional[str] = setting(None, "The name of what the command makes (a task, an API token); its description "
                                  "says the default.", "--name")


def setting_option(default: Any = None, *flags: str, help: str = "", envvar: str | None = None) -> Any:
    """A command's rare knob as a *setting*, not a listed flag: ``--set NAME=VALUE`` sets it (NAME: the
    parameter's name), its help's "Settings" block lists it, and its flag (``flags``, an earlier spelling)
    is still accepted, unlisted; ``envvar``: an environment variable read when neither is given. The command
    must be wrapped by :func:`options` (which reads ``--set``)."""
    opt = typer.Option(default, *flags, help=help, hidden=True, show_default=False, envvar=envvar)
    opt.glotbench_setting = True  # type: ignore[attr-defined]
    return opt


def _raw_pairs(items: list[str] | None) -> list[tuple[str, str]]:
    """``--set`` items as (NAME, the value's text) in order (typed later, by the setting's own type); a name
    given twice is kept twice (a list setting takes them all; ``dict()`` of it keeps the last)."""
    from glotbench.errors import GlotbenchError

    seen: list[tuple[str, str]] = []
    for item in items or []:
        parts = item.split(",")
        if not all("=" in p for p in parts):  # a comma inside a value (a list): keep the item whole
            parts = [item]
        for part in parts:
            key, sep, raw = part.partition("=")
            if not sep or not key.strip():
                raise GlotbenchError(f"--set {part!r}: expected NAME=VALUE")
            seen.append((key.strip().replace("-", "_"), raw.strip()))
    return seen


def _typed(annotation: Any, raw: str, name: str) -> Any:
    """``raw`` read as ``annotation`` (a list: comma-separated), one line naming the setting when it is not one."""
    from pydantic import TypeAdapter, ValidationError

    from glotbench.errors import GlotbenchError

    listish = "list[" in str(annotation) or typing.get_origin(annotation) is list
    value: Any = [p.strip() for p in raw.split(",") if p.strip()] if listish else (None if raw == "" else raw)
    try:
        return TypeAdapter(annotation).validate_python(value)
    except ValidationError as e:
        msg = e.errors()[0].get("msg", str(e))
        raise GlotbenchError(f"--set {name}={raw!r}: {msg}") from None


def _settings_block(entries: list[tuple[str, str]]) -> str:
    """The help's "Settings" block: one paragraph per setting, by name."""
    lines = ["Settings (--set NAME=VALUE, repeat or comma-separate; each also keeps its earlier flag, unlisted):"]
    lines += [f"  {name}: {text}" for name, text in entries]
    return "\n\n".join(lines)


def cli_type(annotation: Any) -> Any:
    """The type typer parses a field's flag as (dicts are repeated KEY=VALUE strings)."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    origin = typing.get_origin(annotation)
    if origin in (dict,) or annotation is dict:
        return Optional[list[str]]
    if origin in (list,):
        return Optional[list[str]]
    if origin is Literal:
        return Optional[str]
    if origin in (typing.Union, types.UnionType):
        if any(typing.get_origin(a) is list for a in args):
            return Optional[list[str]]  # a value or several (--base-url: repeat or comma-separate)
        if float in args:
            return Optional[float]  # int | float | None (limit): a count or a share
        return cli_type(args[0]) if len(args) == 1 else Optional[str]
    return Optional[annotation]


def field_help(field) -> str:
    from rich.markup import escape

    default = field.get_default(call_default_factory=True)
    shown = "" if default in (None, [], {}, False) else f" (default: {default})"
    # escaped: typer renders help as rich markup, which took "glotbench[ray]" for a style tag and
    # printed pip install 'glotbench'
    return escape(f"{field.description}{shown}")


def _extra(field) -> dict:
    return field.json_schema_extra or {}


def _alias_name(name: str, alias: str) -> str:
    return f"{name}__{alias.lstrip('-').replace('-', '_')}"


def parameters(model: type[BaseModel], only: tuple[str, ...] | None = None,
               required: tuple[str, ...] = (), rare: tuple[str, ...] = ()) -> list[inspect.Parameter]:
    """One keyword parameter per field of ``model`` that declares a flag (``only``: these fields),
    plus a hidden one per old spelling (``aliases``). ``required``: fields the command needs given;
    ``rare``: fields that are this command's settings (their flags unlisted), whatever the field says."""
    params = []
    for name, field in model.model_fields.items():
        flags = _extra(field).get("cli") or []
        if not flags or (only is not None and name not in only):
            continue
        kind = cli_type(field.annotation)
        option = typer.Option(... if name in required else None, *flags, help=field_help(field), show_default=False,
                              hidden=bool(_extra(field).get("rare")) or name in rare)
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=kind))
        for alias in _extra(field).get("aliases") or []:
            params.append(inspect.Parameter(_alias_name(name, alias), inspect.Parameter.KEYWORD_ONLY,
                                            default=typer.Option(None, alias, hidden=True), annotation=kind))
    return params


def option_of(model: type[BaseModel], name: str):
    """The typer option of one field (a command that declares its parameter itself: ``x: Path = option_of(...)``)."""
    (param,) = parameters(model, only=(name,))
    return param.default


def given(model: type[BaseModel], values: dict[str, Any], only: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The flags of ``model`` given on the command line (taken out of ``values``), KEY=VALUE lists
    read into dicts; an old spelling (alias) adds to the field's value."""
    from glotbench.settings import parse_key_values

    out: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        if only is not None and name not in only:
            continue
        v = values.pop(name, None)
        for alias in _extra(field).get("aliases") or []:
            extra = values.pop(_alias_name(name, alias), None)
            if extra:
                v = [*(v or []), *extra]
        if v is None or v == []:
            continue
        if typing.get_origin(field.annotation) is dict:
            v = parse_key_values(v, (_extra(field).get("cli") or [name])[0])
        out[name] = v
    return out


def from_cli(model: type[BaseModel], values: dict[str, Any], only: tuple[str, ...] | None = None):
    """``model`` from the flags given (the rest at their defaults); a bad value is one line."""
    from glotbench.errors import GlotbenchError
    from glotbench.yamlfile import validate

    return validate(model, given(model, values, only), Path("command line"), GlotbenchError)


def options(*flat: tuple, about: dict[str, str] | None = None, **groups: Any):
    """Add option groups to a command: ``@options(mo=ModelOptions, calls=CallOptions, journal=(JournalOptions,
    {"only": ("wait",)}))``; the function's parameters of those names receive the validated groups.
    A group is a model, or (model, {"only": fields, "required": fields, "rare": fields}); ``rare``: fields
    that are settings of this command (``--set NAME=VALUE``; their flags still work, unlisted) though
    they are listed flags elsewhere.

    ``flat``: (model, field, ...) tuples: single flags declared once elsewhere (``--output``, ``--limit`` ...
    of :class:`~glotbench.settings.RunSettings`, :class:`Flags`) that the function takes as plain
    keyword-only parameters of the same name (one annotated Path gets a Path); ``"output!"``: required.
    ``about``: what a shared flag means for this command (appended to its description: "--output: ...")."""

    def add(fn):
        sig = inspect.signature(fn)
        specs = {name: (g, {}) if isinstance(g, type) else g for name, g in groups.items()}
        missing = set(specs) - set(sig.parameters)
        if missing:
            raise TypeError(f"{fn.__name__}: no parameter for option group(s) {sorted(missing)}")
        singles = [(model, [n.rstrip("!") for n in names]) for model, *names in flat]
        required = {n.rstrip("!") for _, *names in flat for n in names if n.endswith("!")}
        single_names = {n for _, names in singles for n in names}
        as_path = {n for n in single_names if n in sig.parameters and "Path" in str(sig.parameters[n].annotation)}
        own_default = {n: sig.parameters[n].default for n in single_names if n in sig.parameters}
        own = [p for n, p in sig.parameters.items() if n not in specs and n not in single_names]
        added = [p for model, kw in specs.values() for p in parameters(model, **kw)]
        added += [p for model, names in singles
                  for p in parameters(model, only=tuple(names), required=tuple(n for n in names if n in required))]
        clash = {p.name for p in own} & {p.name for p in added}
        if clash:
            raise TypeError(f"{fn.__name__}: parameter(s) {sorted(clash)} are also option-group fields")
        # settings: rare knobs of the groups and flat flags, and the command's own setting_option()s
        own_settings = {p.name: p for p in own if getattr(p.default, "glotbench_setting", False)}
        model_settings = {}
        for model, kw in [*specs.values(), *[(m, {"only": tuple(n)}) for m, n in singles]]:
            for name, field in model.model_fields.items():
                rare = _extra(field).get("rare") or name in kw.get("rare", ())
                if rare and _extra(field).get("cli") and (kw.get("only") is None or name in kw["only"]):
                    model_settings[name] = field
        takes_set = "set_" in sig.parameters or "set_" in single_names
        auto_set = bool(own_settings or model_settings) and not takes_set
        if auto_set:
            added.append(inspect.Parameter("set_", inspect.Parameter.KEYWORD_ONLY, annotation=Optional[list[str]],
                                           default=option_of(Flags, "set_")))
        setting_names = sorted({*own_settings, *model_settings})

        @functools.wraps(fn)
        def command(**values: Any) -> Any:
            if setting_names:
                _apply_settings(values, own_settings, model_settings, auto_set)
            for name, (model, kw) in specs.items():
                values[name] = from_cli(model, values, kw.get("only"))
            for model, names in singles:
                got = from_cli(model, values, tuple(names))
                for n in names:
                    v = getattr(got, n)
                    if n not in got.model_fields_set and own_default.get(n, inspect.Parameter.empty) is not \
                            inspect.Parameter.empty:
                        continue  # not given: the command's own default (its description says it)
                    values[n] = Path(v) if n in as_path and v is not None else v
            return fn(**values)

        command.__signature__ = sig.replace(parameters=own + added)  # type: ignore[attr-defined]
        command.__annotations__ = {**{p.name: p.annotation for p in own + added}, "return": None}
        if about:
            command.__doc__ = (fn.__doc__ or "").rstrip() + "\n\n" + "\n\n".join(
                f"{_flag_of(singles, specs, n)}: {text}" for n, text in about.items())
        entries = [(n, _setting_text(own_settings[n].default.help or "", own_settings[n].default.default)
                    if n in own_settings else field_help(model_settings[n])) for n in setting_names]
        if entries:
            command.__doc__ = (command.__doc__ or "").rstrip() + "\n\n" + _settings_block(entries)
        command.glotbench_settings = setting_names  # type: ignore[attr-defined]
        return command

    return add


def _setting_text(help_: str, default: Any) -> str:
    from rich.markup import escape

    shown = "" if default in (None, [], {}, False, ...) else f" (default: {default})"
    return escape(f"{help_}{shown}")


def _apply_settings(values: dict[str, Any], own: dict[str, inspect.Parameter], fields: dict[str, Any],
                    auto_set: bool) -> None:
    """``--set NAME=VALUE`` into the command's values: a setting of its own (typed by its annotation) or a
    rare group field (validated with its group); another name is the command's own ``--set`` (run, serve)
    or one line naming the closest settings."""
    from glotbench.closest import closest
    from glotbench.errors import GlotbenchError

    pairs = values.pop("set_", None) if auto_set else values.get("set_")
    rest = []
    given_lists: dict[str, list] = {}
    for name, raw in _raw_pairs(pairs):
        if name in own:
            v = _typed(own[name].annotation, raw, name)
            if isinstance(v, list):  # a list setting given in several --set: the values of all of them
                v = given_lists[name] = [*given_lists.get(name, []), *v]
            values[name] = v
        elif name in fields:
            values[name] = raw
        elif auto_set:
            near = closest(name, [*own, *fields])
            raise GlotbenchError(f"--set {name}: not a setting of this command" +
                                 (f"; did you mean {', '.join(near)}?" if near else
                                  f" (its settings: {', '.join(sorted([*own, *fields]))})"))
        else:
            rest.append(f"{name}={raw}")
    if not auto_set:
        values["set_"] = rest or None


def _flag_of(singles, specs, name: str) -> str:
    for model in [m for m, _ in singles] + [m for m, _ in specs.values()]:
        field = model.model_fields.get(name)
        if field is not None:
            return (_extra(field).get("cli") or ["--" + name])[0]
    raise TypeError(f"about: {name} is not a flag of this command's option groups")


def one_of(value: Any, flag: str, choices: tuple[str, ...]) -> Any:
    """``value`` when it is one of ``choices`` (None: not given), else one line: "--format must be table or
    json, got 'x'"."""
    from glotbench.errors import GlotbenchError

    if value is not None and value not in choices:
        listed = ", ".join(choices[:-1]) + " or " + choices[-1] if len(choices) > 1 else choices[0]
        raise GlotbenchError(f"{flag} must be {listed}, got {value!r}")
    return value


def calls_in_flight(concurrency: int | None, model: Any) -> int:
    """``--concurrency``, else the backend's own limit, else 8 (as ``glotbench run``)."""
    return concurrency or getattr(model, "max_parallel", None) or 8


def retry_policy(calls):
    """The retry policy of ``--timeout`` and ``--max-retries`` (the rest at RetryPolicy's defaults)."""
    from glotbench.engine.retry import RetryPolicy

    return RetryPolicy(max_attempts=calls.max_retries + 1, timeout=calls.timeout)


def load_model(mo, timeout: float | None = None, spec: str | None = None):
    """The model of ``mo`` (a :class:`~glotbench.settings.ModelOptions`) as ``glotbench run`` loads it:
    ``-M``, ``--api-key-env`` and ``--base-url`` (``spec``: one of several ``--model``)."""
    from glotbench.models.registry import load_cli_model

    return load_cli_model(spec or one(mo.model, "--model"), mo.load_args(), base_url=mo.base_url, timeout=timeout)


def one(value: str | list[str] | None, flag: str) -> str | None:
    """A flag several commands repeat (--model, --judge) given once here."""
    from glotbench.errors import GlotbenchError

    if isinstance(value, list):
        raise GlotbenchError(f"{flag}: this command takes one (got {len(value)}: {', '.join(value)})")
    return value


def several(value: str | list[str] | None) -> list[str]:
    """A repeatable flag's values as a list (none: [])."""
    return [] if value is None else list(value) if isinstance(value, list) else [value]
