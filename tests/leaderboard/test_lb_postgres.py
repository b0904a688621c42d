"""The core flow against a throwaway PostgreSQL server (Debian's binaries, loopback only, a temp
data directory), through psycopg 3. Skipped, with the reason, when that cannot be set up."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from lb_helpers import (
    ADMIN,
    api_token,
    approve,
    fake_predictions,
    hulu_gold,
    login,
    register,
    submission_json,
    upload,
)

pytestmark = pytest.mark.slow


def _pg_bin(name: str) -> str | None:
    for d in ("/usr/local/bin", "/usr/lib/postgresql/15/bin"):
        if os.access(f"{d}/{name}", os.X_OK):
            return f"{d}/{name}"
    return shutil.which(name)


@pytest.fixture(scope="module")
def pg_url():
    pytest.importorskip("psycopg", reason="psycopg (v3) is not installed: pip install 'psycopg[binary]'")
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("PostgreSQL binaries (initdb, pg_ctl) not found")
    prefix: list[str] = []
    if os.geteuid() == 0:  # initdb refuses to run as root: run the server as the 'postgres' (or 'nobody') user
        runuser = shutil.which("runuser")
        user = next((u for u in ("postgres", "nobody") if _has_user(u)), None)
        if not runuser or not user:
            pytest.skip("running as root and no runuser/'postgres' user to start PostgreSQL as")
        prefix = [runuser, "-u", user, "--"]
    tmp = Path(tempfile.mkdtemp(prefix="glotbench-pg-"))
    data, sock = tmp / "data", tmp / "sock"
    sock.mkdir()
    if prefix:
        os.chmod(tmp, 0o755)
        uid = pwd.getpwnam(prefix[2]).pw_uid
        for p in (tmp, sock):
            os.chown(p, uid, -1)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    try:
        subprocess.run(prefix + [initdb, "-D", str(data), "-U", "glotbench", "--auth=trust", "-E", "UTF8", "--no-locale"],
                       check=True, capture_output=True, timeout=120)
        opts = f"-h 127.0.0.1 -p {port} -k {sock} -c fsync=off"
        subprocess.run(prefix + [pg_ctl, "-D", str(data), "-o", opts, "-l", str(tmp / "pg.log"), "-w", "start"],
                       check=True, capture_output=True, timeout=120)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as err:
        out = getattr(err, "stderr", b"") or b""
        shutil.rmtree(tmp, ignore_errors=True)
        pytest.skip(f"cannot start a throwaway PostgreSQL server: {err} {out.decode(errors='replace')[:300]}")
    import psycopg

    url = f"postgresql+psycopg://glotbench@127.0.0.1:{port}/postgres"
    for _ in range(50):
        try:
            psycopg.connect(f"host=127.0.0.1 port={port} user=glotbench dbname=postgres").close()
            break
        except psycopg.OperationalError:
            time.sleep(0.1)
    yield url
    subprocess.run(prefix + [pg_ctl, "-D", str(data), "-m", "immediate", "stop"], capture_output=True, timeout=60)
    shutil.rmtree(tmp, ignore_errors=True)


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def test_core_flow_on_postgresql(pg_url):
    from fastapi.testclient import TestClient
    from sklearn.metrics import matthews_corrcoef

    from glotbench.leaderboard import service
    from glotbench.leaderboard.app import create_app
    from glotbench.leaderboard.db import open_db

    gold = hulu_gold("cola")
    with open_db(pg_url)() as db:
        assert db.bind.dialect.name == "postgresql"
        service.create_user(db, *ADMIN, is_admin=True)
        service.add_task(db, "hulu.cola", gold, "mcc")
    app = create_app(pg_url)
    preds = fake_predictions(gold, ["0", "1"])
    ids = sorted(gold)
    expected = matthews_corrcoef([gold[i] for i in ids], [preds[i] for i in ids])
    with TestClient(app) as alice, TestClient(app) as admin, TestClient(app) as anon:
        register(alice, "alice", team="ELTE")
        login(admin, *ADMIN)
        r = upload(alice, "hulu.cola", submission_json("hulu.cola", "pg-model", preds))
        assert r.status_code == 303, r.text
        sub_id = int(r.headers["location"].rsplit("/", 1)[1])
        token = api_token(alice)
        got = alice.get(f"/api/submissions/{sub_id}", headers={"Authorization": f"Bearer {token}"}).json()
        assert got["score"] == round(expected, 3) and got["status"] == "pending"
        assert "pg-model" not in anon.get("/tasks/hulu.cola").text
        approve(admin, sub_id)
        assert "pg-model" in anon.get("/tasks/hulu.cola").text
        assert anon.get("/api/leaderboard").json()["rows"][0]["model"] == "pg-model"
        assert upload(alice, "hulu.cola", b"[").status_code == 422
