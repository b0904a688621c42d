"""``glotbench serve`` (the leaderboard web service) and ``glotbench admin ...`` (its accounts and tasks)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import typer

from glotbench.cli import NounGroup, app
from glotbench.cli.option_groups import Flags, option_of, options, setting_option

DB_HELP = "Database URL: sqlite:///path.db (default sqlite:///glotbench-leaderboard.db) or postgresql+psycopg://user:pw@host/db."
DB_ENV = "GLOTBENCH_DB"

admin_app = typer.Typer(cls=NounGroup, help="Manage the leaderboard: users, API tokens and tasks.", no_args_is_help=True)
app.add_typer(admin_app, name="admin")


# where the admin group's --db of this invocation is kept: the click context's meta, which the group's
# context shares with its sub-command's (nothing is kept between two invocations in one process)
_META = "glotbench.admin_db"
# a sub-command's own --db: the spelling before the admin group took it (glotbench admin list-tasks --db URL)
_DB = typer.Option(None, "--db", hidden=True, help=DB_HELP)


@admin_app.callback()
def _admin_needs_serve(ctx: typer.Context, db: str = typer.Option(None, "--db", help=DB_HELP, envvar=DB_ENV)) -> None:
    """The leaderboard's database is the noun's option: glotbench admin --db URL SUB-COMMAND ...
    (default $GLOTBENCH_DB), the same for every sub-command."""
    from glotbench.extras import require

    require("serve", "glotbench admin")
    ctx.meta[_META] = db


def _db_url(db: str | None, group: str | None = None) -> str:
    """A command's own --db, else its group's (admin --db), else $GLOTBENCH_DB, else the default."""
    from glotbench.leaderboard.db import DEFAULT_DB_URL

    return db or group or os.environ.get(DB_ENV) or DEFAULT_DB_URL


@app.command()
@options()
def serve(
    host: str = typer.Option("127.0.0.1", help="Address to listen on."),
    port: int = typer.Option(8000, help="Port to listen on."),
    db: str = typer.Option(None, "--db", help=DB_HELP, envvar=DB_ENV),
    max_upload_mb: float = setting_option(5.0, "--max-upload-mb", help="Largest predictions file accepted, in MiB."),
    secret_key: str = setting_option(None, "--secret-key", help="Key that signs session cookies (default: "
                                     "$GLOTBENCH_SECRET_KEY, else one generated once and kept in the database).",
                                     envvar="GLOTBENCH_SECRET_KEY"),
    https_only: bool = setting_option(False, "--https-only", help="Send the session cookie only over HTTPS (set this behind a TLS proxy)."),
    max_per_day: int = setting_option(5, "--max-per-day", help="Uploads per user and task per day (0: no limit)."),
    max_per_month: int = setting_option(30, "--max-per-month", help="Uploads per user and task per 30 days (0: no limit)."),
    max_per_address_day: int = setting_option(None, "--max-per-address-day", help="Uploads per network address and task per day, over all accounts (default: 3 x max_per_day; 0: no limit)."),
    register_per_address_hour: int = setting_option(3, "--register-per-address-hour", help="New accounts per network address per hour (0: no limit)."),
    register_per_address_day: int = setting_option(10, "--register-per-address-day", help="New accounts per network address per day (0: no limit)."),
    register_per_hour: int = setting_option(60, "--register-per-hour", help="New accounts on the whole site per hour (0: no limit)."),
    approve_accounts: bool = setting_option(False, "--approve-accounts", help="New accounts may upload only after 'glotbench admin approve-user'."),
    score_digits: int = setting_option(3, "--score-digits", help="Decimals scores are shown with (pages, API, export)."),
    body_timeout: float = setting_option(30.0, "--body-timeout", help="Seconds a client has to send a whole request body (then 408)."),
    parse_budget: float = setting_option(3.0, "--parse-budget", help="Seconds one request may spend parsing an uploaded JSON body (then 422)."),
    login_max_failures: int = setting_option(5, "--login-max-failures", help="Wrong passwords in a row that lock an account."),
    login_lockout: int = setting_option(900, "--login-lockout", help="Seconds a locked account stays locked."),
    trusted_proxy: list[str] = setting_option(None, "--trusted-proxy", help="Address or network (CIDR) of a reverse proxy whose X-Forwarded-For names the client (repeat; default none, loopback included: the TCP peer is the client)."),
    shutdown_timeout: float = setting_option(10.0, "--shutdown-timeout", help="On SIGTERM/SIGINT: seconds to let open requests finish before closing them."),
    set_: Optional[list[str]] = option_of(Flags, "set_"),
) -> None:
    """Start the leaderboard web service (pages and REST API).

    Its deployment and limits are settings: --set https_only=true,max_per_day=10 (docs/leaderboard.md)."""
    knobs = _knobs(set_, max_upload_mb=max_upload_mb, max_per_day=max_per_day, max_per_month=max_per_month,
                   max_per_address_day=max_per_address_day, register_per_address_hour=register_per_address_hour,
                   register_per_address_day=register_per_address_day, register_per_hour=register_per_hour,
                   score_digits=score_digits, body_timeout=body_timeout, parse_budget=parse_budget,
                   login_max_failures=login_max_failures, login_lockout=login_lockout, shutdown_timeout=shutdown_timeout)
    (max_upload_mb, max_per_day, max_per_month, max_per_address_day, register_per_address_hour, register_per_address_day,
     register_per_hour, score_digits, body_timeout, parse_budget, login_max_failures, login_lockout,
     shutdown_timeout) = knobs.values()
    from glotbench.extras import require

    require("serve", "glotbench serve")
    import uvicorn

    from glotbench.leaderboard.app import create_app
    from glotbench.leaderboard.config import Settings

    url = _db_url(db)
    settings = Settings(max_upload_bytes=int(max_upload_mb * 1024 * 1024), https_only=https_only, max_per_day=max_per_day,
                        max_per_month=max_per_month, max_per_address_day=max_per_address_day,
                        register_per_address_hour=register_per_address_hour, register_per_address_day=register_per_address_day,
                        register_per_hour=register_per_hour, approve_accounts=approve_accounts, score_digits=score_digits, body_timeout_s=body_timeout, parse_budget_s=parse_budget,
                        login_max_failures=login_max_failures, login_lockout_s=login_lockout,
                        trusted_proxies=tuple(_proxies(trusted_proxy or [])))
    web = create_app(url, secret_key=secret_key, settings=settings)
    typer.echo(f"glotbench leaderboard on http://{host}:{port}/ (database {_hide_password(url)})")
    # the app reads X-Forwarded-For itself, from --trusted-proxy peers only (leaderboard/web.py); uvicorn's
    # own reading would trust 127.0.0.1 by default
    uvicorn.run(web, host=host, port=port, log_level="info", proxy_headers=False,
                timeout_graceful_shutdown=max(1, int(shutdown_timeout + 0.999)))


# the type each --set knob is read as (its flag's)
_KNOB_TYPES = {"max_upload_mb": float, "max_per_day": int, "max_per_month": int, "max_per_address_day": int,
               "register_per_address_hour": int, "register_per_address_day": int, "register_per_hour": int,
               "score_digits": int, "body_timeout": float, "parse_budget": float, "login_max_failures": int,
               "login_lockout": int, "shutdown_timeout": float}


def _knobs(pairs: list[str] | None, **flags) -> dict:
    """The limits: each knob's own flag, then --set NAME=VALUE over it; an unknown name or a value of
    the wrong type is one line."""
    from glotbench.closest import closest
    from glotbench.errors import GlotbenchError
    from glotbench.settings import parse_key_values

    for key, value in parse_key_values(pairs, "--set").items():
        if key not in flags:
            near = closest(key, list(flags))
            raise GlotbenchError(f"--set {key}: not a serve setting" + (f"; did you mean {', '.join(near)}?" if near else
                                                                          f" (known: {', '.join(flags)})"))
        kind = _KNOB_TYPES[key]
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or (kind is int and float(value) != int(value))):
            raise GlotbenchError(f"--set {key}={value}: {key} must be {'a whole number' if kind is int else 'a number'}")
        flags[key] = None if value is None else kind(value)
    if not 0 <= flags["score_digits"] <= 10:
        raise GlotbenchError(f"--set score_digits={flags['score_digits']}: must be between 0 and 10")
    return flags


def _proxies(values: list[str]) -> list[str]:
    """--trusted-proxy values (repeated or comma-separated); one that is no address or network is one line."""
    from glotbench.errors import GlotbenchError
    from glotbench.leaderboard.config import _networks

    out = [v.strip() for raw in values for v in raw.split(",") if v.strip()]
    for v in out:
        try:
            _networks((v,))
        except ValueError:
            raise GlotbenchError(f"--trusted-proxy {v[:60]!r}: not an IP address or network (e.g. 10.0.0.5 or 10.0.0.0/8)") from None
    return out


def _hide_password(url: str) -> str:
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - only for display
        return url


def _session(ctx: typer.Context, db: str | None):
    """A database session of an admin sub-command: its own --db, else the admin group's."""
    from glotbench.leaderboard.db import open_db

    return open_db(_db_url(db, ctx.meta.get(_META)))()


def _password(password: str | None, stdin: bool) -> tuple[str, bool]:
    """``(password, generated)``: from --password-stdin, --password/GLOTBENCH_PASSWORD, a prompt on a
    terminal, a line piped on stdin, or, with none of those (no TTY, nothing piped), a new random one."""
    import secrets

    if stdin or (not password and not sys.stdin.isatty() and not _stdin_empty()):
        line = sys.stdin.readline().rstrip("\r\n")
        if line:
            return line, False
        if stdin:
            raise typer.BadParameter("--password-stdin: stdin had no password line")
    if password:
        return password, False
    if sys.stdin.isatty():
        return typer.prompt("Password", hide_input=True, confirmation_prompt=True), False
    return secrets.token_urlsafe(18), True


def _stdin_empty() -> bool:
    """True when stdin is closed, /dev/null or has nothing to read right now (a script with no pipe)."""
    import select

    try:
        ready, _, _ = select.select([sys.stdin], [], [], 0.2)
    except (OSError, ValueError):
        return True
    if not ready:
        return True
    try:
        return not sys.stdin.buffer.peek(1)
    except (AttributeError, OSError, ValueError):
        return False


@admin_app.command("create-user")
@options()
def create_user(
    ctx: typer.Context,
    username: str = typer.Argument(..., help="The user name to log in with."),
    admin: bool = typer.Option(False, "--admin", help="Make the user an administrator (may approve results and add tasks)."),
    team: str = setting_option("", "--team", help="Team shown on the leaderboard."),
    password: str = setting_option(None, "--password", help="The password (default: $GLOTBENCH_PASSWORD, else asked "
                                   "for; --password-stdin reads it from stdin).", envvar="GLOTBENCH_PASSWORD"),
    password_stdin: bool = typer.Option(False, "--password-stdin", help="Read the password from the first line of stdin."),
    db: str = _DB,
) -> None:
    """Create a user account (an administrator with --admin)."""
    from glotbench.leaderboard import service

    pw, generated = _password(password, password_stdin)
    with _session(ctx, db) as s:
        user = service.create_user(s, username, pw, team, is_admin=admin)
    typer.echo(f"created {'administrator' if user.is_admin else 'user'} {user.username!r}")
    if generated:  # no terminal to ask on and no password given: print a generated one, once
        typer.echo(f"password: {pw}")


@admin_app.command("approve-user")
def approve_user(ctx: typer.Context, username: str, db: str = _DB) -> None:
    """Let an account made under --approve-accounts upload."""
    from glotbench.leaderboard import registration, service

    with _session(ctx, db) as s:
        held = registration.approve(s, service.get_user(s, username))
    typer.echo(f"{username!r} may upload" + ("" if held else " (it was not waiting for approval)"))


@admin_app.command("set-admin")
def set_admin(ctx: typer.Context, username: str, revoke: bool = typer.Option(False, "--revoke", help="Take the administrator role away."),
              db: str = _DB) -> None:
    """Give an existing user the administrator role (or take it away with --revoke)."""
    from glotbench.leaderboard import service

    with _session(ctx, db) as s:
        user = service.get_user(s, username)
        user.is_admin = not revoke
        s.commit()
    typer.echo(f"{username!r} is {'no longer ' if revoke else ''}an administrator")


@admin_app.command("create-token")
@options((Flags, "name"), about={"name": "a name to recognise the token by (default: cli)."})
def create_token(ctx: typer.Context, username: str, db: str = _DB, *, name: str = "cli") -> None:
    """Print a new REST API token for a user (shown once; keep it secret)."""
    from glotbench.leaderboard import service

    with _session(ctx, db) as s:
        typer.echo(service.create_token(s, service.get_user(s, username), name))


@admin_app.command("add-task")
@options((Flags, "metric!"), about={"metric": "a registered metric computable from a prediction and a reference: "
                                              "accuracy, mcc, weighted_f1, macro_f1 (labels), exact_match, "
                                              "numeric_match, abs_error, chrf, bleu... (text); a wrong name lists them."})
def add_task(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="Task name used in submissions, e.g. my_suite.sst."),
    gold: Path = typer.Option(..., "--gold", help="Gold file (hidden): JSON list or JSON Lines of records with an id and a label or reference field (a HuLU-style data file works as is)."),
    labels: Optional[str] = typer.Option(None, "--labels", help="The label set; the command's description says in which form (a file, a shipped name, or comma-separated labels) and its default."),
    title: str = typer.Option("", "--title", help="A longer title shown on the task page."),
    id_field: str = setting_option("id", "--id-field", help="Field holding the item id."),
    label_field: str = setting_option("label", "--label-field", help="Field holding the gold label or the reference text (e.g. label_field=reference)."),
    replace: bool = setting_option(False, "--replace", help="Replace the gold labels of an existing task (every stored submission is scored again)."),
    public_share: float = setting_option(None, "--public-share", help="Share (0-1) of test items a submitter sees the score on; the rest count only on the board."),
    train: Path = setting_option(None, "--train", help="Train file offered for download (with labels)."),
    dev: Path = setting_option(None, "--dev", help="Validation file offered for download (with labels)."),
    test: Path = setting_option(None, "--test", help="Test file offered for download; its label field is removed first."),
    description_en: Path = setting_option(None, "--description-en", help="Markdown file: the task page text in English."),
    description_hu: Path = setting_option(None, "--description-hu", help="Markdown file: the task page text in Hungarian."),
    db: str = _DB,
    *, metric: str,
) -> None:
    """Register a task with its hidden gold labels and its metric (and its downloads and page text).

    --labels: comma-separated (default: the labels found in the gold file)."""
    from glotbench.leaderboard import service

    gold_labels = service.load_gold_file(gold, id_field, label_field)
    label_set = [x.strip() for x in labels.split(",") if x.strip()] if labels else None
    with _session(ctx, db) as s:
        n_before = len(service.all_submissions(s)) if replace else 0
        task = service.add_task(s, name, gold_labels, metric, label_set, title, replace=replace, public_share=public_share)
        for split, path in (("train", train), ("dev", dev), ("test", test)):
            if path:
                service.add_task_file(s, task, split, path.name, _read(path), label_field)
        if description_en or description_hu:
            service.set_task_text(s, task, _read(description_en).decode() if description_en else task.description_en,
                                  _read(description_hu).decode() if description_hu else task.description_hu)
        answers = f"labels {', '.join(task.labels)}" if task.labels else "free-text predictions against hidden references"
        direction = "higher" if service.higher_is_better(task.metric) else "lower"
        typer.echo(f"task {task.name!r}: {task.n_items} items, metric {task.metric}, {answers}; {direction} is better")
        if replace and n_before:
            typer.echo("stored submissions of the task were scored again against the new gold labels")


def _read(path: Path) -> bytes:
    from glotbench.leaderboard.db import LeaderboardError

    try:
        return path.read_bytes()
    except OSError as err:
        raise LeaderboardError(f"{path}: cannot read ({err.strerror})") from None


@admin_app.command("list-tasks")
def list_tasks(ctx: typer.Context, db: str = _DB) -> None:
    """List the registered tasks."""
    from glotbench.leaderboard import service

    with _session(ctx, db) as s:
        for t in service.list_tasks(s):
            typer.echo(f"{t.name}\t{t.metric}\t{t.n_items} items\t" + (f"labels: {', '.join(t.labels)}" if t.labels else "free text"))


@admin_app.command("review")
def review(ctx: typer.Context, submission_id: int, status: str = typer.Argument(..., help="approved or rejected"),
           reviewer: Optional[str] = typer.Option(None, "--reviewer", help="The administrator doing it."),
           by: Optional[str] = typer.Option(None, "--by", hidden=True),  # the spelling before --reviewer (compare --by groups runs)
           db: str = _DB) -> None:
    """Approve or reject a result from the command line."""
    from glotbench.leaderboard import service

    who = reviewer or by
    if not who:
        raise typer.BadParameter("give --reviewer NAME: the administrator doing it")
    with _session(ctx, db) as s:
        sub = service.review(s, service.get_user(s, who), submission_id, status)
        typer.echo(f"submission {sub.id} ({sub.model_name} on {sub.task.name}) is now {sub.status}")
