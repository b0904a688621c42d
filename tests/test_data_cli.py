"""`glotbench data` and a run that fetches its data, each in a fresh subprocess that sees no
benchmark data (GLOTBENCH_DATA unset, the package copied away from the checkout, a temp cwd), against
the loopback mirror serving MM-Eval in GitHub's raw layout and a small Hub dataset."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MM = "39249314d5177003212e0e403c70535e4f53e029"
MM_FILES = ("syntax_eval.json", "semantics_eval.json", "knowledge_eval.json", "reasoning_eval.json")
LICENCE = "licence: none published (treat as all rights reserved)"


@pytest.fixture(scope="module")
def pkg(tmp_path_factory) -> Path:
    """glotbench's source copied where no ../shared/data is near (as a pip install would be)."""
    dst = tmp_path_factory.mktemp("pkg")
    shutil.copytree(REPO / "src" / "glotbench", dst / "glotbench", ignore=shutil.ignore_patterns("__pycache__"))
    return dst


@pytest.fixture()
def mm_mirror(tmp_path, data_root):
    from glotbench.testing.hub_mirror import start_mirror

    m = start_mirror(tmp_path / "mirror")
    m.add_github("joenahm/MM-Eval", MM, {f: data_root / "mm_eval" / f for f in MM_FILES})
    yield m
    m.stop()


def _env(pkg: Path, tmp_path: Path, mirror, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("GLOTBENCH_DATA", "HF_HUB_OFFLINE", "GLOTBENCH_DATA_LOCK",
                                                            "GLOTBENCH_OFFLINE")}
    env.update(mirror.env() if mirror is not None else {})
    env.update({"PYTHONPATH": str(pkg), "GLOTBENCH_CACHE_DIR": str(tmp_path / "cache"), "OPENAI_API_KEY": "x",
                "HF_HOME": str(tmp_path / "hf_home"), **extra})
    return env


def _cli(pkg, tmp_path, mirror, *args, timeout=300, **extra) -> subprocess.CompletedProcess:
    cwd = tmp_path / "work"
    cwd.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "glotbench", *args], cwd=cwd, env=_env(pkg, tmp_path, mirror, **extra),
                          capture_output=True, text=True, timeout=timeout)


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_fresh_process_sees_no_data(pkg, tmp_path, mm_mirror):
    r = _cli(pkg, tmp_path, mm_mirror, "data", "list", "mm_eval", "--json")
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert [(x["task"], x["present"], x["pinned"], x["licence"]) for x in rows] == [
        (f"mm_eval.{n}", False, "yes", LICENCE) for n in ("syntax", "semantics", "knowledge", "reasoning")]
    assert rows[0]["source"] == f"github:joenahm/MM-Eval@{MM}"


def test_pull_verify_list(pkg, tmp_path, mm_mirror, data_root):
    r = _cli(pkg, tmp_path, mm_mirror, "data", "pull", "mm_eval")
    assert r.returncode == 0, r.stderr
    size = (data_root / "mm_eval" / "syntax_eval.json").stat().st_size
    assert f"fetching mm_eval.syntax: github:joenahm/MM-Eval@{MM} ({size / 1000:.1f} kB; {LICENCE})" in r.stdout
    cache = tmp_path / "cache" / "data"
    for f in MM_FILES:
        assert _sha(cache / "mm_eval" / f) == _sha(data_root / "mm_eval" / f)
    assert f"pulled 4 task(s) into {cache}" in r.stdout
    v = _cli(pkg, tmp_path, mm_mirror, "data", "verify", "mm_eval")
    assert v.returncode == 0 and v.stdout.count(f": ok (1 file(s) in {cache})") == 4, v.stdout + v.stderr
    rows = [json.loads(line) for line in _cli(pkg, tmp_path, mm_mirror, "data", "list", "mm_eval", "--json").stdout.splitlines()]
    assert {(x["present"], x["where"]) for x in rows} == {(True, f"{cache} (cache)")}
    (cache / "mm_eval" / "knowledge_eval.json").write_bytes(b"[]")  # a changed file
    v = _cli(pkg, tmp_path, mm_mirror, "data", "verify", "mm_eval.knowledge")
    assert v.returncode == 1 and "mm_eval.knowledge: MISMATCH" in v.stdout
    assert "mismatch: mm_eval/knowledge_eval.json: size 2 bytes, expected" in v.stdout


def test_pull_refuses_a_corrupted_file(pkg, tmp_path, mm_mirror):
    served = mm_mirror.root / "github" / "joenahm/MM-Eval" / MM / "reasoning_eval.json"
    served.write_bytes(served.read_bytes().replace("18".encode(), "19".encode(), 1))
    r = _cli(pkg, tmp_path, mm_mirror, "data", "pull", "mm_eval.reasoning")
    assert r.returncode == 2
    errs = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert errs == [f"error: mm_eval.reasoning: github:joenahm/MM-Eval@{MM}: reasoning_eval.json: sha256 {_sha(served)}, "
                    f"expected 16fe5bdc7c74f677fd6bf8dd2521836d23abc18dc256dafe793b9f636dc4cfb2"]
    assert not list((tmp_path / "cache" / "data").rglob("reasoning_eval.json*"))


def test_pull_killed_half_way_resumes(pkg, tmp_path, mm_mirror, data_root):
    """SIGKILL while the file is half downloaded; the next pull asks only for the rest (Range)."""
    path = f"/raw/joenahm/MM-Eval/{MM}/semantics_eval.json"
    half = 100_000
    mm_mirror.stall[path] = half
    cwd = tmp_path / "work"
    cwd.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "glotbench", "data", "pull", "mm_eval.semantics"], cwd=cwd,
                            env=_env(pkg, tmp_path, mm_mirror), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    part = tmp_path / "cache" / "data" / "mm_eval" / "semantics_eval.json.part"
    deadline = time.time() + 60
    while not (part.exists() and part.stat().st_size == half):
        assert time.time() < deadline and proc.poll() is None, "the pull never got half-way"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    mm_mirror.release.set()
    assert not (tmp_path / "cache" / "data" / "mm_eval" / "semantics_eval.json").exists()
    del mm_mirror.stall[path]
    r = _cli(pkg, tmp_path, mm_mirror, "data", "pull", "mm_eval.semantics")
    assert r.returncode == 0, r.stderr
    assert mm_mirror.requests[-1] == ("GET", path, f"bytes={half}-")
    assert _sha(tmp_path / "cache" / "data" / "mm_eval" / "semantics_eval.json") == _sha(data_root / "mm_eval" / "semantics_eval.json")


def test_offline_run_names_the_pull_command(pkg, tmp_path, mm_mirror):
    for flags, extra in ((["--offline"], {}), ([], {"HF_HUB_OFFLINE": "1"})):
        n = len(mm_mirror.requests)
        r = _cli(pkg, tmp_path, mm_mirror, "run", "--tasks", "mm_eval.knowledge", "-m", "openai:stub", "--base-url",
                 "http://127.0.0.1:9/v1", *flags, **extra)
        assert r.returncode == 2
        assert r.stderr.strip().splitlines() == [
            f"error: task mm_eval.knowledge: data file mm_eval/knowledge_eval.json not found (source: "
            f"github:joenahm/MM-Eval@{MM}; https://github.com/joenahm/MM-Eval); fetch it with: "
            f"glotbench data pull mm_eval.knowledge (or set GLOTBENCH_DATA to a folder holding it)"]
        assert len(mm_mirror.requests) == n  # nothing fetched
    r = _cli(pkg, tmp_path, mm_mirror, "data", "pull", "mm_eval.knowledge", HF_HUB_OFFLINE="1")
    assert r.returncode == 2 and "offline (HF_HUB_OFFLINE or GLOTBENCH_OFFLINE is set): nothing fetched" in r.stderr


def test_run_fetches_mm_eval_and_records_provenance(pkg, tmp_path, mm_mirror, stub_server, data_root):
    """The issue's end-to-end check: no data anywhere, `run --tasks mm_eval --limit 5` fetches MM-Eval
    from the mirror, runs, and results.json names source, commit and file hashes."""
    base = stub_server()
    r = _cli(pkg, tmp_path, mm_mirror, "run", "--tasks", "mm_eval", "--limit", "5", "-m", "openai:stub",
             "--base-url", base, "-o", str(tmp_path / "run"))
    assert r.returncode == 0, r.stderr[-3000:]
    for n, f in (("syntax", "syntax_eval.json"), ("semantics", "semantics_eval.json")):
        size = (data_root / "mm_eval" / f).stat().st_size
        assert f"fetching mm_eval.{n}: github:joenahm/MM-Eval@{MM} ({size / 1000:.1f} kB; {LICENCE})" in r.stderr
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    cache = tmp_path / "cache" / "data"
    for name, f in zip(("syntax", "semantics", "knowledge", "reasoning"), MM_FILES):
        t = res["tasks"][f"mm_eval.{name}"]
        assert t["n_items"] == 5 if "n_items" in t else True
        d = t["data"]
        assert d["root"] == str(cache) and d["root_kind"] == "cache"
        assert d["sources"] == [{"kind": "github", "repo": "joenahm/MM-Eval", "config": None, "url": None,
                                 "requested_revision": MM, "resolved_revision": MM, "resolved_by": "pulled by glotbench"}]
        assert d["files"] == [{"path": f"mm_eval/{f}", "size": (data_root / "mm_eval" / f).stat().st_size,
                               "sha256": _sha(data_root / "mm_eval" / f), "matches_declared": True}]
    rep = _cli(pkg, tmp_path, None, "runs", "report", str(tmp_path / "run"), "-o", str(tmp_path / "report.html"))
    assert rep.returncode == 0, rep.stderr
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert f"{MM} → {MM}" in html and f"mm_eval/knowledge_eval.json {_sha(data_root / 'mm_eval' / 'knowledge_eval.json')}" in html
    # the same run again: the data is there, nothing is fetched
    n = len(mm_mirror.requests)
    r = _cli(pkg, tmp_path, mm_mirror, "run", "--tasks", "mm_eval", "--limit", "5", "-m", "openai:stub",
             "--base-url", base, "-o", str(tmp_path / "run"))
    assert r.returncode == 0 and "fetching" not in r.stderr and len(mm_mirror.requests) == n


SUBJ = "pauli31/czech-subjectivity-dataset"
OLD, NEW = "1" * 40, "2" * 40


def test_lock_then_pull_follows_the_lock(pkg, tmp_path, mm_mirror):
    """`data lock` resolves main to a commit (with each file's sha256); after main moves on, a pull
    with that lock still fetches the locked commit, and `data list` calls the task pinned."""
    rows = b'{"text": "Skvely film.", "label": 1}\n'
    mm_mirror.add_hf(SUBJ, OLD, {"data/test.jsonl": rows, "README.md": b"# subj\n"}, refs={"main": OLD})
    lock = tmp_path / "data.lock.json"
    r = _cli(pkg, tmp_path, mm_mirror, "data", "lock", "mm_eval.knowledge", "czech_bench.subjectivity", "--lock", str(lock))
    assert r.returncode == 0, r.stderr
    assert f"hf:{SUBJ}@main -> {OLD} (2 file(s))" in r.stdout
    origins = json.loads(lock.read_text())["origins"]
    assert origins[f"hf:{SUBJ}@main#czech_bench/hf/subjectivity"]["files"]["data/test.jsonl"]["sha256"] == \
        hashlib.sha256(rows).hexdigest()
    assert origins[f"github:joenahm/MM-Eval@{MM}"]["commit"] == MM
    mm_mirror.add_hf(SUBJ, NEW, {"data/test.jsonl": b'{"text": "jiny", "label": 0}\n'}, refs={"main": NEW})
    r = _cli(pkg, tmp_path, mm_mirror, "data", "pull", "czech_bench.subjectivity", "--lock", str(lock),
             "--cache-dir", str(tmp_path / "other-cache"))
    assert r.returncode == 0, r.stderr
    got = tmp_path / "other-cache" / "data" / "czech_bench" / "hf" / "subjectivity" / "data" / "test.jsonl"
    assert got.read_bytes() == rows
    listed = json.loads(_cli(pkg, tmp_path, mm_mirror, "data", "list", "czech_bench.subjectivity", "--json", "--lock",
                             str(lock), "--cache-dir", str(tmp_path / "other-cache")).stdout)
    assert (listed["present"], listed["pinned"], listed["licence"]) == (True, "yes", "licence: CC BY-NC-SA 4.0")
    v = _cli(pkg, tmp_path, mm_mirror, "data", "verify", "czech_bench.subjectivity", "--lock", str(lock),
             "--cache-dir", str(tmp_path / "other-cache"))
    assert v.returncode == 0 and "czech_bench.subjectivity: ok (2 file(s)" in v.stdout, v.stdout + v.stderr


def test_hub_pull_killed_half_way_completes_on_rerun(pkg, tmp_path, mm_mirror):
    """SIGKILL during a Hub download. huggingface_hub (2.x) downloads each file to a temporary name of
    its own process and resumes only within that process (see the cut test in test_data_sources), so
    the next pull fetches the file again; nothing half-written is ever used, and the result is checked."""
    big = (b'{"text": "x", "label": 1}\n' * 500_000)[: 12 * 1024 * 1024]
    mm_mirror.add_hf(SUBJ, OLD, {"data/test.jsonl": big}, refs={"main": OLD})
    path = f"/datasets/{SUBJ}/resolve/{OLD}/data/test.jsonl"
    mm_mirror.stall[path] = 11 * 1024 * 1024
    cwd = tmp_path / "work"
    cwd.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "glotbench", "data", "pull", "czech_bench.subjectivity"], cwd=cwd,
                            env=_env(pkg, tmp_path, mm_mirror), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 90
    blobs = tmp_path / "cache" / "hub"
    while not any(p.stat().st_size >= 10 * 1024 * 1024 for p in blobs.rglob("*.incomplete")):
        assert time.time() < deadline and proc.poll() is None, "the pull never got half-way"
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    mm_mirror.release.set()
    del mm_mirror.stall[path]
    target = tmp_path / "cache" / "data" / "czech_bench" / "hf" / "subjectivity"
    assert not target.exists()  # the killed pull left nothing a task could read
    r = _cli(pkg, tmp_path, mm_mirror, "data", "pull", "czech_bench.subjectivity")
    assert r.returncode == 0, r.stderr
    assert hashlib.sha256((target / "data" / "test.jsonl").read_bytes()).hexdigest() == hashlib.sha256(big).hexdigest()


def test_run_fetches_a_hub_task_at_the_commit_main_names(pkg, tmp_path, mm_mirror, stub_server):
    """A Czech-Bench Hub task on `main`: the run pulls the snapshot through huggingface_hub, reads it
    with datasets, and results.json says main resolved to which commit."""
    pytest.importorskip("datasets", reason="datasets not installed (pip install 'glotbench[hub]')")
    rows = b"".join(json.dumps({"text": f"Veta {i}.", "label": i % 2}).encode() + b"\n" for i in range(8))
    mm_mirror.add_hf(SUBJ, OLD, {"data/test.jsonl": rows, "README.md": b"# Czech subjectivity\n"}, refs={"main": OLD})
    r = _cli(pkg, tmp_path, mm_mirror, "run", "--tasks", "czech_bench.subjectivity", "--limit", "5", "-m", "openai:stub",
             "--base-url", stub_server(), "-o", str(tmp_path / "run"))
    assert r.returncode == 0, r.stderr[-3000:]
    total = len(rows) + len(b"# Czech subjectivity\n")  # the Hub's listing, asked before the download
    shown = f"{total} B" if total < 1000 else f"{total / 1000:.1f} kB"
    assert f"fetching czech_bench.subjectivity: hf:{SUBJ}@main ({shown}; licence: CC BY-NC-SA 4.0)" in r.stderr
    t = json.loads((tmp_path / "run" / "results.json").read_text())["tasks"]["czech_bench.subjectivity"]
    assert t["n_items"] == 5
    assert t["data"]["sources"][0]["requested_revision"] == "main" and t["data"]["sources"][0]["resolved_revision"] == OLD
    assert {f["path"]: f["sha256"] for f in t["data"]["files"]}["czech_bench/hf/subjectivity/data/test.jsonl"] == \
        hashlib.sha256(rows).hexdigest()


def test_the_readme_first_command_without_a_network(pkg, tmp_path):
    """`glotbench run --tasks mm_eval` with no data and nothing answering: one line naming the cause
    and the ways out (not "download interrupted after 0 bytes ... resume"); `data pull` exits as `run`."""
    from glotbench.testing.servers import free_port

    raw = f"http://127.0.0.1:{free_port()}/raw"  # nothing listens: refused, as a machine without a network
    r = _cli(pkg, tmp_path, None, "run", "--tasks", "mm_eval", "--limit", "2", "-m", "openai:stub", "--base-url",
             "http://127.0.0.1:9/v1", GLOTBENCH_GITHUB_RAW=raw)
    assert r.returncode == 2, r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("error: no selected task has its data: github:joenahm/MM-Eval@")
    assert "connection refused" in last and "--offline" in last and "GLOTBENCH_DATA" in last
    assert "interrupted" not in r.stderr and "resume" not in r.stderr
    p = _cli(pkg, tmp_path, None, "data", "pull", "mm_eval", GLOTBENCH_GITHUB_RAW=raw)
    assert p.returncode == r.returncode == 2
    errors = [ln for ln in p.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 4 and all("connection refused" in ln for ln in errors)


def test_data_group_takes_the_cache_and_lock_once_for_every_sub_command(tmp_path):
    """Issue 52: ``glotbench data --lock FILE SUB-COMMAND`` (the noun's option) reads FILE as ``data SUB-COMMAND
    --lock FILE`` (the spelling before, still accepted) does: a malformed lock file is the same one line."""
    bad = tmp_path / "bad.lock.json"
    bad.write_text("{bad", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    env.pop("GLOTBENCH_DATA_LOCK", None)

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "glotbench", *args], env=env, cwd=tmp_path, capture_output=True,
                              text=True, timeout=300)

    for sub in ("list", "verify"):
        group, leaf = cli("data", "--lock", bad, sub, "hulu.cola"), cli("data", sub, "hulu.cola", "--lock", bad)
        assert group.returncode == leaf.returncode == 2 and group.stderr == leaf.stderr, (group.stderr, leaf.stderr)
        assert f"{bad}: cannot read the data lock file" in group.stderr
    assert cli("data", "list", "hulu.cola", "--json").returncode == 0  # without it: no lock file read
