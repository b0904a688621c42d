"""Scores from the server match scikit-learn on the real HuLU dev sets (through the REST API)."""

from __future__ import annotations

import pytest
from lb_helpers import (
    ADMIN,
    HULU,
    api_token,
    fake_predictions,
    hulu_gold,
    login,
    submission_json,
)
from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef

REFERENCE = {
    "mcc": matthews_corrcoef,
    "accuracy": accuracy_score,
    "weighted_f1": lambda g, p: f1_score(g, p, average="weighted"),
}


@pytest.mark.parametrize("key", ["cola", "sst", "cb"])
def test_score_matches_sklearn_on_hulu_dev(key, sessions, client_factory):
    from glotbench.leaderboard import service

    rel, metric = HULU[key]
    gold = hulu_gold(key)
    with sessions() as db:
        task = service.add_task(db, f"hulu.{key}", gold, metric)
        labels = task.labels
    preds = fake_predictions(gold, labels)
    ids = sorted(gold)
    expected = REFERENCE[metric]([gold[i] for i in ids], [preds[i] for i in ids])
    assert 0.05 < expected < 0.95  # a real, non-trivial value

    client = client_factory()


    login(client, *ADMIN)
    token = api_token(client)
    api = client_factory()
    r = api.post("/api/submissions", content=submission_json(f"hulu.{key}", "fake-model", preds),
                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["metric"] == metric and body["n_items"] == len(gold)
    assert body["score"] == round(expected, 3)  # shown rounded (--score-digits 3) ...
    from glotbench.leaderboard.schema import Submission

    with sessions() as db:  # ... and stored exactly
        assert db.get(Submission, body["id"]).score == pytest.approx(expected, abs=1e-12)
