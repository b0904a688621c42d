"""``glotbench serve`` (the leaderboard web service) and ``glotbench admin ...`` (its accounts and tasks)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from glotbench.cli import app

DB_HELP = "Database URL: sqlite:///path.db (default sqlite:///glotbench-leaderboard.db) or postgresql+psycopg://user:pw@host/db."
DB_ENV = "GLOTBENCH_DB"

admin_app = typer.Typer(help="Manage the leaderboard: users, API tokens and tasks.", no_args_is_help=True)
app.add_typer(admin_app, name="admin")


def _db_url(db: str | None) -> str:
    from glotbench.leaderboard.db import DEFAULT_DB_URL

    return db or os.environ.get(DB_ENV) or DEFAULT_DB_URL


@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", help="Address to listen on."),
    port: int = typer.Option(8000, help="Port to listen on."),
    db: str = typer.Option(None, "--db", help=DB_HELP, envvar=DB_ENV),
    max_upload_mb: float = typer.Option(5.0, help="Largest predictions file accepted, in MiB."),
    secret_key: str = typer.Option(None, envvar="GLOTBENCH_SECRET_KEY",
                                   help="Key that signs session cookies (default: one generated once and kept in the database)."),
    https_only: bool = typer.Option(False, help="Send the session cookie only over HTTPS (set this behind a TLS proxy)."),
) -> None:
    """Start the leaderboard web service (pages and REST API)."""
    import uvicorn

    from glotbench.leaderboard.app import create_app

    url = _db_url(db)
    web = create_app(url, secret_key=secret_key, max_upload_bytes=int(max_upload_mb * 1024 * 1024), https_only=https_only)
    typer.echo(f"glotbench leaderboard on http://{host}:{port}/ (database {_hide_password(url)})")
    uvicorn.run(web, host=host, port=port, log_level="info", proxy_headers=True)


def _hide_password(url: str) -> str:
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - only for display
        return url


def _session(db: str | None):
    from glotbench.leaderboard.db import open_db

    return open_db(_db_url(db))()


def _password(password: str | None, stdin: bool) -> str:
    if stdin:
        return sys.stdin.readline().rstrip("\n")
    if password:
        return password
    return typer.prompt("Password", hide_input=True, confirmation_prompt=True)


@admin_app.command("create-user")
def create_user(
    username: str = typer.Argument(..., help="The user name to log in with."),
    admin: bool = typer.Option(False, "--admin", help="Make the user an administrator (may approve results and add tasks)."),
    team: str = typer.Option("", help="Team shown on the leaderboard."),
    password: str = typer.Option(None, envvar="GLOTBENCH_PASSWORD", help="The password (default: asked for)."),
    password_stdin: bool = typer.Option(False, "--password-stdin", help="Read the password from the first line of stdin."),
    db: str = typer.Option(None, "--db", help=DB_HELP, envvar=DB_ENV),
) -> None:
    """Create a user account (an administrator with --admin)."""
    from glotbench.leaderboard import service

    with _session(db) as s:
        user = service.create_user(s, username, _password(password, password_stdin), team, is_admin=admin)
    typer.echo(f"created {'administrator' if user.is_admin else 'user'} {user.username!r}")


@admin_app.command("set-admin")
def set_admin(username: str, revoke: bool = typer.Option(False, "--revoke", help="Take the administrator role away."),
              db: str = typer.Option(None, "--db", help=DB_HELP, envvar=DB_ENV)) -> None:
    """Give an existing user the administrator role (or take it away with --revoke)."""
    from glotbench.leaderboard import service

    with _session(db) as s:
        user = service.get_user(s, username)
        user.is_admin = not revoke
        s.commit()
    typer.echo(f"{username!r} is {'no longer ' if revoke else ''}an administrator")


@admin_app.command("create-token")
def create_token(username: str, name: str = typer.Option("cli", help="A name to recognise the token by."),
                 db: str = typer.Option(None, "--db", help=DB_HELP, envvar=DB_ENV)) -> None:
    """Print a new REST API token for a user (shown once; keep it secret)."""
    from glotbench.leaderboard import service

    with _session(db) as s:
        typer.echo(service.create_token(s, service.get_user(s, username), name))


@admin_app.command("add-task")
def add_task(
    name: str = typer.Argument(..., help="Task name used in submissions, e.g. hulu.cola."),
    gold: Path = typer.Option(..., "--gold", help="Gold file: JSON list of records with an id and a label field (a HuLU data file works as is)."),
    metric: str = typer.Option(..., "--metric", help="accuracy, mcc, weighted_f1 or macro_f1."),
    labels: str = typer.Option(None, "--labels", help="Comma-separated label set (default: the labels found in the gold file)."),
    title: str = typer.Option("", "--title", help="A longer title shown on the task page."),
    id_field: str = typer.Option("id", "--id-field", help="Field holding the item id."),
    label_field: str = typer.Option("label", "--label-field", help="Field holding the gold label."),
    replace: bool = typer.Option(False, "--replace", help="Replace the gold labels of an existing task."),
    db: str = typer.Option(None, "--db", help=DB_HELP, envvar=DB_ENV),
) -> None:
    """Register a task with its hidden gold labels and its metric."""
    from glotbench.leaderboard import service

    gold_labels = service.load_gold_file(gold, id_field, label_field)
    label_set = [x.strip() for x in labels.split(",") if x.strip()] if labels else None
    with _session(db) as s:
        task = service.add_task(s, name, gold_labels, metric, label_set, title, replace=replace)
    typer.echo(f"task {task.name!r}: {task.n_items} items, metric {task.metric}, labels {', '.join(task.labels)}")


@admin_app.command("list-tasks")
def list_tasks(db: str = typer.Option(None, "--db", help=DB_HELP, envvar=DB_ENV)) -> None:
    """List the registered tasks."""
    from glotbench.leaderboard import service

    with _session(db) as s:
        for t in service.list_tasks(s):
            typer.echo(f"{t.name}\t{t.metric}\t{t.n_items} items\tlabels: {', '.join(t.labels)}")


@admin_app.command("review")
def review(submission_id: int, status: str = typer.Argument(..., help="approved or rejected"),
           by: str = typer.Option(..., "--by", help="The administrator doing it."),
           db: str = typer.Option(None, "--db", help=DB_HELP, envvar=DB_ENV)) -> None:
    """Approve or reject a result from the command line."""
    from glotbench.leaderboard import service

    with _session(db) as s:
        sub = service.review(s, service.get_user(s, by), submission_id, status)
        typer.echo(f"submission {sub.id} ({sub.model_name} on {sub.task.name}) is now {sub.status}")
