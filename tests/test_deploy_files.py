"""The leaderboard's container recipe (deploy/Dockerfile, deploy/compose.yaml, docs/leaderboard.md).

This machine has the docker CLI but no daemon, so the image is not built here: these tests read the
files and check that everything they name exists: the paths the Dockerfile copies (and that its
.dockerignore lets through), the pip extras it installs, the entry point, the command and every option
the container runs ``glotbench`` with, the environment variables ``serve`` reads, and a database URL that
points at the compose file's own PostgreSQL service. ``test_image_builds_and_runs`` builds and runs the
image where a Docker daemon answers (skipped otherwise)."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
DEPLOY = REPO / "deploy"


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of deploy/Dockerfile, continuation lines joined, comments dropped."""
    out, pending = [], ""
    for line in (DEPLOY / "Dockerfile").read_text(encoding="utf-8").splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        pending += line.rstrip().removesuffix("\\") + " " if line.rstrip().endswith("\\") else line
        if not line.rstrip().endswith("\\"):
            word, _, rest = pending.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
            pending = ""
    return out


def exec_form(args: str) -> list[str]:
    import json

    value = json.loads(args)
    assert isinstance(value, list) and all(isinstance(x, str) for x in value), args
    return value


def compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))


def serve_command():
    """The click command of ``glotbench serve`` (its options and the environment variables they read)."""
    import typer

    from glotbench.cli import _load, app

    _load("serve")
    return typer.main.get_group(app).commands["serve"]


def check_glotbench_args(args: list[str]) -> None:
    from glotbench.cli import COMMANDS

    assert args[0] in COMMANDS, args
    cmd = serve_command() if args[0] == "serve" else None
    assert cmd is not None, f"only serve is run by the container, not {args[0]}"
    known = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
    for a in args[1:]:
        if a.startswith("--"):
            assert a.split("=")[0] in known, f"{a} is not an option of glotbench serve"


def test_dockerfile_copies_existing_paths_and_installs_existing_extras():
    steps = dockerfile()
    assert steps[0][0] == "FROM"
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text(encoding="utf-8").splitlines()
    let_through = {x[1:] for x in ignore if x.startswith("!")}
    copied = []
    for word, args in steps:
        if word == "COPY":
            *sources, _dest = shlex.split(args)
            copied += sources
    assert copied
    for src in copied:
        assert (REPO / src).exists(), f"COPY {src}: not in the repository root (the build context)"
        assert src in let_through, f"COPY {src}: deploy/Dockerfile.dockerignore keeps it out of the context"
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["readme"] in copied  # setuptools reads it while installing
    run = " ".join(a for w, a in steps if w == "RUN")
    extras = run.split('pip install ".[', 1)[1].split("]", 1)[0].split(",")
    assert set(extras) <= set(project["optional-dependencies"]) and {"serve", "postgres"} <= set(extras)
    entry = exec_form(next(a for w, a in steps if w == "ENTRYPOINT"))
    assert entry == ["glotbench"] and "glotbench" in project["scripts"]
    cmd = exec_form(next(a for w, a in steps if w == "CMD"))
    check_glotbench_args(cmd)
    port = next(a for w, a in steps if w == "EXPOSE")
    assert cmd[cmd.index("--port") + 1] == port and cmd[cmd.index("--host") + 1] == "0.0.0.0"


def test_compose_runs_the_image_against_its_own_postgresql():
    from sqlalchemy.engine import make_url

    c = compose()
    db, lb = c["services"]["db"], c["services"]["leaderboard"]
    build = lb["build"]
    assert (DEPLOY / build["context"]).resolve() == REPO and (REPO / build["dockerfile"]) == DEPLOY / "Dockerfile"
    assert lb["depends_on"]["db"]["condition"] == "service_healthy" and "pg_isready" in " ".join(db["healthcheck"]["test"])
    check_glotbench_args(lb["command"])
    env = lb["environment"]
    serve = serve_command()
    envvars = {p.name: p.envvar for p in serve.params}
    assert envvars["db"] in env and envvars["secret_key"] in env  # the variables serve reads
    url = make_url(env[envvars["db"]].replace("${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}", "pw"))
    assert url.drivername == "postgresql+psycopg"  # the postgres extra's driver
    assert url.host == "db" and url.host in c["services"]
    assert url.username == db["environment"]["POSTGRES_USER"] and url.database == db["environment"]["POSTGRES_DB"]
    host_port = lb["ports"][0].rsplit(":", 1)[1]
    assert host_port == lb["command"][lb["command"].index("--port") + 1]
    assert lb["ports"][0].startswith("127.0.0.1:")  # not on every interface of the host by default
    assert set(c["volumes"]) == {v.split(":")[0] for v in db["volumes"]}


def test_the_docs_name_the_files():
    text = (REPO / "docs" / "leaderboard.md").read_text(encoding="utf-8")
    assert "deploy/compose.yaml" in text and "deploy/Dockerfile" in text


def _daemon() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.mark.slow
@pytest.mark.skipif(not _daemon(), reason="no Docker daemon answers on this machine (the CLI alone cannot build)")
def test_image_builds_and_runs():
    tag = "glotbench-leaderboard:test"
    done = subprocess.run(["docker", "build", "-f", str(DEPLOY / "Dockerfile"), "-t", tag, str(REPO)],
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    ran = subprocess.run(["docker", "run", "--rm", tag, "serve", "--help"], capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0 and "--db" in ran.stdout, ran.stderr[-2000:]
