"""Security properties of the leaderboard: hidden gold, private results, escaping, refusals."""

from __future__ import annotations

import json
import re

import pytest
from lb_helpers import (
    ADMIN,
    api_token,
    approve,
    csrf_of,
    login,
    register,
    submission_json,
    upload,
)

# A canary task: distinctive ids and gold labels, so a leak of the id -> gold pairing is greppable.
CANARY_LABELS = ["GOLD_AXOLOTL", "GOLD_QUOKKA", "GOLD_ZEBRA"]
CANARY_GOLD = {f"cid-{n:04d}": CANARY_LABELS[(n * 7 + n // 3) % 3] for n in range(40)}


@pytest.fixture
def canary(sessions):
    from glotbench.leaderboard import service

    with sessions() as db:
        service.add_task(db, "canary", CANARY_GOLD, "accuracy")
    return CANARY_GOLD


@pytest.fixture
def recorded(client_factory):
    """Clients whose every response body is kept for grepping."""
    bodies: list[tuple[str, str]] = []

    def hook(response):
        response.read()
        bodies.append((str(response.request.url), response.text))

    def make():
        c = client_factory()
        c.event_hooks = {"request": [], "response": [hook]}
        return c

    make.bodies = bodies
    return make


def _count_rows(sessions, table) -> int:
    from sqlalchemy import func, select

    with sessions() as db:
        return db.scalar(select(func.count()).select_from(table))


def test_no_response_ever_contains_a_gold_label_pairing(canary, recorded, sessions):
    admin, alice, bob, anon = recorded(), recorded(), recorded(), recorded()
    login(admin, *ADMIN)
    register(alice, "alice")
    register(bob, "bob")
    # a good submission (all correct: its predictions equal the gold), a partial one, one with bad labels
    r = upload(alice, "canary", submission_json("canary", "perfect", canary))
    sub_id = int(r.headers["location"].rsplit("/", 1)[1])
    alice.get(r.headers["location"])
    upload(alice, "canary", submission_json("canary", "half", dict(list(canary.items())[:20])))
    upload(alice, "canary", submission_json("canary", "bad", {i: "NOPE" for i in canary}))
    upload(bob, "canary", json.dumps([{"id": "cid-0000", "label": "x"}]))
    token = api_token(alice)
    for c in (alice, bob):
        c.post("/api/submissions", content=submission_json("canary", "api", {i: "GOLD_ZEBRA" for i in canary}),
               headers={"Authorization": f"Bearer {token}"})
        c.get(f"/api/submissions/{sub_id}", headers={"Authorization": f"Bearer {token}"})
        c.get("/api/tasks")
        c.get("/api/leaderboard/canary")
    approve(admin, sub_id)
    for c in (admin, alice, bob, anon):
        for url in ("/", "/tasks/canary", "/submissions", f"/submissions/{sub_id}", "/admin", "/submit", "/account",
                    "/?lang=hu", "/api/leaderboard", "/api/openapi.json"):
            c.get(url)
    # the admin task form must not echo gold labels that fall outside the label set it was given
    files = {"gold": ("g.json", json.dumps([{"id": "a", "label": "SECRET_OUTSIDE_LABEL"}]), "application/json")}
    r = admin.post("/admin/tasks", data={"csrf_token": csrf_of(admin.get("/admin").text), "name": "t2", "metric": "accuracy",
                                         "labels": "x,y"}, files=files)
    assert r.status_code == 400

    assert len(recorded.bodies) > 40
    for url, body in recorded.bodies:
        text = re.sub(r"<[^>]+>", " ", body)
        assert "SECRET_OUTSIDE_LABEL" not in text, url
        for item_id, label in canary.items():
            assert not re.search(re.escape(item_id) + r"\W{0,16}" + re.escape(label), text), (url, item_id)
        in_order = [canary[i] for i in sorted(canary)]
        assert "".join(in_order) not in re.sub(r"\W", "", text), url


def test_unapproved_result_is_invisible_to_others(cola_task, client_factory):
    alice, bob, anon, admin = client_factory(), client_factory(), client_factory(), client_factory()
    register(alice, "alice")
    register(bob, "bob")
    login(admin, *ADMIN)
    r = upload(alice, "hulu.cola", submission_json("hulu.cola", "secret-model-xyz", {i: "1" for i in cola_task}))
    assert r.status_code == 303
    url = r.headers["location"]
    assert "secret-model-xyz" in alice.get(url).text
    assert "secret-model-xyz" in admin.get("/admin").text
    for c in (bob, anon):
        for page in ("/", "/tasks/hulu.cola", "/api/leaderboard", "/api/leaderboard/hulu.cola", "/submissions"):
            assert "secret-model-xyz" not in c.get(page).text, page
    # bob gets the same answer for alice's submission as for one that does not exist
    assert bob.get(url).status_code == 404
    assert bob.get("/submissions/999").status_code == 404
    assert anon.get(url, follow_redirects=False).status_code == 303  # to the login page
    # rejected stays private; approved becomes public
    approve(admin, int(url.rsplit("/", 1)[1]), "rejected")
    assert "secret-model-xyz" not in bob.get("/tasks/hulu.cola").text
    approve(admin, int(url.rsplit("/", 1)[1]), "approved")
    assert "secret-model-xyz" in bob.get("/tasks/hulu.cola").text
    assert "secret-model-xyz" in anon.get("/").text


def test_script_in_model_and_team_names_is_escaped(cola_task, client_factory):
    evil = '<script>alert("x")</script>'
    alice, admin, anon = client_factory(), client_factory(), client_factory()
    register(alice, "alice", team='<img src=x onerror="alert(1)">')
    login(admin, *ADMIN)
    r = upload(alice, "hulu.cola", submission_json("hulu.cola", evil, {i: "1" for i in cola_task}))
    approve(admin, int(r.headers["location"].rsplit("/", 1)[1]))
    for page in ("/", "/tasks/hulu.cola", "/admin", r.headers["location"]):
        html = (anon if page in ("/", "/tasks/hulu.cola") else admin).get(page).text
        assert evil not in html and "<img src=x" not in html, page
        assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in html, page
    assert "script-src 'none'" in anon.get("/").headers["content-security-policy"]


def test_oversized_and_malformed_uploads_are_refused_and_store_nothing(cola_task, client_factory, sessions, app):
    from glotbench.leaderboard.schema import Submission

    alice = client_factory()
    register(alice, "alice")
    big = submission_json("hulu.cola", "big", {i: "1" for i in cola_task}) + " " * app.state.max_upload_bytes
    r = upload(alice, "hulu.cola", big)
    assert r.status_code == 413 and "The file is too large" in r.text and "Nothing was stored" in r.text
    r = upload(alice, "hulu.cola", b'{"task": "hulu.cola", "predictions": [{"id": "0", "label": "1"},')
    assert r.status_code == 422 and "The file is not valid JSON" in r.text
    r = upload(alice, "hulu.cola", json.dumps({"predictions": [{"id": "0", "label": "7"}]}), model="m")
    assert r.status_code == 422
    assert "909 missing id(s)" in r.text and "Label &#39;7&#39; is not in the label set" in r.text
    token = api_token(alice)
    hdr = {"Authorization": f"Bearer {token}"}
    r = alice.post("/api/submissions", content=big, headers=hdr)
    assert r.status_code == 413 and r.json()["problems"][0].startswith("The file is too large")
    r = alice.post("/api/submissions", files={"file": ("p.json", big)}, data={"task": "hulu.cola"}, headers=hdr)
    assert r.status_code == 413
    r = alice.post("/api/submissions", content=b"not json", headers=hdr)
    assert r.status_code == 422 and "No task given" in r.json()["problems"][0]
    r = alice.post("/api/submissions?task=hulu.cola&model=m", content=b"not json", headers=hdr)
    assert r.status_code == 422 and r.json()["problems"] == ["The file is not valid JSON: Expecting value at line 1, column 1."]
    assert _count_rows(sessions, Submission) == 0


def test_non_administrator_cannot_approve(cola_task, client_factory, sessions):
    from glotbench.leaderboard.schema import Submission

    alice = client_factory()
    register(alice, "alice")
    r = upload(alice, "hulu.cola", submission_json("hulu.cola", "m", {i: "1" for i in cola_task}))
    sub_id = int(r.headers["location"].rsplit("/", 1)[1])
    assert alice.get("/admin").status_code == 403
    r = alice.post(f"/admin/submissions/{sub_id}", data={"csrf_token": csrf_of(alice.get("/submit").text), "status": "approved"})
    assert r.status_code == 403
    token = api_token(alice)
    r = alice.post(f"/api/submissions/{sub_id}/review", json={"status": "approved"}, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 403
    with sessions() as db:
        assert db.get(Submission, sub_id).status == "pending"


def test_requests_without_session_or_token_are_refused(cola_task, client_factory, sessions):
    from glotbench.leaderboard.schema import Submission

    anon = client_factory()
    doc = submission_json("hulu.cola", "m", {i: "1" for i in cola_task})
    for url in ("/submit", "/submissions", "/submissions/1", "/account", "/admin"):
        r = anon.get(url, follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"].startswith("/login?next="), url
    r = anon.post("/submit", files={"file": ("p.json", doc)}, data={"task": "hulu.cola"}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].startswith("/login")
    for hdr in ({}, {"Authorization": "Bearer gbt_not-a-real-token"}, {"Authorization": "Basic YTpi"}):
        r = anon.post("/api/submissions", content=doc, headers=hdr)
        assert r.status_code == 401 and "API token" in r.json()["detail"]
        assert anon.get("/api/submissions", headers=hdr).status_code == 401
        assert anon.get("/api/submissions/1", headers=hdr).status_code == 401
    # a session cookie is not an API credential, and a form post without the CSRF token is refused
    alice = client_factory()
    register(alice, "alice")
    assert alice.post("/api/submissions", content=doc).status_code == 401
    r = alice.post("/submit", files={"file": ("p.json", doc)}, data={"task": "hulu.cola", "csrf_token": "forged"})
    assert r.status_code == 403 and "expired" in r.text
    # a forged cookie is ignored
    forged = client_factory()
    forged.cookies.set("glotbench_session", "eyJ1aWQiOiAxfQ==.forged.sig")
    assert forged.get("/admin", follow_redirects=False).status_code == 303
    assert _count_rows(sessions, Submission) == 0


def test_other_users_submission_cannot_be_read(cola_task, client_factory):
    alice, bob = client_factory(), client_factory()
    register(alice, "alice")
    register(bob, "bob")
    ta, tb = api_token(alice), api_token(bob)
    r = alice.post("/api/submissions", content=submission_json("hulu.cola", "alice-model", {i: "1" for i in cola_task}),
                   headers={"Authorization": f"Bearer {ta}"})
    sub_id = r.json()["id"]
    assert alice.get(f"/api/submissions/{sub_id}", headers={"Authorization": f"Bearer {ta}"}).json()["model"] == "alice-model"
    r = bob.get(f"/api/submissions/{sub_id}", headers={"Authorization": f"Bearer {tb}"})
    assert r.status_code == 404 and "alice-model" not in r.text
    assert bob.get("/api/submissions", headers={"Authorization": f"Bearer {tb}"}).json() == []
    assert bob.get(f"/submissions/{sub_id}").status_code == 404
    assert "alice-model" not in bob.get("/submissions").text


def test_passwords_are_hashed_with_argon2(client_factory, sessions):
    from sqlalchemy import select

    from glotbench.leaderboard.schema import User

    register(client_factory(), "carol", password="a-long-password")
    with sessions() as db:
        h = db.scalar(select(User.password_hash).where(User.username == "carol"))
    assert h.startswith("$argon2id$") and "a-long-password" not in h
    c = client_factory()
    token = csrf_of(c.get("/login").text)
    r = c.post("/login", data={"csrf_token": token, "username": "carol", "password": "wrong-password"})
    assert r.status_code == 400 and "Wrong user name or password" in r.text
