"""``translate --to mn`` asks for Mongolian, not "into mn" (language names from Babel's CLDR data);
an unknown code is one line before any request. Fresh processes against the stub server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _translate(base: str, to: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": SRC, "OPENAI_API_KEY": "x"}
    return subprocess.run([sys.executable, "-m", "glotbench", "build", "translate", "--task", "hulu.cola", "--to", to, "-n", "1",
                           "--field", "Sent", "-o", str(tmp_path / to), "-m", "openai:stub", "--base-url", base],
                          env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)


def _prompts(base: str) -> list[str]:
    with urllib.request.urlopen(base.removesuffix("/v1") + "/_log") as r:
        log = json.load(r)["log"]
    return [m["content"] for e in log if isinstance(e.get("body"), dict) for m in e["body"].get("messages", [])]


def test_translate_names_the_target_language(stub_server, tmp_path, data_root):
    base = stub_server("--answer", "Сайн байна уу.", "--log-bodies")
    for code, name in (("mn", "Mongolian"), ("zh", "Chinese")):
        done = _translate(base, code, tmp_path)
        assert done.returncode == 0, done.stderr
    prompts = _prompts(base)
    assert any("Hungarian text into Mongolian." in p for p in prompts), prompts
    assert any("Hungarian text into Chinese." in p for p in prompts), prompts
    assert not any("into mn" in p or "into zh" in p for p in prompts)


def test_unknown_code_is_one_line_before_any_request(stub_server, tmp_path, data_root):
    base = stub_server("--log-bodies")
    done = _translate(base, "xx1", tmp_path)
    assert done.returncode == 2 and "'xx1' is not a language code" in done.stderr and "Traceback" not in done.stderr
    assert _prompts(base) == []
