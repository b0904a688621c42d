"""issue 48, leaderboard: client addresses from ``X-Forwarded-For`` only from ``--trusted-proxy``
peers (default none, loopback included); scores shown before approval are coarse; error messages
echo a short prefix of what was sent. Each against a real ``glotbench serve`` on loopback."""

from __future__ import annotations

import json
import re

import pytest
from lb_server import api_json, http
from test_lb_attacks import GOLD, Browser, doc, prepared, server_factory  # noqa: F401  (fixtures)

pytestmark = pytest.mark.slow


def _register(base: str, name: str, forwarded: str) -> int:
    b = Browser(base)
    b.headers["X-Forwarded-For"] = forwarded
    status, _ = b.req("POST", "/register", {"csrf_token": b.csrf("/register"), "username": name,
                                            "password": "pw-123456789", "password2": "pw-123456789"})
    assert status in (303, 429), status
    return status


def test_28_forged_header_registrations_from_loopback_count_as_one_address(prepared, server_factory):
    url, _ = prepared
    srv = server_factory(url)  # default: no trusted proxy
    statuses = [_register(srv.base, f"forged{n:02d}", f"203.0.113.{n + 1}") for n in range(28)]
    assert statuses.count(303) == 3, statuses  # 3 new accounts per address per hour: one address
    assert statuses.count(429) == 25


@pytest.mark.parametrize("spelling", [("--trusted-proxy", "127.0.0.1"), ("--set", "trusted_proxy=127.0.0.1")])
def test_a_configured_proxy_is_trusted_and_only_its_last_hop_counts(prepared, server_factory, spelling):
    """The flag and the setting (issue 52: serve's deployment options are settings) are the same proxy."""
    url, _ = prepared
    srv = server_factory(url, *spelling)
    # behind the trusted proxy, 5 clients at 5 addresses: each its own budget of 3
    ok = [_register(srv.base, f"client{n}x{k}", f"198.51.100.{n}") for n in range(1, 6) for k in range(3)]
    assert ok.count(303) == 15, ok
    # a client that writes its own header in front of what the proxy appends: the proxy's hop counts
    forged = [_register(srv.base, f"spoof{k:02d}", f"203.0.113.{k + 1}, 192.0.2.7") for k in range(6)]
    assert forged.count(303) == 3, forged


def test_bad_trusted_proxy_is_one_line(tmp_path):
    import os
    import subprocess
    import sys

    from lb_server import REPO

    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    for spelling in (["--trusted-proxy", "not-an-address"], ["--set", "trusted_proxy=not-an-address"]):
        p = subprocess.run([sys.executable, "-m", "glotbench", "serve", "--db", f"sqlite:///{tmp_path / 'x.db'}",
                            *spelling], env=env, capture_output=True, text=True, timeout=120)
        assert p.returncode != 0 and "--trusted-proxy 'not-an-address'" in p.stderr and "Traceback" not in p.stderr


def test_unknown_task_echoes_a_short_prefix(prepared, server_factory):
    url, tokens = prepared
    srv = server_factory(url, "--max-upload-mb", "8")
    name = "x" * (3 << 20)
    status, body, _ = api_json("POST", srv.base + "/api/submissions", tokens["alice"],
                               dict(doc({i: "0" for i in GOLD}), task=name))
    assert status == 422 and len(body) < 2000, (status, len(body))
    body = body.decode() if isinstance(body, bytes) else body
    assert "Unknown task 'xxxx" in body and f"({3 << 20} characters)" in body
    status, body = http("GET", srv.base + "/api/tasks/" + "y" * 60000)[:2]
    assert status in (404, 414, 431) and len(body) < 2000, (status, len(body))


def test_pending_score_is_coarse_and_one_flip_is_not_seen(prepared, server_factory):
    """134 items: one flip moves accuracy by 1/134 = 0.0075; shown in steps of 0.05 the owner sees it
    only where the two scores straddle a step's edge. Of 5 one-flip uploads (2 hit a "1" label, 3 a
    "0") the shown score moves for none: the probe learns nothing from them."""
    url, tokens = prepared
    srv = server_factory(url, "--max-per-day", "0", "--max-per-month", "0", "--max-per-address-day", "0")
    base = {i: "0" for i in GOLD}
    shown = []
    for n in range(6):
        probe = dict(base, **{str(n): "1"}) if n else base
        status, body, _ = api_json("POST", srv.base + "/api/submissions", tokens["alice"], doc(probe, model=f"p{n}"))
        assert status == 201, body[:300]
        got = json.loads(body)
        assert got["ci95"] is None  # no interval before approval: its ends would carry the fine score
        shown.append(got["score"])
    assert all(abs(s / 0.05 - round(s / 0.05)) < 1e-9 for s in shown), shown
    exact = sum(GOLD[i] == "0" for i in GOLD) / len(GOLD)
    assert shown[0] == pytest.approx(round(exact / 0.05) * 0.05)
    assert len(set(shown)) == 1, shown  # no flip seen
    # the administrator sees the full-precision score
    admin = api_json("GET", srv.base + "/api/submissions/1", tokens["admin"])
    assert json.loads(admin[1])["score"] == pytest.approx(round(exact, 3))
