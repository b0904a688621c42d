"""Helpers for the leaderboard tests (imported by the test modules and conftest)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ADMIN = ("admin", "admin-pass-123")
META = {"model_size": "135M", "paper_url": "https://example.org/paper", "description": "a test model"}
CSRF_RE = re.compile(r'name="csrf_token" value="([^"]+)"')
HULU = {
    "cola": ("HuCOLA/cola_dev.json", "mcc"),
    "sst": ("HuSST/sst_dev.json", "accuracy"),
    "cb": ("HuCommitmentBank/hucb_dev.json", "weighted_f1"),
}


def hulu_path(key: str) -> Path:
    from glotbench.paths import resolve_data_file

    rel = "hulu/" + HULU[key][0]
    path = resolve_data_file(rel)
    if not path.is_file():
        pytest.skip(f"HuLU data file {rel} not found under the shared data root (set GLOTBENCH_DATA)")
    return path


def hulu_gold(key: str) -> dict[str, str]:
    records = json.loads(hulu_path(key).read_text(encoding="utf-8-sig"))
    return {r["id"]: r["label"] for r in records}


def fake_predictions(gold: dict[str, str], labels: list[str]) -> dict[str, str]:
    """Deterministic, imperfect predictions: right on two items in three, the next label otherwise."""
    labels = sorted(labels)
    out = {}
    for n, (item_id, g) in enumerate(sorted(gold.items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else kv[0])):
        out[item_id] = g if n % 3 else labels[(labels.index(g) + 1) % len(labels)]
    return out


def submission_json(task: str, model: str, preds: dict[str, str], meta: bool = True) -> str:
    """A submission document; with ``meta`` it carries the required model metadata too."""
    return json.dumps({"task": task, "model": model, **(META if meta else {}),
                       "predictions": [{"id": i, "label": l} for i, l in preds.items()]})


def csrf_of(html: str) -> str:
    m = CSRF_RE.search(html)
    assert m, "page has no CSRF token"
    return m.group(1)


def register(client, username: str, password: str = "correct-horse", team: str = "") -> None:
    token = csrf_of(client.get("/register").text)
    r = client.post("/register", data={"csrf_token": token, "username": username, "password": password,
                                       "password2": password, "team": team}, follow_redirects=False)
    assert r.status_code == 303, r.text


def login(client, username: str, password: str) -> None:
    token = csrf_of(client.get("/login").text)
    r = client.post("/login", data={"csrf_token": token, "username": username, "password": password}, follow_redirects=False)
    assert r.status_code == 303, r.text


def upload(client, task: str, content: str | bytes, model: str = "", meta: dict | None = None):
    token = csrf_of(client.get("/submit").text)
    return client.post("/submit", data={"csrf_token": token, "task": task, "model": model, **(META if meta is None else meta)},
                       files={"file": ("predictions.json", content, "application/json")}, follow_redirects=False)


def approve(client, sub_id: int, status: str = "approved"):
    token = csrf_of(client.get("/admin").text)
    return client.post(f"/admin/submissions/{sub_id}", data={"csrf_token": token, "status": status}, follow_redirects=False)


def api_token(client) -> str:
    token = csrf_of(client.get("/account").text)
    r = client.post("/account/tokens", data={"csrf_token": token, "name": "ci"})
    m = re.search(r'id="new-token">([^<]+)<', r.text)
    assert m, r.text
    return m.group(1)
