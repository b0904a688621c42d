"""Site pieces in-process: parsing limits, name checks, the public/private split, task text
(Markdown without raw HTML), downloads without test labels, the grid's row average."""

from __future__ import annotations

import json
import time

import pytest
from lb_helpers import ADMIN, META, api_token, login, register


def test_safe_json_limits_and_plain_parsing():
    from glotbench.leaderboard.safe_json import JSONLimitError, loads

    doc = '{"a": [1, 2.5, "x[", {"b": null}], "c": -12}'
    assert loads(doc) == json.loads(doc)
    with pytest.raises(JSONLimitError, match="nested too deeply"):
        loads("[" * 100_000 + "]" * 100_000)
    with pytest.raises(JSONLimitError, match="too long"):
        loads("[" + "9" * 5000 + "]")
    assert loads('["' + "[" * 100 + '"]') == ["[" * 100]  # brackets inside strings do not count


def test_names_refuse_control_and_direction_characters():
    from glotbench.leaderboard.names import bad_characters, name_key

    assert bad_characters("model\u202egnp") == ["U+202E"]
    assert bad_characters("a\x00b\u200bc") == ["U+0000", "U+200B"]
    assert bad_characters("line\nbreak", allow_newlines=True) == []
    assert bad_characters("Árvíztűrő tükörfúrógép 7B") == []
    assert name_key("Boss") == name_key("BOSS") == name_key("boss")


def test_public_share_hides_the_private_items_until_approval(sessions, client_factory):
    from glotbench.leaderboard import service

    gold = {str(i): "1" for i in range(200)}
    with sessions() as db:
        task = service.add_task(db, "split", gold, "accuracy", labels=["0", "1"], public_share=0.5)
        public = service.public_ids(task, gold)
    assert 70 < len(public) < 130
    # right on the public items only: 1.0 on the public share, about 0.5 on all items
    preds = {i: ("1" if i in public else "0") for i in gold}
    alice, admin = client_factory(), client_factory()
    register(alice, "alice")
    login(admin, *ADMIN)
    ta, tadm = api_token(alice), api_token(admin)
    body = {"task": "split", "model": "m", **META, "predictions": [{"id": i, "label": l} for i, l in preds.items()]}
    r = alice.post("/api/submissions", json=body, headers={"Authorization": f"Bearer {ta}"})
    assert r.status_code == 201 and r.json()["score"] == 1.0 and r.json()["score_on"] == "public share"
    sid = r.json()["id"]
    seen_by_admin = alice.get(f"/api/submissions/{sid}", headers={"Authorization": f"Bearer {tadm}"}).json()
    assert seen_by_admin["score"] == round(len(public) / 200, 3) and seen_by_admin["public_score"] == 1.0
    alice.post(f"/api/submissions/{sid}/review", json={"status": "approved"}, headers={"Authorization": f"Bearer {tadm}"})
    mine = alice.get(f"/api/submissions/{sid}", headers={"Authorization": f"Bearer {ta}"}).json()
    assert mine["score"] == round(len(public) / 200, 3) and mine["score_on"] == "all items"


def test_task_text_is_markdown_without_raw_html_and_test_download_has_no_labels(sessions, client_factory):
    from glotbench.leaderboard import service

    records = [{"id": str(i), "text": f"t{i}", "label": "1" if i % 2 else "0"} for i in range(6)]
    raw = json.dumps(records).encode()
    with sessions() as db:
        task = service.add_task(db, "md", {r["id"]: r["label"] for r in records}, "accuracy")
        service.add_task_file(db, task, "train", "whatever.json", raw)
        service.add_task_file(db, task, "test", "x.json", raw)
        service.set_task_text(db, task, "**Bold** text <script>alert(1)</script>", "*Magyar* szöveg")
    c = client_factory()
    html = c.get("/tasks/md").text
    assert "<strong>Bold</strong>" in html and "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html
    assert "<em>Magyar</em>" in c.get("/tasks/md?lang=hu").text
    test = c.get("/tasks/md/files/test")
    assert test.headers["content-disposition"] == 'attachment; filename="md_test.json"'
    assert all("label" not in r for r in test.json()) and [r["id"] for r in test.json()] == [r["id"] for r in records]
    assert c.get("/api/tasks/md/files/train").json() == records
    assert c.get("/tasks/md/files/secret").status_code == 404
    with sessions() as db:
        with pytest.raises(service.InputError, match="not allowed"):
            service.set_task_text(db, service.get_task(db, "md"), "rtl \u202e", "")


def test_grid_average_is_over_the_tasks_a_model_has(sessions):
    from glotbench.leaderboard import service
    from glotbench.leaderboard.config import Settings

    cfg = Settings()
    with sessions() as db:
        service.add_task(db, "a", {"1": "x", "2": "y"}, "accuracy")
        service.add_task(db, "b", {"1": "x", "2": "y"}, "accuracy")
        boss = service.get_user(db, ADMIN[0])
        for task, model, preds in (("a", "full", "xy"), ("b", "full", "xx"), ("a", "half", "xx")):
            body = {"task": task, "model": model, **META, "predictions": [{"id": "1", "label": preds[0]}, {"id": "2", "label": preds[1]}]}
            sub, problems, _ = service.submit(db, boss, service.Upload(), json.dumps(body).encode(), cfg)
            assert not problems
            service.review(db, boss, sub.id, "approved")
        rows = {r.model: r for r in service.grid(db)}
    assert rows["full"].average == pytest.approx(0.75) and set(rows["full"].cells) == {"a", "b"}
    assert rows["half"].average == pytest.approx(0.5) and set(rows["half"].cells) == {"a"}
    assert rows["full"].cells["a"].ci_low is not None


@pytest.mark.parametrize("metric", ["accuracy", "mcc", "weighted_f1", "macro_f1"])
def test_fast_interval_equals_the_generic_bootstrap(metric):
    """The NumPy confusion-matrix bootstrap gives bootstrap_ci's interval (same draws, sklearn metrics)."""
    import random

    from glotbench.leaderboard.scoring import score_interval
    from glotbench.scoring.metrics import ScoredItem, bootstrap_ci, get_metric

    rnd = random.Random(7)
    gold = {str(i): rnd.choice("abc") for i in range(80)}
    preds = {i: (g if rnd.random() < 0.6 else rnd.choice("abcd")) for i, g in gold.items()}
    del preds["5"]  # a missing prediction counts as unparseable
    items = [ScoredItem(gold=g, pred=preds.get(i)) for i, g in sorted(gold.items())]
    expected = bootstrap_ci(items, get_metric(metric), n_resamples=300, seed=3)
    assert score_interval(gold, preds, metric, n_resamples=300, seed=3) == pytest.approx(expected, abs=1e-12)


def test_safe_json_depth_scan_is_linear_on_escaped_quotes():
    """issue 42: the old whole-string regex took 108 s on 40 KB of escaped quotes (quadratic); the
    scan now grows linearly: 25x the input costs far less than 25x^2 the time, and 1 MB is fast."""
    from glotbench.leaderboard.safe_json import JSONLimitError, JSONTimeLimitError, loads, nesting_depth

    def took(k: int) -> float:
        text = '"' + '\\"' * k
        t0 = time.perf_counter()
        assert nesting_depth(text, 32) == 0
        return time.perf_counter() - t0

    small, big = min(took(20_000) for _ in range(3)), min(took(500_000) for _ in range(3))
    assert big < 0.5 and big < 25 * 25 * max(small, 1e-4) / 10, (small, big)
    assert nesting_depth('["\\"[[[", [["x\\\\"]]]', 99) == 3  # brackets in strings and after escapes
    with pytest.raises(json.JSONDecodeError):
        loads('"' + '\\"' * 20_000)
    with pytest.raises(JSONLimitError, match="too large"):
        loads("[1, 2, 3]", max_chars=5)
    with pytest.raises(JSONTimeLimitError, match="too long"):
        loads("[" + '"a",' * 100_000 + '"b"]', deadline=time.monotonic() - 1)
