"""Start a real llama.cpp OpenAI-compatible server (llama-cpp-python's) for end-to-end tests.

Reusable: ``base_url, proc = start_llama_server(path)`` ... ``stop_llama_server(proc)``; the context
manager ``embedded_llama_server()`` for the embedded SmolLM2 model; or the module-scoped pytest
fixture ``llama_server`` (for a conftest.py: ``from conftest_llama_server import llama_server``).
The server answers one request at a time (see docs/footguns.md).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pytest

from glotbench.testing.servers import free_port, stop


def start_llama_server(model_path: str | os.PathLike, *, n_ctx: int = 2048, timeout: float = 90.0,
                       extra_args: tuple[str, ...] = ()) -> tuple[str, subprocess.Popen]:
    """Launch ``python -m llama_cpp.server`` on a free 127.0.0.1 port; return (base_url, process).

    Waits until ``GET /v1/models`` answers 200. Raises RuntimeError (with the server log's tail) if
    the server dies or does not answer within ``timeout`` seconds.
    """
    port = free_port()
    log = tempfile.NamedTemporaryFile("w+b", prefix="llama_server_", suffix=".log", delete=False)  # noqa: SIM115
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path), "--host", "127.0.0.1",
           "--port", str(port), "--n_ctx", str(n_ctx), *extra_args]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    proc.log_path = log.name  # type: ignore[attr-defined]
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"llama.cpp server exited with {proc.returncode}: {_tail(log.name)}")
        try:
            if httpx.get(f"{base_url}/models", timeout=2.0).status_code == 200:
                return base_url, proc
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    stop_llama_server(proc)
    raise RuntimeError(f"llama.cpp server on {base_url} did not answer /v1/models in {timeout:.0f}s: {_tail(log.name)}")


def stop_llama_server(proc: subprocess.Popen) -> None:
    stop(proc)
    log = getattr(proc, "log_path", None)
    if log:
        Path(log).unlink(missing_ok=True)


def _tail(path: str, n: int = 400) -> str:
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return "(no log)"
    return " ".join(text[-n:].split())


def server_available() -> str | None:
    """None if llama_cpp.server can run here, else the reason to skip."""
    for mod in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings"):
        if importlib.util.find_spec(mod) is None:
            return f"llama-cpp-python[server] not installed (missing {mod})"
    return None


@contextlib.contextmanager
def embedded_llama_server(**kw):
    """Context manager: (base_url, model_path) of a server running the embedded SmolLM2 GGUF.

    Calls pytest.skip when the server extra or the model file is missing.
    """
    from glotbench.errors import ModelError
    from glotbench.models.embedded import default_gguf_path

    reason = server_available()
    if reason:
        pytest.skip(reason)
    try:
        path = default_gguf_path()
    except ModelError as exc:
        pytest.skip(str(exc))
    base_url, proc = start_llama_server(path, **kw)
    try:
        yield base_url, path
    finally:
        stop_llama_server(proc)


@pytest.fixture(scope="module")
def llama_server():
    """Pytest fixture form of :func:`embedded_llama_server`."""
    with embedded_llama_server() as served:
        yield served
