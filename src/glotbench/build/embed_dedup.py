"""Near-duplicates by embedding cosine similarity (OpenHuEval App. B.2): ``build dedup --embed DIR``.

The encoder is a local directory saved by transformers or sentence-transformers (``save_pretrained`` /
``save``), never downloaded. Texts are encoded with transformers (``AutoTokenizer`` + ``AutoModel``,
``local_files_only``), pooled as the directory's ``1_Pooling/config.json`` says (sentence-transformers'
CLS or mean; mean over the attention mask when there is none), and L2-normalised, so the cosine is a
dot product. Items are taken in file order: an item whose cosine with a kept item (or, with
``--against``, with any item of the other sets) is at least the threshold is dropped, naming the one
it duplicates. The paper states its threshold, 0.15-0.25 per tag, for "similarity less than the
threshold" removed: read as a cosine *distance*, which the default 0.85 (= 1 - 0.15) restates.
Needs torch and transformers (the ``embed`` extra); without them the step is refused in one line.
"""

from __future__ import annotations

import json
from pathlib import Path

from glotbench.errors import GlotbenchError

DEFAULT_THRESHOLD = 0.85
WHO = "build dedup --embed"


def encoder_dir(path: str | Path) -> Path:
    p = Path(path).expanduser()
    if not p.is_dir() or not (p / "config.json").is_file():
        raise GlotbenchError(f"{WHO}: {path}: not a local encoder directory (a folder saved by transformers or "
                             "sentence-transformers, with config.json); glotbench does not download one")
    from glotbench.extras import require

    require("embed", WHO)
    return p


def pooling(path: Path) -> str:
    """``cls`` or ``mean`` (sentence-transformers' pooling config, when the directory has one)."""
    cfg = path / "1_Pooling" / "config.json"
    if cfg.is_file():
        try:
            data = json.loads(cfg.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise GlotbenchError(f"{WHO}: {cfg}: not readable JSON") from None
        if data.get("pooling_mode_cls_token"):
            return "cls"
    return "mean"


def encode(texts: list[str], path: Path, batch_size: int = 32, max_length: int = 256):
    """L2-normalised embeddings (numpy, one row per text)."""
    import numpy as np
    import torch
    from transformers import AutoModel, AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        model = AutoModel.from_pretrained(str(path), local_files_only=True)
    except (OSError, ValueError) as err:
        raise GlotbenchError(f"{WHO}: {path}: cannot load the encoder: {str(err).splitlines()[0]}") from None
    model.eval()
    mode = pooling(path)
    out = []
    with torch.no_grad():
        for i in range(0, len(texts), batch_size):
            enc = tok(texts[i:i + batch_size], padding=True, truncation=True, max_length=max_length, return_tensors="pt")
            hidden = model(**enc).last_hidden_state
            if mode == "cls":
                vec = hidden[:, 0]
            else:
                mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                vec = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            out.append(torch.nn.functional.normalize(vec.float(), dim=-1).numpy())
    return np.concatenate(out) if out else np.zeros((0, 1), dtype="float32")


def embed_dedup(items: list[dict], vecs, threshold: float, others: list[tuple[str, list[dict], object]] = (),
                group_field: str | None = None):
    """``(kept, pairs)``: an item is dropped when its cosine with an item kept before it (of its own
    ``group_field`` value, when given: OpenHuEval dedups within each secondary tag), or with an item of
    ``others`` (``(file name, items, vectors)``), is at least ``threshold``. Each pair names the item,
    the one it duplicates (``other_file`` "(this set)" within the set) and the cosine (the best; the
    first of equal ones)."""
    import numpy as np

    kept_by_group: dict[str, list[int]] = {}
    kept, pairs = [], []
    for i, it in enumerate(items):
        best = None
        kept_idx = kept_by_group.setdefault(str(it.get(group_field)) if group_field else "", [])
        if kept_idx:
            sims = vecs[kept_idx] @ vecs[i]
            j = int(np.argmax(sims))
            if sims[j] >= threshold:
                best = (float(sims[j]), "(this set)", items[kept_idx[j]])
        for name, recs, ovecs in others:
            if len(recs):
                sims = ovecs @ vecs[i]
                j = int(np.argmax(sims))
                if sims[j] >= threshold and (best is None or sims[j] > best[0]):
                    best = (float(sims[j]), name, recs[j])
        if best is None:
            kept_idx.append(i)
            kept.append(it)
        else:
            pairs.append({"item": it, "similarity": round(best[0], 4), "other_file": best[1], "other": best[2]})
    return kept, pairs
