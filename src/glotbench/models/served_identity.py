"""What an OpenAI-compatible server says it serves: the identity the shared response cache keys on.

A name and a URL do not say which model answered (issue 48), so before a run the server is asked
with short GETs (``/v1/models``, llama.cpp's ``/props``, Ollama's ``/api/tags``); what each gives is
in docs/cache.md "Which model answered". Nothing answering is None: the server cannot say (the cache
then needs ``--cache-trust-name``). Each GET is bounded by :data:`TIMEOUT_S` and reads at most
:data:`MAX_BYTES`.
"""

from __future__ import annotations

import hashlib
import json
import os
import urllib.request
from pathlib import Path

TIMEOUT_S = 3.0
MAX_BYTES = 4 << 20
MODEL_FIELDS = ("id", "owned_by", "root", "parent", "max_model_len", "meta")
EDGE_BYTES = 1 << 20


_OPENER: urllib.request.OpenerDirector | None = None


def _opener() -> urllib.request.OpenerDirector:
    """One opener for every GET (building one is ~0.1 ms of CPU: three per run before)."""
    global _OPENER
    if _OPENER is None:
        _OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # as aiohttp: no proxy from the environment
    return _OPENER


def _get_json(url: str, headers: dict) -> object | None:
    try:
        with _opener().open(urllib.request.Request(url, headers=headers), timeout=TIMEOUT_S) as resp:
            if resp.status != 200:
                return None
            return json.loads(resp.read(MAX_BYTES + 1)[:MAX_BYTES])
    except Exception:  # noqa: BLE001 - any failure means the server does not say
        return None


def _root(base_url: str) -> str:
    base = base_url.rstrip("/")
    return base[: -len("/v1")] if base.endswith("/v1") else base


def _models(base_url: str, name: str, headers: dict) -> list[dict] | None:
    data = _get_json(base_url.rstrip("/") + "/models", headers)
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    entries = [e for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str)]
    mine = [e for e in entries if e["id"] == name]
    chosen = mine or sorted(entries, key=lambda e: e["id"])[:20]
    return [{k: e[k] for k in MODEL_FIELDS if k in e} for e in chosen] or None


def file_identity(path: str) -> dict | None:
    """Size, mtime and the SHA-256 of the first and last MiB of a model file on this machine."""
    try:
        p = Path(path)
        st = p.stat()
        if not p.is_file():
            return None
        h = hashlib.sha256()
        with p.open("rb") as fh:
            h.update(fh.read(EDGE_BYTES))
            if st.st_size > EDGE_BYTES:
                fh.seek(max(EDGE_BYTES, st.st_size - EDGE_BYTES))
                h.update(fh.read(EDGE_BYTES))
        return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "edges_sha256": h.hexdigest()}
    except OSError:
        return None


def _props(root: str, headers: dict) -> dict | None:
    data = _get_json(root + "/props", headers)
    if not isinstance(data, dict) or not isinstance(data.get("model_path"), str):
        return None
    out: dict = {"model_path": data["model_path"]}
    if isinstance(data.get("chat_template"), str):
        out["chat_template_sha256"] = hashlib.sha256(data["chat_template"].encode()).hexdigest()[:16]
    if os.path.isabs(data["model_path"]):
        local = file_identity(data["model_path"])
        if local:
            out["file"] = local
    return out


def _ollama_digest(root: str, name: str, headers: dict) -> str | None:
    data = _get_json(root + "/api/tags", headers)
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, list):
        return None
    names = {name, name + ":latest"}
    for m in models:
        if isinstance(m, dict) and (m.get("name") in names or m.get("model") in names) and isinstance(m.get("digest"), str):
            return m["digest"]
    return None


def probe(base_url: str, name: str, headers: dict | None = None) -> dict | None:
    """The served identity at ``base_url`` for model ``name``, or None when the server says nothing."""
    headers = {k: v for k, v in (headers or {}).items() if k.lower() == "authorization"}
    root = _root(base_url)
    out: dict = {}
    models = _models(base_url, name, headers)
    if models:
        out["models"] = models
    props = _props(root, headers)
    if props:
        out["props"] = props
    digest = _ollama_digest(root, name, headers)
    if digest:
        out["ollama_digest"] = digest
    return out or None
