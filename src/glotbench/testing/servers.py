"""Start local servers in subprocesses for tests and benchmarks (loopback only)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, proc: subprocess.Popen | None = None, timeout: float = 120.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server for {url} exited with code {proc.returncode}")
        try:
            if httpx.get(url, timeout=1.0).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise TimeoutError(f"server at {url} did not answer within {timeout:.0f}s")


def start_stub(*args: str, port: int | None = None) -> tuple[str, subprocess.Popen]:
    """Start glotbench.testing.stub_openai; return (base_url ending in /v1, process)."""
    port = port or free_port()
    proc = subprocess.Popen([sys.executable, "-m", "glotbench.testing.stub_openai", "--port", str(port), *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=os.environ.copy())
    base = f"http://127.0.0.1:{port}/v1"
    wait_http(base + "/models", proc, timeout=30)
    return base, proc


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
