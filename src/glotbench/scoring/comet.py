"""COMET (Rei et al., 2020) through unbabel-comet, with a checkpoint the user names, loaded offline.

The ``text_comet`` scorer writes what the ``text`` scorer writes plus ``comet`` per item: the COMET
segment score of the answer (``mt``) against its one reference (``ref``) given the item's source
sentence (``src``, the template variable ``scorer_options.comet_source``, default ``source``), as
``model.predict([{"src", "mt", "ref"}])`` gives it. The metric ``comet`` is their mean, which is
COMET's own ``system_score``. The checkpoint is ``scorer_options.comet_model`` or else the environment
variable ``GLOTBENCH_COMET_MODEL``: a ``model.ckpt`` file, a downloaded model's folder (holding
``checkpoints/model.ckpt``), or a model id already in the local Hugging Face cache
(``Unbabel/wmt22-comet-da``). glotbench never downloads it. Needs the ``comet`` extra (unbabel-comet,
which is not a default dependency: it brings pytorch-lightning). Without a checkpoint or the package, a
run is refused in one line before any request (:func:`_check_ready`).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from glotbench.errors import DataError, TaskSpecError
from glotbench.scoring.scorers import scorer
from glotbench.scoring.text_metrics import COMET_METRICS, TEXT_SCORER_METRICS, one_reference, text_values

ENV = "GLOTBENCH_COMET_MODEL"
_WHO = "scorer 'text_comet'"
CKPT = Path("checkpoints") / "model.ckpt"  # where a downloaded COMET model keeps its checkpoint


def resolve_checkpoint(name: str | None, where: str = "") -> str:
    """The local path of the checkpoint file; TaskSpecError (one line) when none is named or found."""
    who = f"{where}: {_WHO}" if where else _WHO
    name = name or os.environ.get(ENV) or ""
    if not name:
        raise TaskSpecError(f"{who}: name a local COMET checkpoint with scorer_options.comet_model or {ENV} (a "
                            "model.ckpt file, a downloaded model's folder, or a model id already in the local Hugging "
                            "Face cache such as Unbabel/wmt22-comet-da)")
    path = Path(name).expanduser()
    if path.is_file():
        return str(path)
    if path.is_dir():
        if (path / CKPT).is_file():
            return str(path / CKPT)
        raise TaskSpecError(f"{who}: checkpoint folder {name!r} holds no {CKPT.as_posix()}")
    try:
        from huggingface_hub import snapshot_download

        found = Path(snapshot_download(name, local_files_only=True)) / CKPT
    except Exception:  # noqa: BLE001  not cached (or not a hub id): never downloaded
        found = None
    if found is None or not found.is_file():
        raise TaskSpecError(f"{who}: checkpoint {name!r} is neither a local file or folder nor in the local Hugging "
                            "Face cache (glotbench does not download it)")
    return str(found)


@functools.lru_cache(maxsize=2)
def comet_model(path: str):
    """One loaded COMET model per checkpoint, kept for the process."""
    from comet import load_from_checkpoint

    return load_from_checkpoint(path)


def comet_score(source: str, hypothesis: str, reference: str, model: str | None = None, gpus: int = 0) -> float:
    """COMET's segment score of ``hypothesis`` (``mt``) against ``reference`` given ``source``."""
    path = resolve_checkpoint(model)
    from glotbench.extras import require

    require("comet", _WHO)
    out = comet_model(path).predict([{"src": source, "mt": hypothesis, "ref": reference}], batch_size=1,
                                    gpus=int(gpus), progress_bar=False)
    return float(out.scores[0])


@scorer(metrics=(*TEXT_SCORER_METRICS, *COMET_METRICS))  # registered as "text_comet" lazily (glotbench.builtins)
def text_comet(extracted, target, *, sample=None, pack=None, comet_model: str | None = None,
               comet_source: str = "source", comet_gpus: int = 0):
    """The ``text`` scorer's values plus COMET (an empty answer is scored as the empty string)."""
    if target is None:
        return (None if extracted is None else str(extracted)), {}
    where = f"{_WHO}, item {getattr(sample, 'id', '?')}"
    ref = one_reference(target, where)
    source = (getattr(sample, "vars", None) or {}).get(comet_source)
    if not isinstance(source, str):
        raise DataError(f"{where}: scorer_options.comet_source names {comet_source!r}, which is "
                        f"{'not a field of the item' if source is None else 'not a string'} (map the source sentence "
                        f"under fields: {comet_source}: ...)")
    pred = None if extracted is None else str(extracted)
    return pred, {**text_values(ref, pred or ""), "comet": comet_score(source, pred or "", ref, comet_model, comet_gpus)}


def _check_ready(where: str = "", comet_model: str | None = None, comet_source: str = "source",
                 comet_gpus: int = 0, task_fields: set[str] | None = None) -> None:
    """Before any request: the source field is one the task maps, the checkpoint is named and found, and
    the ``comet`` extra is installed."""
    from glotbench.extras import require

    if task_fields is not None and comet_source not in task_fields:
        who = f"{where}: {_WHO}" if where else _WHO
        raise TaskSpecError(f"{who}: comet_source {comet_source!r} is not a field the task maps (fields: "
                            f"{', '.join(sorted(task_fields)) or 'none'}); map the source sentence, e.g. "
                            f"fields: {{{comet_source}: en}}")
    resolve_checkpoint(comet_model, where)
    require("comet", f"{where}: {_WHO}" if where else _WHO)


def _run_summary(comet_model: str | None = None, comet_source: str = "source", comet_gpus: int = 0) -> dict:
    """What results.json keeps of the checkpoint a run used: the name given and its local path."""
    return {"comet": {"checkpoint": comet_model or os.environ.get(ENV), "path": resolve_checkpoint(comet_model),
                      "source_field": comet_source}}


text_comet.check_ready = _check_ready  # type: ignore[attr-defined]  called by Task.check_ready
text_comet.run_summary = _run_summary  # type: ignore[attr-defined]  called by Task.extra_summary
