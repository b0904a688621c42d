"""A real ``glotbench serve`` in a subprocess on a free loopback port, over a SQLite file (or a
PostgreSQL URL) the test prepares first; plus small raw-HTTP helpers for attack tests."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    base: str
    port: int
    proc: subprocess.Popen
    log: Path
    db_url: str = ""

    def stop(self, timeout: float = 15) -> float:
        """SIGTERM and wait; returns the seconds it took to exit."""
        t0 = time.monotonic()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
                raise
        return time.monotonic() - t0


def start_server(db_url: str, tmp: Path, *args: str) -> Server:
    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    log = tmp / f"server-{port}.log"
    proc = subprocess.Popen([sys.executable, "-m", "glotbench", "serve", "--host", "127.0.0.1", "--port", str(port),
                             "--db", db_url, *args], env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            urllib.request.urlopen(base + "/api/tasks", timeout=2)
            return Server(base, port, proc, log, db_url)
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited: {log.read_text()}")
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"server did not start: {log.read_text()}")


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **kw):
        return None


_opener = urllib.request.build_opener(NoRedirect)


def http(method: str, url: str, body: bytes | None = None, headers: dict | None = None, timeout: float = 30):
    """``(status, body bytes, headers)``, redirects not followed; HTTP errors are returned, not raised."""
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with _opener.open(req, timeout=timeout) as r:
            return r.status, r.read(), dict(r.headers)
    except urllib.error.HTTPError as err:
        return err.code, err.read(), dict(err.headers)


def api_json(method: str, url: str, token: str, doc=None, raw: bytes | None = None, headers: dict | None = None):
    body = raw if raw is not None else (json.dumps(doc).encode() if doc is not None else None)
    hdr = {"Authorization": f"Bearer {token}", "Content-Type": "application/json", **(headers or {})}
    return http(method, url, body, hdr)


def half_sent(port: int, path: str, headers: dict, declared: int = 5000, sent: int = 1000) -> socket.socket:
    """A socket that sent the headers and ``sent`` of ``declared`` body bytes, and is kept open."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", f"Content-Length: {declared}"] + [f"{k}: {v}" for k, v in headers.items()]
    s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + b"[" * sent)
    return s
