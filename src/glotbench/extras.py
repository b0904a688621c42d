"""Optional parts of glotbench and the pip extra that installs each (pyproject.toml).

The default install runs every built-in evaluation but the Hub-format ones. Jobs beside evaluation need an extra:
``serve`` (the leaderboard: ``glotbench serve`` / ``glotbench admin``), ``plots`` (matplotlib:
``glotbench report`` and the factuality tasks' PNG plots), ``analysis`` (lingua language detection:
``glotbench analyze thinking``), ``hub`` (datasets, pyarrow, pandas: the tasks that read Hugging Face
Hub snapshots, Czech-Bench's). :func:`require` turns a missing package into one line naming the
extra (the CLI prints a :class:`~glotbench.errors.GlotbenchError` as ``error: ...``, exit 2)."""

from __future__ import annotations

import importlib.util

from glotbench.errors import GlotbenchError

# extra -> the modules it provides (each checked by import)
EXTRAS: dict[str, tuple[str, ...]] = {
    "serve": ("fastapi", "uvicorn", "sqlalchemy", "itsdangerous", "argon2", "markdown_it"),  # python-multipart: its import name changed
    "plots": ("matplotlib",),
    "analysis": ("lingua",),
    "bertscore": ("bert_score", "torch", "transformers"),
    "comet": ("comet",),  # unbabel-comet: the text_comet scorer (glotbench.scoring.comet)
    "embed": ("torch", "transformers"),  # build dedup --embed: a local encoder's embeddings
    "hub": ("datasets", "pandas"),  # the Hub-format tasks (glotbench.data.hub_folder.require_hub)
}


def missing(extra: str) -> str | None:
    """The first module of ``extra`` that is not installed, or None (found, not imported: asking
    is cheap even for torch)."""
    return next((mod for mod in EXTRAS[extra] if importlib.util.find_spec(mod) is None), None)


def available(extra: str) -> bool:
    return missing(extra) is None


def require(extra: str, what: str) -> None:
    """Raise one line naming the extra when a module of it is missing: ``what`` is the job."""
    mod = missing(extra)
    if mod is not None:
        raise GlotbenchError(f"{what} needs pip install 'glotbench[{extra}]' (no module {mod!r})")

