"""BERTScore (Zhang et al., 2020) through bert-score, with an encoder the user names, loaded offline.

The ``text_bertscore`` scorer writes what the ``text`` scorer writes plus ``bertscore_precision``,
``bertscore_recall`` and ``bertscore_f1`` per item (bert-score's ``BERTScorer.score`` of the answer
against its one reference; no idf weighting, no baseline rescaling). The encoder is
``scorer_options.bertscore_model`` or else the environment variable ``GLOTBENCH_BERTSCORE_MODEL``:
a directory saved by transformers (``save_pretrained``), or a model id already in the local Hugging
Face cache. glotbench never downloads it. The layer is ``bertscore_num_layers``, else bert-score's
tuned layer for a model it knows by that name (``xlm-roberta-large``: 17), else the encoder's last.
Needs the ``bertscore`` extra (bert-score, torch, transformers).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from glotbench.errors import TaskSpecError
from glotbench.scoring.scorers import scorer
from glotbench.scoring.text_metrics import BERTSCORE_METRICS, TEXT_SCORER_METRICS, one_reference, text_values

ENV = "GLOTBENCH_BERTSCORE_MODEL"
_WHO = "scorer 'text_bertscore'"


def resolve_encoder(name: str | None, where: str = "") -> tuple[str, str]:
    """``(local path, name as given)`` of the encoder; TaskSpecError (one line) when none is named or found."""
    who = f"{where}: {_WHO}" if where else _WHO
    name = name or os.environ.get(ENV) or ""
    if not name:
        raise TaskSpecError(f"{who}: name a local encoder with scorer_options.bertscore_model or {ENV} "
                            "(a directory saved by transformers, or a model id already in the local Hugging Face cache)")
    path = Path(name).expanduser()
    if path.is_dir():
        return str(path), name
    try:
        from huggingface_hub import snapshot_download

        return snapshot_download(name, local_files_only=True), name
    except Exception:  # noqa: BLE001  not cached (or not a hub id): never downloaded
        raise TaskSpecError(f"{who}: encoder {name!r} is neither a local directory nor in the local Hugging Face cache "
                            "(glotbench does not download it)") from None


def default_layers(path: str, name: str) -> int:
    """bert-score's tuned layer for a model it knows by ``name`` (or the directory's name), else the last layer."""
    from bert_score.utils import model2layers

    for key in (name, Path(name).name):
        if key in model2layers:
            return int(model2layers[key])
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(path, local_files_only=True)
    return int(getattr(config, "num_hidden_layers", None) or config.get_text_config().num_hidden_layers)


@functools.lru_cache(maxsize=2)
def bert_scorer(path: str, num_layers: int):
    """One loaded bert-score ``BERTScorer`` per encoder and layer, kept for the process."""
    from bert_score import BERTScorer

    return BERTScorer(model_type=path, num_layers=num_layers)


def bertscore_values(reference: str, prediction: str, model: str | None = None, num_layers: int | None = None) -> dict[str, float]:
    """bert-score's P/R/F1 of ``prediction`` against ``reference``. An empty (or blank) text scores 0,
    bert-score's own rule ("empty candidate/reference sentence detected; setting raw BERTScores to 0"),
    applied here because bert-score 0.3.12 cannot encode an empty text under transformers 5."""
    path, name = resolve_encoder(model)
    from glotbench.extras import require

    require("bertscore", _WHO)
    if not prediction.strip() or not reference.strip():
        return {"bertscore_precision": 0.0, "bertscore_recall": 0.0, "bertscore_f1": 0.0}
    layers = int(num_layers) if num_layers is not None else default_layers(path, name)
    p, r, f = bert_scorer(path, layers).score([prediction], [reference])
    return {"bertscore_precision": float(p[0]), "bertscore_recall": float(r[0]), "bertscore_f1": float(f[0])}


@scorer(metrics=(*TEXT_SCORER_METRICS, *BERTSCORE_METRICS))  # registered as "text_bertscore" lazily (glotbench.builtins)
def text_bertscore(extracted, target, *, sample=None, pack=None, bertscore_model: str | None = None,
                   bertscore_num_layers: int | None = None):
    """The ``text`` scorer's values plus BERTScore P/R/F1 (an empty answer is scored as the empty string)."""
    if target is None:
        return (None if extracted is None else str(extracted)), {}
    ref = one_reference(target, f"{_WHO}, item {getattr(sample, 'id', '?')}")
    pred = None if extracted is None else str(extracted)
    return pred, {**text_values(ref, pred or ""), **bertscore_values(ref, pred or "", bertscore_model, bertscore_num_layers)}


def _check_ready(where: str = "", bertscore_model: str | None = None, bertscore_num_layers: int | None = None) -> None:
    """Before any request: the encoder is named and found, and the ``bertscore`` extra is installed."""
    from glotbench.extras import require

    resolve_encoder(bertscore_model, where)
    require("bertscore", f"{where}: {_WHO}" if where else _WHO)


def _run_summary(bertscore_model: str | None = None, bertscore_num_layers: int | None = None) -> dict:
    """What results.json keeps of the encoder a run used: its name, local path, layer and
    bert-score's own settings string (its ``hash``: model, layer, idf, versions)."""
    from bert_score.utils import get_hash

    path, name = resolve_encoder(bertscore_model)
    layers = int(bertscore_num_layers) if bertscore_num_layers is not None else default_layers(path, name)
    return {"bertscore": {"encoder": name, "path": path, "num_layers": layers,
                          "signature": get_hash(name, layers, False, False, False, False)}}


text_bertscore.check_ready = _check_ready  # type: ignore[attr-defined]  called by Task.check_ready
text_bertscore.run_summary = _run_summary  # type: ignore[attr-defined]  called by Task.extra_summary
