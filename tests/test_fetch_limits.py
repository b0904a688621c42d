"""Downloads against a network that misbehaves, and data that is not what its task declares, with the
real download code against loopback servers (glotbench.testing.hub_mirror): a socket that accepts and
never answers, a body far longer than the pinned size, a byte every few seconds, destinations that
reach out of their own folder, a cached file edited after the pull (issue 49).

Deadlines are made small through the environment (GLOTBENCH_FETCH_BASE_S, GLOTBENCH_FETCH_MIN_RATE),
so a test waits seconds, not minutes; each elapsed-time check is the deadline plus a wide margin."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from glotbench.errors import DataError, TaskSpecError

REPO = Path(__file__).resolve().parents[1]
C = "39249314d5177003212e0e403c70535e4f53e029"
PIN = 1320  # the size the task pins


def _records(n: int = 40) -> bytes:
    return json.dumps([{"question": f"Question {i}?", "answer": str(i % 4)} for i in range(n)]).encode()


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


@pytest.fixture()
def env(tmp_path, monkeypatch):
    """The cache in tmp_path, no data root visible, small deadlines."""
    from glotbench.sources import locate

    monkeypatch.setenv("GLOTBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("GLOTBENCH_FETCH_BASE_S", "2")
    monkeypatch.setenv("GLOTBENCH_FETCH_MIN_RATE", "1000000")
    for v in ("GLOTBENCH_DATA_LOCK", "GLOTBENCH_OFFLINE", "HF_HUB_OFFLINE", "GLOTBENCH_URL_MIRROR"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setattr(locate, "data_roots", lambda: [tmp_path / "no-data-here"])
    return tmp_path


@pytest.fixture()
def mirror(env, monkeypatch):
    from glotbench.testing.hub_mirror import start_mirror

    m = start_mirror(env / "mirror")
    for k, v in m.env().items():
        monkeypatch.setenv(k, v)
    yield m
    m.stop()


def _origin(size: int | None, sha: str | None, path: str = "data.json"):
    from glotbench.sources.schema import DataOrigin

    f = {"path": path, "to": f"acme/{path}"}
    if size is not None:
        f["size"] = size
    if sha is not None:
        f["sha256"] = sha
    return DataOrigin(kind="github", repo="acme/bench", revision=C, files=[f])


def _count_part_writes(monkeypatch) -> dict[str, int]:
    """The bytes each ``*.part`` file had written to it (the download's own writes, counted as made)."""
    from glotbench.sources import http_fetch

    written: dict[str, int] = {}
    real_open = Path.open

    class Counting:
        def __init__(self, fh, name):
            self.fh, self.name = fh, name

        def write(self, b):
            written[self.name] = written.get(self.name, 0) + len(b)
            return self.fh.write(b)

        def __getattr__(self, k):
            return getattr(self.fh, k)

        def __enter__(self):
            return self

        def __exit__(self, *a):
            return self.fh.__exit__(*a)

    def counting_open(self, mode="r", *a, **kw):
        fh = real_open(self, mode, *a, **kw)
        return Counting(fh, self.name) if self.name.endswith(".part") and "b" in mode and "r" not in mode else fh

    monkeypatch.setattr(http_fetch.Path, "open", counting_open)
    return written


# ------------------------------------------------------------------ (c) a body longer than the pin
@pytest.mark.parametrize("announced", [False, True])
def test_a_300_mib_body_for_a_1320_byte_pin_writes_at_most_the_pin(mirror, env, monkeypatch, announced):
    from glotbench.sources.limits import CHUNK
    from glotbench.sources.lock import Lock
    from glotbench.sources.pull import pull_origin

    content = b"x" * PIN
    mirror.add_github("acme/bench", C, {"data.json": content})
    path = f"/raw/acme/bench/{C}/data.json"
    mirror.flood[path] = 300 * 1024 * 1024
    mirror.flood_announced = announced
    written = _count_part_writes(monkeypatch)
    with pytest.raises(DataError) as err:
        pull_origin(_origin(PIN, _sha(content)), Lock(env / "l.json"))
    line = str(err.value)
    assert "\n" not in line and "acme/bench" in line and "1320 bytes" in line
    assert ("announces 314572800 bytes" in line) if announced else ("sent more than the declared 1320 bytes" in line)
    assert written.get("data.json.part", 0) <= PIN + CHUNK
    assert not list((env / "cache").rglob("data.json*"))  # nothing kept, nothing to resume
    mirror.release.set()


# ------------------------------------------------------------------ (d) a slow drip
@pytest.mark.parametrize("every", [20.0, 0.25])
def test_a_slow_drip_ends_within_its_deadline(mirror, env, every):
    """One byte every 20 s (each read waits longer than the deadline) and every 0.25 s (each read
    returns in time, the file never completes): both end at the deadline (2 s + 1,320 B / 1 MB/s)."""
    from glotbench.sources.limits import deadline_s
    from glotbench.sources.lock import Lock
    from glotbench.sources.pull import pull_origin

    content = b"y" * PIN
    mirror.add_github("acme/bench", C, {"data.json": content})
    mirror.drip[f"/raw/acme/bench/{C}/data.json"] = every
    t0 = time.monotonic()
    with pytest.raises(DataError) as err:
        pull_origin(_origin(PIN, _sha(content)), Lock(env / "l.json"))
    elapsed = time.monotonic() - t0
    mirror.release.set()
    line = str(err.value)
    assert "timeout: not complete after 2 s" in line and "\n" not in line
    assert "run the pull again to resume" in line  # some bytes came: the .part is kept for a Range request
    assert elapsed < deadline_s(PIN) + 5, elapsed


# ------------------------------------------------------------------ (b) a socket that never answers
def test_github_and_hub_against_a_stalled_socket_give_up_with_one_line(env, monkeypatch):
    from glotbench.sources.lock import Lock
    from glotbench.sources.pull import pull_tasks
    from glotbench.sources.schema import DataOrigin
    from glotbench.testing.hub_mirror import stalled_socket

    s, hub_s = stalled_socket(), stalled_socket()  # two hosts
    monkeypatch.setenv("GLOTBENCH_GITHUB_RAW", f"{s.url}/raw")
    monkeypatch.setenv("HF_ENDPOINT", hub_s.url)

    class Spec:  # what pull_tasks reads of a task
        def __init__(self, name, origins):
            self.name = name
            self.source = type("S", (), {"fetch": origins, "license": "CC0"})()

    tasks = [Spec(f"t{i}", [_origin(PIN, None, path=f"f{i}.json")]) for i in range(6)]
    tasks.append(Spec("h", [DataOrigin(kind="hf", repo="acme/hubset", revision=C, to="acme/hub")]))
    t0 = time.monotonic()
    failed = pull_tasks(tasks, Lock(env / "l.json"), say=lambda s: None)
    elapsed = time.monotonic() - t0
    s.stop()
    hub_s.stop()
    assert sorted(failed) == ["h", "t0", "t1", "t2", "t3", "t4", "t5"]
    for line in failed.values():
        assert "\n" not in line and "timeout" in line, line
        assert "--offline" in line and "GLOTBENCH_DATA" in line and "HF_ENDPOINT" in line
        assert "download interrupted after 0 bytes" not in line and "resume" not in line
    assert "no answer from the Hub" in failed["h"]
    assert sum("not tried" in line for line in failed.values()) >= 2  # t4, t5 at least: the host was down
    # four at a time, and a host that did not answer is not asked again: about one deadline in all
    assert elapsed < 4 * 2 + 10, elapsed


def test_no_network_names_the_cause_and_the_fixes(env, monkeypatch):
    """The README's first command with nothing listening: not "interrupted after 0 bytes ... resume",
    but the cause and what to do."""
    from glotbench.sources.lock import Lock
    from glotbench.sources.pull import pull_origin
    from glotbench.testing.servers import free_port

    monkeypatch.setenv("GLOTBENCH_GITHUB_RAW", f"http://127.0.0.1:{free_port()}/raw")
    with pytest.raises(DataError) as err:
        pull_origin(_origin(PIN, None), Lock(env / "l.json"))
    line = str(err.value)
    assert "connection refused" in line and "--offline" in line and "GLOTBENCH_DATA" in line
    assert "interrupted" not in line and "resume" not in line


def _cli(args, env, timeout=240, cwd=None):
    return subprocess.run([sys.executable, "-m", "glotbench", *args], capture_output=True, text=True, timeout=timeout,
                          env=env, cwd=cwd)


def _sub_env(tmp_path: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("GLOTBENCH_DATA", "HF_HUB_OFFLINE", "GLOTBENCH_OFFLINE",
                                                            "GLOTBENCH_DATA_LOCK", "GLOTBENCH_TASKS_PATH")}
    env.update({"PYTHONPATH": os.pathsep.join(p for p in (str(REPO / "src"), os.environ.get("PYTHONPATH", "")) if p),
                "GLOTBENCH_CACHE_DIR": str(tmp_path / "cache"), "OPENAI_API_KEY": "x", "COLUMNS": "250",
                "HF_HOME": str(tmp_path / "hf_home"), "HF_HUB_DISABLE_TELEMETRY": "1", **extra})
    return env


def test_data_pull_of_a_hub_task_against_a_stalled_socket(tmp_path):
    """`glotbench data pull` of a Hub task: one line within its deadline, exit 2 (as `run`)."""
    from glotbench.testing.hub_mirror import stalled_socket

    s = stalled_socket()
    try:
        t0 = time.monotonic()
        r = _cli(["data", "pull", "czech_bench.snli"], _sub_env(tmp_path, HF_ENDPOINT=s.url, GLOTBENCH_FETCH_BASE_S="3"),
                 timeout=120, cwd=tmp_path)
        elapsed = time.monotonic() - t0
    finally:
        s.stop()
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    assert r.returncode == 2, r.stdout + r.stderr
    assert len(errors) == 1 and "timeout: no answer from the Hub" in errors[0] and "--offline" in errors[0], r.stderr
    assert elapsed < 60, elapsed


@pytest.mark.slow
def test_suite_run_against_a_stalled_socket_runs_the_tasks_with_data(tmp_path, stub_server):
    """`run --suite czech_bench --limit 5` with every host stalled: the tasks whose data is on disk
    run, the others are named with their reason, all within 2 minutes, with the default deadlines
    (measured: 44 s on 2 shared cores; the Hub resolutions time out at 30 s, four at a time, and the
    host is then not asked again)."""
    from glotbench.paths import resolve_data_file
    from glotbench.testing.hub_mirror import stalled_socket

    have = {"czech_bench.klokanek": "czech_klokanek/dataset.json", "czech_bench.gsm8k_en": "gsm8k_en/test.jsonl"}
    if any(not resolve_data_file(rel).exists() for rel in have.values()):
        pytest.skip("shared data not found (../shared/data or GLOTBENCH_DATA)")
    root = tmp_path / "data"
    for rel in have.values():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).symlink_to(resolve_data_file(rel))
    s = stalled_socket()
    base = stub_server("--answer", "1")
    out = tmp_path / "run"
    env = _sub_env(tmp_path, GLOTBENCH_DATA=str(root), HF_ENDPOINT=s.url, GLOTBENCH_GITHUB_RAW=f"{s.url}/raw",
                   GLOTBENCH_GITHUB_MEDIA=f"{s.url}/media", GLOTBENCH_GITHUB_API=f"{s.url}/ghapi",
                   GLOTBENCH_URL_MIRROR=s.url, HF_DATASETS_OFFLINE="1")  # the default deadlines
    try:
        t0 = time.monotonic()
        r = _cli(["run", "--suite", "czech_bench", "--limit", "5", "--model", "openai:stub", "--base-url", base,
                  "-o", str(out), "--no-progress"], env, timeout=300, cwd=tmp_path)
        elapsed = time.monotonic() - t0
    finally:
        s.stop()
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert set(have) <= set(res["tasks"])  # (and any other whose data a shared/data next to the checkout holds)
    from glotbench.tasks.registry import suites

    assert set(res["tasks"]) | set(res["skipped_tasks"]) == set(suites()["czech_bench"])
    assert res["skipped_tasks"] and all(("timeout" in why or "not tried" in why or "glotbench data pull" in why)
                                        for why in res["skipped_tasks"].values()), res["skipped_tasks"]
    for name in res["skipped_tasks"]:
        assert f"{name}:" in r.stdout + r.stderr
    assert elapsed < 120, elapsed
    print(f"stalled-socket suite run: {elapsed:.1f} s, {len(res['tasks'])} run, {len(res['skipped_tasks'])} set aside")


# ------------------------------------------------------------------ (e) destinations confined
def _task_yaml(name: str, fetch: str, split: str = "acme/data.json") -> str:
    return f"""name: {name}
version: "1"
language: en
source:
  license: "CC0"
  fetch:
{fetch}
dataset:
  format: json
  splits: {{test: {split}}}
fields: {{question: question, target: answer}}
prompt:
  user: "{{{{ question }}}}"
"""


HF = "    - {{kind: hf, repo: acme/hubset, revision: {rev}, to: {to!r}}}\n"


@pytest.mark.parametrize("to", [".", "./", "../../x", "acme/../../x", "/etc", "~/x"])
def test_a_destination_outside_its_own_folder_is_refused_at_load(tmp_path, to):
    from glotbench.tasks.spec import load_spec

    y = tmp_path / "t.yaml"
    y.write_text(_task_yaml("acme.bad", HF.format(rev=C, to=to)), encoding="utf-8")
    with pytest.raises(TaskSpecError) as err:
        load_spec(y)
    assert str(y) in str(err.value) and "to" in str(err.value) and "\n" not in str(err.value)


def test_bad_task_files_are_set_aside_and_nothing_is_deleted(tmp_path):
    """Three bad task files in the task path (the data root, a path out of it, a built-in task's
    folder): each set aside with one line naming the file; the other tasks work; every file stays."""
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "root.yaml").write_text(_task_yaml("acme.root", HF.format(rev=C, to=".")), encoding="utf-8")
    (tasks / "escape.yaml").write_text(_task_yaml("acme.escape", HF.format(rev=C, to="../../victim")), encoding="utf-8")
    (tasks / "shared.yaml").write_text(_task_yaml("acme.shared", HF.format(rev=C, to="mm_eval"),
                                                             split="mm_eval/x.json"), encoding="utf-8")
    cache = tmp_path / "cache" / "data"
    keep = [cache / "mm_eval" / "knowledge_eval.json", cache / "other" / "x.part", tmp_path / "victim" / "v.txt"]
    for p in keep:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("mine")
    env = _sub_env(tmp_path, GLOTBENCH_TASKS_PATH=str(tasks), GLOTBENCH_FETCH_BASE_S="2",
                   HF_ENDPOINT="http://127.0.0.1:9", GLOTBENCH_GITHUB_RAW="http://127.0.0.1:9/raw")
    r = _cli(["data", "list", "mm_eval", "--json"], env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.splitlines()) == 4  # the built-in tasks still work
    warned = [ln for ln in r.stderr.splitlines() if ln.startswith("warning: set aside")]
    assert len(warned) == 3, r.stderr
    for f in ("root.yaml", "escape.yaml", "shared.yaml"):
        assert sum(str(tasks / f) in ln and "field 'source.fetch.0.to'" in ln for ln in warned) == 1, (f, warned)
    assert any("'mm_eval'" in ln and "which task mm_eval." in ln for ln in warned)
    r = _cli(["data", "pull", "acme.root"], env, cwd=tmp_path)
    assert r.returncode == 2 and "unknown task or suite 'acme.root'" in r.stderr and "set aside" in r.stderr
    r = _cli(["data", "pull", "mm_eval.knowledge", "--force"], env, cwd=tmp_path)  # nothing listening: nothing lost
    assert r.returncode == 2
    assert all(p.read_text() == "mine" for p in keep)


def test_hub_pull_never_replaces_the_data_root(tmp_path):
    from glotbench.sources import hub

    with pytest.raises(DataError, match="is not a folder inside the data root"):
        hub.confine(tmp_path, tmp_path, "hf:x@y")
    with pytest.raises(DataError, match="is not a folder inside the data root"):
        hub.confine(tmp_path / ".." / "victim", tmp_path, "hf:x@y")
    hub.confine(tmp_path / "acme" / "hub", tmp_path, "hf:x@y")


# ------------------------------------------------------------------ (f) data edited after the pull
def test_a_cached_file_edited_after_the_pull(tmp_path, stub_server):
    """`run` refuses it in one line naming the file and `data pull --force`; with
    --allow-modified-data it runs, and the table, results.json and the report mark it."""
    from glotbench.testing.hub_mirror import start_mirror

    content = _records()
    m = start_mirror(tmp_path / "mirror")
    m.add_github("acme/bench", C, {"data.json": content})
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "t.yaml").write_text(_task_yaml("acme.t", f"""    - kind: github
      repo: acme/bench
      revision: "{C}"
      files:
      - {{path: data.json, to: acme/data.json, size: {len(content)}, sha256: "{_sha(content)}"}}
"""), encoding="utf-8")
    env = _sub_env(tmp_path, GLOTBENCH_TASKS_PATH=str(tasks), **m.env())
    try:
        r = _cli(["data", "pull", "acme.t"], env, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        cached = tmp_path / "cache" / "data" / "acme" / "data.json"
        cached.write_bytes(_records(40).replace(b'"0"', b'"3"'))  # edited after the pull
        base = stub_server("--answer", "1")
        run = ["run", "--tasks", "acme.t", "-m", "openai:stub", "--base-url", base, "--limit", "5", "--no-progress"]
        r = _cli([*run, "-o", str(tmp_path / "r1")], env, cwd=tmp_path)
        assert r.returncode == 2
        assert r.stderr.strip().splitlines() == [ln for ln in r.stderr.strip().splitlines() if ln.startswith("error:")]
        err = r.stderr.strip().splitlines()[-1]
        assert "acme/data.json" in err and "differs from its source" in err and "glotbench data pull acme.t --force" in err
        assert not (tmp_path / "r1" / "results.json").exists()
        r = _cli([*run, "-o", str(tmp_path / "r2"), "--allow-modified-data"], env, cwd=tmp_path)
        assert r.returncode == 0, r.stderr[-2000:]
        assert "data differs" in r.stdout + r.stderr
        res = json.loads((tmp_path / "r2" / "results.json").read_text(encoding="utf-8"))
        t = res["tasks"]["acme.t"]
        assert t["data_differs"] == "data differs from its source: acme/data.json"
        assert t["data"]["differs_from_source"] == ["acme/data.json"]
        assert [f.get("differs_from_source") for f in t["data"]["files"]] == [True]
        rep = _cli(["runs", "report", str(tmp_path / "r2"), "-o", str(tmp_path / "report.html")], env, cwd=tmp_path)
        assert rep.returncode == 0, rep.stderr
        assert (tmp_path / "report.html").read_text(encoding="utf-8").count("data differs from its source") >= 2
    finally:
        m.stop()


# ------------------------------------------------------------------ mirrors, lock, LFS hint
def test_url_origins_follow_the_url_mirror(mirror, env, monkeypatch):
    """GLOTBENCH_URL_MIRROR: https://host/path is fetched from <mirror>/host/path, checked the same."""
    from glotbench.sources.lock import Lock
    from glotbench.sources.pull import pull_origin
    from glotbench.sources.schema import DataOrigin

    body = b"id,text\n1,ahoj\n"
    mirror.add_github("lindat.example/repository", "xmlui", {"bitstream/x.csv": body})
    monkeypatch.setenv("GLOTBENCH_URL_MIRROR", f"{mirror.url}/raw")
    o = DataOrigin(kind="url", files=[{"url": "https://lindat.example/repository/xmlui/bitstream/x.csv",
                                       "to": "acme/x.csv", "size": len(body), "sha256": _sha(body)}])
    assert pull_origin(o, Lock(env / "l.json")).files["acme/x.csv"]["sha256"] == _sha(body)
    assert ("GET", "/raw/lindat.example/repository/xmlui/bitstream/x.csv", None) in mirror.requests


def test_lfs_hint_for_a_file_already_marked_lfs(mirror, env):
    """The media host serves the pointer of a file marked `lfs: true`: the line does not tell to mark
    it (it is marked) but says what came from where."""
    from glotbench.sources.lock import Lock
    from glotbench.sources.pull import pull_origin
    from glotbench.sources.schema import DataOrigin

    obj = b'[{"a": 1}]' * 20
    pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{_sha(obj)}\nsize {len(obj)}\n".encode()
    mirror.add_github("acme/bench", C, {"big.json": pointer})
    o = DataOrigin(kind="github", repo="acme/bench", revision=C, files=[
        {"path": "big.json", "to": "acme/big.json", "size": len(obj), "sha256": _sha(obj), "lfs": True}])
    with pytest.raises(DataError) as err:
        pull_origin(o, Lock(env / "l.json"))
    assert "got a Git LFS pointer, not the object, from the media host" in str(err.value)
    assert "mark the file" not in str(err.value)


def test_data_lock_takes_cache_dir(mirror, tmp_path):
    """`data lock --cache-dir DIR` reads the pulls' manifests there (the sizes and hashes of files a
    task does not pin) and writes the lock."""
    content = _records()
    mirror.add_github("acme/bench", C, {"data.json": content}, refs={"main": C})
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "t.yaml").write_text(_task_yaml("acme.t", """    - kind: github
      repo: acme/bench
      revision: main
      files:
      - {path: data.json, to: acme/data.json}
"""), encoding="utf-8")
    env = _sub_env(tmp_path, GLOTBENCH_TASKS_PATH=str(tasks), **mirror.env())
    env.pop("GLOTBENCH_CACHE_DIR")
    other = tmp_path / "elsewhere"
    r = _cli(["data", "pull", "acme.t", "--cache-dir", str(other)], env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = _cli(["data", "lock", "acme.t", "--cache-dir", str(other), "--lock", str(tmp_path / "lock.json")], env,
             cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    entry = json.loads((tmp_path / "lock.json").read_text())["origins"]["github:acme/bench@main"]
    assert entry["commit"] == C and entry["files"]["acme/data.json"] == {"size": len(content), "sha256": _sha(content)}


# ------------------------------------------------------------------ Klokánek's new name
def test_klokanek_is_czech_bench_klokanek_and_the_old_name_still_selects_it():
    from glotbench.benchmarks.czech_bench.run_config import task_name
    from glotbench.tasks.registry import all_specs, canonical, resolve, suites

    assert "czech_bench.klokanek" in all_specs() and "cs.klokanek" not in all_specs()
    assert [t.name for t in resolve(["cs.klokanek"])] == ["czech_bench.klokanek"]
    assert canonical("cs.klokanek") == "czech_bench.klokanek" and canonical("mm_eval.knowledge") == "mm_eval.knowledge"
    assert "czech_bench.klokanek" in suites()["czech_bench"]
    assert task_name("klokanek") == "czech_bench.klokanek"  # Czech-Bench's eval_config.yml name
    assert sum(n.startswith("czech_bench.") for n in suites()["czech_bench"]) == len(suites()["czech_bench"])


def test_an_old_run_under_the_old_name_still_reads(tmp_path):
    """The committed Czech-Bench fixture run (results under cs.klokanek) still compares and reports."""
    import shutil

    run = REPO / "tests" / "fixtures" / "suite_runs" / "czech_bench"
    if not (run / "results.json").is_file():
        pytest.skip("no committed czech_bench fixture run")
    assert "cs.klokanek" in json.loads((run / "results.json").read_text(encoding="utf-8"))["tasks"]
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(run, a)
    shutil.copytree(run, b)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    r = subprocess.run([sys.executable, "-m", "glotbench", "runs", "compare", "--paired", str(a), str(b)], capture_output=True,
                       text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "cs.klokanek" in r.stdout
    r = subprocess.run([sys.executable, "-m", "glotbench", "runs", "report", str(a), "-o", str(tmp_path / "r.html")],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "cs.klokanek" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_progress_bar_gets_every_byte_and_the_total(mirror, env):
    """The bar (glotbench.sources.progress.Transfers: bytes, total, rate) is told the declared size and
    every byte as it arrives; it draws on a terminal (here: a recording console forced to be one)."""
    import io

    from rich.console import Console

    from glotbench.sources.http_fetch import download
    from glotbench.sources.progress import Transfers

    content = _records(400)
    mirror.add_github("acme/bench", C, {"data.json": content})
    calls = []

    class Recorder(Transfers):
        def add(self, label, total):
            calls.append(("add", label, total))
            return super().add(label, total)

        def advance(self, tid, n):
            calls.append(("advance", n))
            super().advance(tid, n)

    out = io.StringIO()
    bar = Recorder(Console(file=out, force_terminal=True, width=120))
    download(f"{mirror.url}/raw/acme/bench/{C}/data.json", env / "d.json", size=len(content), sha256=_sha(content),
             what="acme", bar=bar)
    assert calls[0] == ("add", "d.json", len(content))
    assert sum(c[1] for c in calls[1:]) == len(content)
    assert "d.json" in out.getvalue()
