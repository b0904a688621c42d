"""Find out before a run whether this llama-cpp-python build can decode on this CPU.

A ``-march=native`` build on a CPU (or VM) that advertises AMX, or a wheel built on another CPU,
can die with SIGILL on a prompt of a few hundred tokens while a one-token prompt works
(docs/footguns.md "Illegal instruction from the embedded model"). So before the first in-process
load of a GGUF, a child process loads it and decodes :data:`PROBE_TOKENS` tokens in one batch; if it
dies by a signal, a second child tries with ``use_extra_bufts = false`` and the model loads that
way (said once), else :class:`~glotbench.errors.ModelError` names the cause and the rebuild command
before anything is sent. The verdict is cached per build, CPU flags and model file
(``$GLOTBENCH_PROBE_CACHE`` or ``~/.cache/glotbench/llamacpp-probe``); a child that fails for
another reason decides nothing and is not cached. ``-M extra_bufts=false|true`` skips the probe.
``GLOTBENCH_LLAMA_PROBE_FAULT`` is a test hook: ``sigill`` makes the default-setting child kill
itself with SIGILL after loading, ``sigill-all`` every child (tests/test_llamacpp_probe.py).

This file runs as the child script too (``python llamacpp_probe.py GGUF MODE N_GPU_LAYERS``), so its
top level imports nothing of glotbench.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import signal
import subprocess
import sys
import threading
from pathlib import Path

DEFAULT = "default"
SAFE = "no_extra_bufts"
PROBE_TOKENS = 320  # llama.cpp's AMX and repacked kernels take prompts of a couple of hundred tokens
PROBE_TIMEOUT_S = 600
REBUILD = ('CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install --force-reinstall --no-deps --no-cache-dir '
           'llama-cpp-python')
FAULT_ENV = "GLOTBENCH_LLAMA_PROBE_FAULT"

_params_lock = threading.Lock()


@contextlib.contextmanager
def model_params_without_extra_bufts():
    """While active, ``llama_cpp.Llama(...)`` loads with ``use_extra_bufts = false``.

    llama-cpp-python's ``Llama`` builds its ``llama_model_params`` from
    ``llama_cpp.llama_cpp.llama_model_default_params()`` and loads the model in ``__init__``,
    with no argument for this field, so the default-params function is wrapped for the duration."""
    from llama_cpp import llama_cpp as lib

    with _params_lock:
        original = lib.llama_model_default_params

        def params():
            p = original()
            p.use_extra_bufts = False
            return p

        lib.llama_model_default_params = params
        try:
            yield
        finally:
            lib.llama_model_default_params = original


def has_extra_bufts_setting() -> bool:
    from llama_cpp import llama_cpp as lib

    return any(name == "use_extra_bufts" for name, *_ in lib.llama_model_params._fields_)


# ---------------------------------------------------------------------------------------- parent


def cache_dir() -> Path:
    """``$GLOTBENCH_PROBE_CACHE``, else the user cache folder (``~/.cache/glotbench`` on Linux). Not
    ``$GLOTBENCH_CACHE_DIR``: the tests point that at a fresh folder each, and a verdict per build and
    CPU is worth keeping across them."""
    env = os.environ.get("GLOTBENCH_PROBE_CACHE")
    if env:
        return Path(env).expanduser()
    try:
        import platformdirs

        return Path(platformdirs.user_cache_dir("glotbench", appauthor=False)) / "llamacpp-probe"
    except ImportError:  # pragma: no cover - platformdirs is a dependency
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "glotbench" / "llamacpp-probe"


def _cpu_flags() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.startswith(("flags", "Features")):
                return line.split(":", 1)[-1].strip()
    except OSError:
        pass
    return platform.processor()


def build_files() -> list[Path]:
    """llama-cpp-python's shared libraries: what a rebuild changes."""
    import importlib.util

    spec = importlib.util.find_spec("llama_cpp")
    roots = list(spec.submodule_search_locations or []) if spec else []
    out: list[Path] = []
    for root in roots:
        for path in sorted(Path(root).rglob("*")):
            if path.is_file() and (".so" in path.name or path.suffix in (".dll", ".dylib")):
                out.append(path)
    return out


def probe_key(model_fingerprint: str, n_gpu_layers: int) -> str:
    h = hashlib.sha256()
    for path in build_files():
        st = path.stat()
        h.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    h.update(f"{platform.machine()}\0{_cpu_flags()}\0{model_fingerprint}\0{n_gpu_layers}".encode())
    return h.hexdigest()[:24]


def _read_cache(key: str) -> str | None:
    try:
        data = json.loads((cache_dir() / f"{key}.json").read_text())
    except (OSError, ValueError):
        return None
    return data.get("mode") if data.get("mode") in (DEFAULT, SAFE) else None


def _write_cache(key: str, mode: str, detail: str) -> None:
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{key}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps({"mode": mode, "detail": detail}))
        os.replace(tmp, folder / f"{key}.json")
    except OSError:
        pass  # an unwritable cache only costs a probe next time


def _signal_name(returncode: int) -> str | None:
    if returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def _run_child(path: Path, mode: str, n_gpu_layers: int) -> tuple[str, str]:
    """('ok' | 'signal' | 'error', detail) of one child decoding the probe prompt."""
    cmd = [sys.executable, str(Path(__file__).resolve()), str(path), mode, str(n_gpu_layers)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return "error", f"probe timed out after {PROBE_TIMEOUT_S} s"
    if proc.returncode == 0 and proc.stdout.strip().endswith("ok"):
        return "ok", ""
    sig = _signal_name(proc.returncode)
    if sig:
        return "signal", sig
    tail = " ".join((proc.stderr or proc.stdout).split())[-300:]
    return "error", f"exit {proc.returncode}: {tail}"


def choose_mode(path: Path, model_fingerprint: str, n_gpu_layers: int = 0) -> tuple[str, str | None]:
    """(mode to load with, a one-line notice or None). Raises ModelError when no setting works."""
    from glotbench.errors import ModelError

    key = probe_key(model_fingerprint, n_gpu_layers)
    cached = _read_cache(key)
    if cached == DEFAULT:
        return DEFAULT, None
    if cached == SAFE:
        return SAFE, _fallback_notice(None)
    outcome, detail = _run_child(path, DEFAULT, n_gpu_layers)
    if outcome == "ok":
        _write_cache(key, DEFAULT, "")
        return DEFAULT, None
    if outcome == "error":
        return DEFAULT, None  # not a CPU fault: the real load says what is wrong
    if has_extra_bufts_setting():
        safe, safe_detail = _run_child(path, SAFE, n_gpu_layers)
        if safe == "ok":
            _write_cache(key, SAFE, detail)
            return SAFE, _fallback_notice(detail)
        if safe == "error":
            detail += f"; without extra buffer types: {safe_detail}"
    import llama_cpp

    raise ModelError(
        f"llama-cpp-python {getattr(llama_cpp, '__version__', '?')} dies with {detail} decoding {path.name} on "
        f"this CPU (a probe in a child process; the build uses instructions this machine does not allow, "
        f"e.g. a -march=native wheel built elsewhere, or AMX in a VM that hides it); rebuild it portably: {REBUILD}")


def _fallback_notice(detail: str | None) -> str:
    why = f"a probe died with {detail}" if detail else "a cached probe died"
    return (f"llama.cpp's AMX / repacked-weight kernels crash on this CPU ({why}): loading without them "
            f"(-M extra_bufts=false); a portable build avoids this: {REBUILD}")


# ----------------------------------------------------------------------------------------- child


def _child(path: str, mode: str, n_gpu_layers: int) -> None:
    import llama_cpp

    fault = os.environ.get(FAULT_ENV, "")
    ctx = model_params_without_extra_bufts() if mode == SAFE else contextlib.nullcontext()
    threads = max(1, min(8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1))
    with ctx:
        llm = llama_cpp.Llama(model_path=path, n_ctx=PROBE_TOKENS + 64, n_batch=PROBE_TOKENS + 64,
                              n_ubatch=PROBE_TOKENS + 64, n_threads=threads, n_threads_batch=threads,
                              n_gpu_layers=n_gpu_layers, verbose=False)
    if fault == "sigill-all" or (fault == "sigill" and mode == DEFAULT):
        os.kill(os.getpid(), signal.SIGILL)
    words = llm.tokenize(" the quick brown fox jumps over the lazy dog".encode(), add_bos=False)
    tokens = (words * (PROBE_TOKENS // max(1, len(words)) + 1))[:PROBE_TOKENS]
    llm.eval(tokens)  # one batch of PROBE_TOKENS tokens
    llm.eval(tokens[:1])  # and one single-token step
    print("ok", flush=True)


if __name__ == "__main__":
    _child(sys.argv[1], sys.argv[2], int(sys.argv[3]))
