"""OpenHuEval's HuSimpleQA and HuWildBench: published at the pinned commit but never seen byte for
byte, so pinned by their git blob ids (``git_blob:``). `glotbench data pull` through the loopback
mirror in GitHub's raw layout, in a fresh process: a file whose blob id is the pinned one is kept
and `data verify` calls it ok; a file whose bytes differ is refused in one line and not left in
place. The mirror serves fixture rows; the copied task files pin the fixture's blob id, computed
here independently of glotbench (``git hash-object``'s definition)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
COMMIT = "38c22bdfdcbf95d139e6001ea1b98934ebd2e7ca"
# `git ls-tree 38c22bdf data/` of opendatalab/OpenHuEval (the published ids the task files pin)
UPSTREAM = {"data/HuSimpleQA.jsonl": "6d6b9c8878617d867cd83af05224fc9052c54a01",
            "data/HuWildBench.jsonl": "1d3de789269eea70896cfd4b3ca1e0b3d0e10c5d"}
TASK_FILES = {"data/HuSimpleQA.jsonl": "benchmarks/factuality/tasks/hu_simpleqa.yaml",
              "data/HuWildBench.jsonl": "benchmarks/openhueval/tasks/hu_wildbench.yaml"}
CONTENT = {"data/HuSimpleQA.jsonl": FIXTURES / "hu_simpleqa_sample.jsonl",
           "data/HuWildBench.jsonl": FIXTURES / "hu_wildbench_sample.jsonl"}


def blob_id(data: bytes) -> str:
    """git's object id of a file: sha1 over b"blob <size>\\0" and the bytes."""
    return hashlib.sha1(b"blob " + str(len(data)).encode() + b"\x00" + data).hexdigest()  # noqa: S324


def test_task_files_pin_the_upstream_blob_ids():
    from glotbench.tasks.registry import resolve

    tasks = {t.name: t.spec for t in resolve(["hu_simpleqa", "openhueval.hu_wildbench"])}
    pins = {f.path: f.git_blob for spec in tasks.values() for o in spec.source.fetch for f in o.files}
    assert pins == UPSTREAM
    assert all(o.revision == COMMIT for spec in tasks.values() for o in spec.source.fetch)
    assert blob_id(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # git's empty blob: the definition holds


@pytest.fixture()
def pkg(tmp_path) -> Path:
    """glotbench copied away from the checkout, the two task files pinning the fixtures' blob ids."""
    dst = tmp_path / "pkg"
    shutil.copytree(REPO / "src" / "glotbench", dst / "glotbench", ignore=shutil.ignore_patterns("__pycache__"))
    for path, rel in TASK_FILES.items():
        p = dst / "glotbench" / rel
        text, n = re.subn(rf"git_blob: {UPSTREAM[path]}", f"git_blob: {blob_id(CONTENT[path].read_bytes())}",
                          p.read_text(encoding="utf-8"))
        assert n == 1, rel
        p.write_text(text, encoding="utf-8")
    return dst


def _cli(pkg: Path, tmp_path: Path, mirror, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("GLOTBENCH_DATA", "HF_HUB_OFFLINE", "GLOTBENCH_OFFLINE",
                                                            "GLOTBENCH_DATA_LOCK")}
    env.update({**mirror.env(), "PYTHONPATH": str(pkg), "GLOTBENCH_CACHE_DIR": str(tmp_path / "cache"),
                "HF_HOME": str(tmp_path / "hf_home"), "COLUMNS": "250"})
    cwd = tmp_path / "work"
    cwd.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "glotbench", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_pull_checks_the_git_blob_id(pkg, tmp_path):
    from glotbench.testing.hub_mirror import start_mirror

    m = start_mirror(tmp_path / "mirror")
    try:
        m.add_github("opendatalab/OpenHuEval", COMMIT, dict(CONTENT))
        r = _cli(pkg, tmp_path, m, "data", "pull", "hu_simpleqa", "openhueval.hu_wildbench")
        assert r.returncode == 0, r.stdout + r.stderr
        data = tmp_path / "cache" / "data" / "openhueval"
        for path, src in CONTENT.items():
            got = (data / Path(path).name).read_bytes()
            assert got == src.read_bytes() and blob_id(got) == blob_id(src.read_bytes())
            assert ("GET", f"/raw/opendatalab/OpenHuEval/{COMMIT}/{path}", None) in m.requests
        r = _cli(pkg, tmp_path, m, "data", "verify", "hu_simpleqa", "openhueval.hu_wildbench")
        assert r.returncode == 0, r.stdout + r.stderr
        assert "mismatch" not in r.stdout and "unpinned" not in r.stdout, r.stdout

        # a cached file edited afterwards: verify names its git blob
        target = data / "HuSimpleQA.jsonl"
        target.write_bytes(target.read_bytes() + b"\n")
        r = _cli(pkg, tmp_path, m, "data", "verify", "hu_simpleqa")
        assert r.returncode != 0 and "git blob" in r.stdout + r.stderr, r.stdout + r.stderr
        target.unlink()

        # the mirror now serves other bytes at the pinned path: refused in one line, nothing left in place
        m.add_github("opendatalab/OpenHuEval", COMMIT, {"data/HuSimpleQA.jsonl": b'{"qid": "x"}\n'})
        r = _cli(pkg, tmp_path, m, "data", "pull", "hu_simpleqa")
        assert r.returncode != 0
        line = [x for x in r.stderr.splitlines() if "git blob" in x]
        want = blob_id(CONTENT["data/HuSimpleQA.jsonl"].read_bytes())
        assert line and f"expected {want}" in line[0] and blob_id(b'{"qid": "x"}\n') in line[0], r.stderr
        assert not target.exists() and not target.with_name(target.name + ".part").exists()
    finally:
        m.stop()
