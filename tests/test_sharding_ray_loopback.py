"""docs/sharding.md starts Ray on loopback with token authentication: the environment and the
``--node-ip-address`` its ``ray start`` line uses, taken from the doc, put every port Ray listens on
at 127.0.0.1 (checked with psutil on Ray's own processes), and Ray reports token auth on.

The doc's ``ray start --head`` is run as ``ray.init(_node_ip_address=...)`` in a child process (the
same ``resolve_ip_for_localhost`` step decides the address), so the test stops only the processes it
started (``ray stop`` would stop every Ray of this user)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "sharding.md"

CHILD = r"""
import json, sys
import psutil, ray
ray.init(num_cpus=1, object_store_memory=80_000_000, include_dashboard=False, _node_ip_address=sys.argv[1])
from ray._private.authentication.authentication_utils import is_token_auth_enabled
me = psutil.Process()
procs = [me, *me.children(recursive=True)]
addrs = set()
for p in procs:
    try:
        addrs |= {c.laddr.ip for c in p.net_connections(kind="tcp") if c.status == psutil.CONN_LISTEN}
    except psutil.Error:
        pass
print(json.dumps({"node_ip": ray.util.get_node_ip_address(), "listen": sorted(addrs), "token": is_token_auth_enabled()}))
ray.shutdown()
"""


def doc_setup() -> tuple[dict[str, str], str]:
    """The ``export`` line and the ``ray start --head`` address of the doc's one-machine example."""
    text = DOC.read_text(encoding="utf-8")
    starts = re.findall(r"^ray start --head(.*)$", text, flags=re.M)
    assert starts, "docs/sharding.md has no `ray start --head` line"
    ips = {m.group(1) for s in starts if (m := re.search(r"--node-ip-address=(\S+)", s))}
    assert ips == {"127.0.0.1"}, f"every one-machine `ray start --head` binds loopback: {starts}"
    exports = re.findall(r"^export (RAY_\S+=\S+(?: RAY_\S+=\S+)*)$", text, flags=re.M)
    assert exports, "docs/sharding.md sets no RAY_ variables before `ray start`"
    env = dict(kv.split("=", 1) for kv in exports[0].split())
    return env, "127.0.0.1"


def test_doc_ray_start_binds_loopback_with_token_auth():
    env, ip = doc_setup()
    assert env.get("RAY_AUTH_MODE") == "token"


@pytest.mark.slow
def test_doc_ray_setup_listens_on_loopback_only(tmp_path):
    pytest.importorskip("ray", reason="Ray is not installed: pip install 'glotbench[ray]'")
    pytest.importorskip("psutil")
    import json

    env, ip = doc_setup()
    # the token file in a folder of the test's own (Ray's default is ~/.ray/auth_token)
    token = tmp_path / "auth_token"
    token.write_text("glotbench-test-token-0123456789abcdef\n")
    child_env = {**os.environ, **env, "RAY_AUTH_TOKEN_PATH": str(token)}
    r = subprocess.run([sys.executable, "-c", CHILD, ip], env=child_env, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["node_ip"] == "127.0.0.1"
    assert got["listen"] and all(a in ("127.0.0.1", "::ffff:127.0.0.1") for a in got["listen"]), got["listen"]
    assert got["token"] is True
