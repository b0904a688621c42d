"""`glotbench run`: evaluate a model on tasks and suites; a thin layer over the Python API's
:func:`glotbench.api.evaluate_settings` (the call ``glotbench.evaluate()`` makes).

The settings options are built from :class:`glotbench.settings.RunSettings` (each field names its
flag and help) by the one generator of every command's option groups (:mod:`glotbench.cli.option_groups`),
so a new setting needs no edit here. Only options that are not run settings
(``--config``, ``--write-out``, ``--predictions-out``, ``--no-progress``, ``--wait``) are declared below.
"""

from __future__ import annotations

import gc
import inspect
import sys
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console

from glotbench.cli import app
from glotbench.cli.option_groups import (Flags, JournalOptions, _raw_pairs, _settings_block, _typed, field_help, given,
                                         option_of, parameters)
from glotbench.settings import RunSettings


def settings_parameters() -> list[inspect.Parameter]:
    """One keyword parameter per RunSettings field that declares a flag (the model, judge and calling
    groups included: :mod:`glotbench.cli.option_groups`)."""
    return parameters(RunSettings)


def settings_from_cli(values: dict[str, Any], config: Path | None) -> RunSettings:
    """The run's settings: the config file (if any), then every flag given on top of it."""
    from glotbench.engine.config import load_config
    from glotbench.errors import GlotbenchError

    base = load_config(config).model_dump(exclude_unset=True) if config else {}
    if config is not None and not base:
        raise GlotbenchError(f"{config}: the run config is empty; name at least the tasks (e.g. tasks: [default])")
    values = dict(values)
    over = set_pairs(values.pop("set_", None))
    for name, v in given(RunSettings, values).items():  # a flag over --set; KEY=VALUE ones merged key by key
        over[name] = {**over[name], **v} if isinstance(v, dict) and isinstance(over.get(name), dict) else v
    for name, v in over.items():
        if isinstance(v, dict):  # -M, --gen-kwargs ...: laid over the config file's, key by key
            over[name] = {**(base.get(name) or {}), **v}
    if "tasks" in base and not base["tasks"] and not over.get("tasks"):
        raise GlotbenchError(f"{config}: field 'tasks': the list is empty; name tasks or suites, or leave the key out "
                             f"(default: the suite named default)")
    from glotbench.yamlfile import validate

    # a bad value (negative max_tokens or temperature, ...) is one line naming the field, exit 2
    return validate(RunSettings, {**base, **over}, config or Path("command line"), GlotbenchError)


def _kind(name: str) -> str:
    """What a run setting holds: dict (KEY=VALUE pairs: gen_kwargs, model_args), list (perturb) or neither ("")."""
    field = RunSettings.model_fields.get(name)
    ann = str(field.annotation) if field is not None else ""
    return "dict" if ann.startswith("dict") else "list" if ann.startswith("list") else ""


def set_pairs(pairs: list[str] | None) -> dict[str, Any]:
    """``--set NAME=VALUE``: any run setting by its config-file name (the rare knobs whose flags are not
    shown: sample, gen_kwargs, retry_base_delay, shard_retries ...); an unknown name is one line.

    A KEY=VALUE setting takes the rest of its item (``--set gen_kwargs=top_k=5,top_p=0.9``, as
    ``--gen-kwargs``), a list setting its comma-separated values (``--set perturb=typos,case``);
    other items may hold several settings (``--set retry_base_delay=2,breaker_failures=0``)."""
    from glotbench.closest import closest
    from glotbench.errors import GlotbenchError
    from glotbench.settings import parse_key_values

    out: dict[str, Any] = {}
    for item in pairs or []:
        key, sep, rest = item.partition("=")
        name = key.strip().replace("-", "_")
        if sep and _kind(name) == "dict":
            out[name] = {**(out.get(name) or {}), **parse_key_values([rest], f"--set {name}")}
            continue
        if sep and _kind(name) == "list":
            out[name] = [*(out.get(name) or []), *(p.strip() for p in rest.split(",") if p.strip())]
            continue
        for k, v in parse_key_values([item], "--set").items():
            k = k.replace("-", "_")
            if k not in RunSettings.model_fields:
                near = closest(k, list(RunSettings.model_fields))
                raise GlotbenchError(f"--set {k}: not a run setting" + (f"; did you mean {', '.join(near)}?" if near else
                                                                      " (docs/run-config.md lists them)"))
            if _kind(k) == "dict" and isinstance(v, str):  # retry_base_delay=2,gen_kwargs=top_k=5
                v = parse_key_values([v], f"--set {k}")
            elif _kind(k) == "list" and isinstance(v, str):
                v = [v]
            out[k] = {**(out.get(k) or {}), **v} if _kind(k) == "dict" else [*(out.get(k) or []), *v] if _kind(k) == "list" else v
    return out


def session_requests_line(session: dict) -> str | None:
    """Where this session's answers came from: sent, already in the journal, from the shared
    response cache (``--cache``; docs/cache.md). None for a session that counted nothing."""
    sent, cached = session.get("requests_sent"), session.get("requests_cached")
    if sent is None and cached is None:
        return None
    shared = session.get("requests_from_shared_cache") or 0
    parts = [f"{sent or 0} sent", f"{(cached or 0) - shared} from this run's journal"]
    if shared:
        parts.append(f"{shared} from the response cache (the cache setting)")
    judge = session.get("judge_requests_sent") or 0
    if judge:
        parts.append(f"{judge} judge request(s) sent")
    return "requests this session: " + " · ".join(parts)


def _run(*, config: Optional[Path], write_out: Optional[int], predictions_out: Optional[Path], no_progress: bool,
         wait: Optional[bool] = False, **values: Any) -> None:
    """Evaluate a model; re-running the same command resumes from the journal."""
    from glotbench.api import evaluate_settings
    from glotbench.output.table import print_results

    cfg = settings_from_cli(values, config)
    if write_out:
        from glotbench.engine.preview import write_out as preview

        preview(cfg, write_out, Console(width=None if sys.stdout.isatty() else 160, soft_wrap=True))
        return
    console = Console(stderr=True, soft_wrap=True)
    # This process exists for the run: the objects alive now (modules, settings) are left out of the
    # collector's walks, and young collections come 10,000 container allocations apart instead of 700
    # (a run against a fast server spent a tenth of its CPU in collections: docs/performance.md).
    # glotbench.evaluate() called from Python leaves its host's collector as it is.
    gc.freeze()
    gc.set_threshold(10_000, *gc.get_threshold()[1:])
    try:
        res = evaluate_settings(cfg, console=console, show_progress=not no_progress, wait_lock=bool(wait))  # = glotbench.evaluate()
        results, out_dir = res.results, res.output_dir
    except KeyboardInterrupt:
        console.print("[yellow]interrupted[/]: everything finished so far is in the journal; run the same command again to resume")
        raise typer.Exit(130)
    out = Console(width=None if sys.stdout.isatty() else 160)
    print_results(results, out)
    out.print(f"results: {out_dir / 'results.json'} · samples: {out_dir / 'samples.jsonl'}", soft_wrap=True)
    session = (results["run"].get("sessions") or [results["run"]])[-1]
    line = session_requests_line(session)
    if line:
        out.print(line, soft_wrap=True, highlight=False)
    if session.get("requests_sent") == 0 and (session.get("failed_requests") or 0) > 0:
        # nothing got through (an unreachable server, a wrong URL or key): say so on one line
        first = results["errors"][0]["error"] if results["errors"] else "every request failed"
        typer.echo(f"error: no request succeeded ({session['failed_requests']} failed): {first}", err=True)
        raise typer.Exit(2)
    failed = [n for n, t in results["tasks"].items() if t.get("status") == "failed"]
    if failed:
        # answers came back but every item of these tasks failed (a missing grader prompt, a judge
        # that never answered ...): not a result; results.json says "failed" and names the errors
        first = next((results["tasks"][n].get("first_error") for n in failed if results["tasks"][n].get("first_error")),
                     None) or "see samples.jsonl"
        typer.echo(f"error: every item failed in {len(failed)} task(s): {', '.join(failed)}: {first}", err=True)
        raise typer.Exit(2)
    unloadable = [n for n, why in (results.get("skipped_tasks") or {}).items() if why.startswith("cannot load: ")]
    if predictions_out:
        from glotbench.output.submission_writers import build_submissions

        for s in build_submissions(out_dir, predictions_out):
            if s.path is None:
                console.print(f"[yellow]warning[/]: no submission for {s.task}: {s.skipped}")
                continue
            out.print(f"submission: {s.path}", soft_wrap=True)
            if s.n_missing:
                console.print(f"[yellow]warning[/]: {s.path} covers {s.n_items - s.n_missing} of {s.n_items} "
                              f"{s.split} items ({s.n_missing} never run: --limit or an interrupted run); "
                              "the leaderboard rejects a partial file")
    if unloadable:
        # the other tasks ran and are in results.json; exit 3 says the selection did not all run
        # (a task whose data is merely absent is set aside with exit 0, as before: docs/run-config.md)
        typer.echo(f"error: {len(unloadable)} task(s) could not load their data and were not run: {', '.join(unloadable)}", err=True)
        raise typer.Exit(3)


PREDICTIONS_HELP = "Write leaderboard submission files to this folder after the run (HuLU tasks)."


def _command_signature() -> inspect.Signature:
    own = [
        inspect.Parameter("config", inspect.Parameter.KEYWORD_ONLY, annotation=Optional[Path],
                          default=typer.Option(None, "--config", "-c", help="Run config YAML; flags override it.")),
        inspect.Parameter("write_out", inspect.Parameter.KEYWORD_ONLY, annotation=Optional[int],
                          default=typer.Option(None, "--write-out", help="Print the prompts of the first N items of each "
                                               "task and stop; no model is loaded or called.")),
        inspect.Parameter("predictions_out", inspect.Parameter.KEYWORD_ONLY, annotation=Optional[Path],
                          default=typer.Option(None, "--predictions-out", help=PREDICTIONS_HELP, hidden=True)),
        inspect.Parameter("no_progress", inspect.Parameter.KEYWORD_ONLY, annotation=bool,
                          default=typer.Option(False, "--no-progress")),
        inspect.Parameter("set_", inspect.Parameter.KEYWORD_ONLY, annotation=Optional[list[str]],
                          default=option_of(Flags, "set_")),
    ]
    return inspect.Signature(settings_parameters() + own + parameters(JournalOptions, only=("wait",)))


def run(**kwargs: Any) -> None:
    rest = []
    for item in kwargs.get("set_") or []:  # the journal group's wait and run's predictions_out: not run-config keys
        first = item.partition("=")[0].strip().replace("-", "_")
        if _kind(first) == "dict":
            rest.append(item)  # gen_kwargs=top_k=5,top_p=0.9: the whole item is that setting's
            continue
        pairs = dict(_raw_pairs([item]))
        for name in [n for n in pairs if n in _OWN_SETTINGS]:
            kwargs[name] = _typed(_OWN_SETTINGS[name], pairs.pop(name), name)
        rest += [f"{k}={v}" for k, v in pairs.items()]
    kwargs["set_"] = rest or None
    _run(**kwargs)


# run's settings that are not run-config keys: name -> type
_OWN_SETTINGS = {"wait": bool, "predictions_out": Optional[Path]}


run.__signature__ = _command_signature()  # type: ignore[attr-defined]
run.__annotations__ = {p.name: p.annotation for p in run.__signature__.parameters.values()}  # type: ignore[attr-defined]
_SETTINGS = sorted([(n, field_help(f)) for n, f in {**RunSettings.model_fields,
                                                    "wait": JournalOptions.model_fields["wait"]}.items()
                     if (f.json_schema_extra or {}).get("rare")] + [("predictions_out", PREDICTIONS_HELP)])
run.__doc__ = _run.__doc__ + ("\n\n" + _settings_block(_SETTINGS) +
                              "\n\n--set also takes any other run-config key (docs/run-config.md).")
run.glotbench_settings = [n for n, _ in _SETTINGS]  # type: ignore[attr-defined]
app.command("run")(run)
