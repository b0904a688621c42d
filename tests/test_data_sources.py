"""Task data sources: the ``source.fetch`` schema, and the real download code (httpx for GitHub raw
files, huggingface_hub for the Hub) against the loopback mirror ``glotbench.testing.hub_mirror``:
pull, lock, verify, a corrupted file, a download cut half-way and resumed, a 404."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from glotbench.errors import DataError, TaskSpecError

MM = "39249314d5177003212e0e403c70535e4f53e029"
OLD, NEW = "1" * 40, "2" * 40
SNLI_ROWS = (b'{"premise": "Kluk hraje fotbal.", "hypothesis": "Kluk spi.", "label": 2}\n'
             b'{"premise": "Pes bezi.", "hypothesis": "Zvire se hybe.", "label": -1}\n')


@pytest.fixture()
def mirror(tmp_path, monkeypatch):
    """A mirror holding MM-Eval-shaped files (GitHub layout) and a small Hub dataset; the cache in
    tmp_path; no other data root visible."""
    from glotbench.sources import locate
    from glotbench.testing.hub_mirror import start_mirror

    m = start_mirror(tmp_path / "mirror")
    for k, v in m.env().items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("GLOTBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("GLOTBENCH_DATA_LOCK", raising=False)
    monkeypatch.delenv("GLOTBENCH_OFFLINE", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(locate, "data_roots", lambda: [tmp_path / "no-data-here"])
    yield m
    m.stop()


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def _github_task(tmp_path: Path, content: bytes, *, sha: str | None = None, size: int | None = None,
                 revision: str = MM, name: str = "t.mini"):
    """A task reading one MM-Eval-shaped file from a GitHub origin (written as YAML, loaded as users do)."""
    from glotbench.tasks.registry import make_task
    from glotbench.tasks.spec import load_spec

    pinned = "".join(f"\n        {k}: {v}" for k, v in (("sha256", sha), ("size", size)) if v is not None)
    y = tmp_path / "defs" / f"{name}.yaml"
    y.parent.mkdir(parents=True, exist_ok=True)
    y.write_text(f"""name: {name}
version: "1"
language: mn
source:
  license: "none published"
  fetch:
    - kind: github
      repo: joenahm/MM-Eval
      revision: "{revision}"
      files:
      - path: knowledge_eval.json
        to: mini/knowledge_eval.json{pinned}
dataset:
  format: json
  splits: {{test: mini/knowledge_eval.json}}
fields: {{question: question, target: answer}}
""", encoding="utf-8")
    return make_task(load_spec(y), y)


RECORDS = json.dumps([{"question": f"q{i}", "answer": str(i)} for i in range(40)]).encode()


# ------------------------------------------------------------------ schema
def test_fetch_schema_checks_names_and_coverage(tmp_path):
    from glotbench.tasks.spec import load_spec

    base = """name: x.y
version: "1"
language: en
source:
  fetch:
    - kind: github
      repo: a/b
      revision: main
      files: [{path: d.json, to: x/d.json%s}]
dataset: {format: json, splits: {test: %s}}
"""
    p = tmp_path / "t.yaml"
    p.write_text(base % (", sha: abc", "x/d.json"))
    with pytest.raises(TaskSpecError, match=r"t\.yaml: field 'source\.fetch\.0\.files\.0\.sha': unknown field"):
        load_spec(p)
    p.write_text(base % ("", "x/other.json"))
    with pytest.raises(TaskSpecError, match=r"no origin provides split 'test' \(x/other\.json\)"):
        load_spec(p)
    p.write_text(base % (", sha256: XYZ", "x/d.json"))
    with pytest.raises(TaskSpecError, match="sha256 'XYZ': expected 64 lowercase hex digits"):
        load_spec(p)
    p.write_text(base % ("", "x/d.json"))
    assert load_spec(p).source.fetch[0].files[0].dest == "x/d.json"


def test_every_builtin_task_declares_where_its_files_come_from():
    """Each built-in task names an origin for every split; GitHub origins name a commit; and each
    declared file present under the shared data folder carries that file's size and sha256."""
    from glotbench.paths import find_data_root
    from glotbench.sources.schema import COMMIT
    from glotbench.tasks.registry import all_specs

    root = find_data_root()
    checked = 0
    for name, (spec, _) in all_specs().items():
        assert spec.source.fetch, f"{name}: no source.fetch"
        for o in spec.source.fetch:
            if o.kind == "github":
                assert COMMIT.fullmatch(o.revision), f"{name}: {o.repo}@{o.revision} is not a commit"
            for f in o.files:
                p = root / f.dest if root else None
                if p is not None and p.is_file():
                    assert f.sha256 == _sha(p.read_bytes()), f"{name}: {f.dest}: sha256 not pinned or wrong"
                    assert f.size == p.stat().st_size, f"{name}: {f.dest}: size"
                    checked += 1
    if root is None:
        pytest.skip("shared data not found: sha256 values not compared with the files")
    assert checked >= 40  # MM-Eval, OpenHuEval, Chinese SimpleQA, HuLU, the Czech-Bench GitHub exports


def test_github_sourced_tasks_name_what_they_read():
    """czech_bench.klokanek, the full-export variants of facebook_comments, ctkfacts and mall_reviews, and
    gsm8k_en read GitHub exports: their source says so (no Hub dataset named as the data)."""
    from glotbench.tasks.registry import all_specs

    specs = all_specs()
    for name in ("czech_bench.klokanek", "czech_bench.facebook_comments_full", "czech_bench.ctkfacts_full",
                 "czech_bench.mall_reviews_full", "czech_bench.gsm8k_en"):
        spec = specs[name][0]
        assert [o.kind for o in spec.source.fetch] == ["github"], name
        assert spec.dataset.hf is None, name
        assert spec.source.url == f"https://github.com/{spec.source.fetch[0].repo}", name
        assert spec.source.revision == spec.source.fetch[0].revision, name


# ------------------------------------------------------------------ GitHub raw files
def test_pull_github_file_then_verify_and_provenance(mirror, tmp_path):
    from glotbench.sources.lock import Lock
    from glotbench.sources.provenance import task_provenance
    from glotbench.sources.pull import pull_tasks, verify_task

    mirror.add_github("joenahm/MM-Eval", MM, {"knowledge_eval.json": RECORDS})
    task = _github_task(tmp_path, RECORDS, sha=_sha(RECORDS), size=len(RECORDS))
    with pytest.raises(DataError, match=r"task t\.mini: data file mini/knowledge_eval\.json not found \(source: github:joenahm/MM-Eval@\w+\); "
                                        r"fetch it with: glotbench data pull t\.mini"):
        task.samples()
    said: list[str] = []
    assert pull_tasks([task], Lock(tmp_path / "lock.json"), say=said.append) == {}
    assert said[0] == f"fetching t.mini: github:joenahm/MM-Eval@{MM} ({len(RECORDS) / 1000:.1f} kB; licence: none published)"
    assert ("GET", f"/raw/joenahm/MM-Eval/{MM}/knowledge_eval.json", None) in mirror.requests
    loc = task.data_location()
    assert (loc.kind, loc.root) == ("cache", tmp_path / "cache" / "data")
    assert [s.target for s in task.samples(limit=3)] == ["0", "1", "2"]
    assert [c.status for c in verify_task(task.spec, loc.root, Lock(tmp_path / "lock.json"))] == ["ok"]
    prov = task_provenance(task)
    assert prov["root"] == str(loc.root) and prov["root_kind"] == "cache"
    assert prov["sources"][0]["resolved_revision"] == MM and prov["sources"][0]["resolved_by"] == "pulled by glotbench"
    assert prov["files"] == [{"path": "mini/knowledge_eval.json", "size": len(RECORDS), "sha256": _sha(RECORDS),
                              "matches_declared": True}]
    n = len(mirror.requests)
    pull_tasks([task], Lock(tmp_path / "lock.json"), say=said.append)  # present and checked: nothing fetched
    assert len(mirror.requests) == n and said[-1] == "  t.mini: already in the cache, checked"


def test_corrupted_file_is_refused_and_never_used(mirror, tmp_path):
    from glotbench.sources.lock import Lock
    from glotbench.sources.pull import pull_tasks

    bad = RECORDS.replace(b'"q3"', b'"qX"')
    mirror.add_github("joenahm/MM-Eval", MM, {"knowledge_eval.json": bad})
    task = _github_task(tmp_path, RECORDS, sha=_sha(RECORDS), size=len(RECORDS))
    failed = pull_tasks([task], Lock(tmp_path / "lock.json"), say=lambda s: None)
    assert failed == {"t.mini": f"github:joenahm/MM-Eval@{MM}: knowledge_eval.json: sha256 {_sha(bad)}, "
                                f"expected {_sha(RECORDS)}"}
    dest = tmp_path / "cache" / "data" / "mini" / "knowledge_eval.json"
    assert not dest.exists() and not dest.with_name(dest.name + ".part").exists()
    assert task.data_location() is None


def test_download_cut_half_way_resumes_with_a_range_request(mirror, tmp_path):
    from glotbench.sources.lock import Lock
    from glotbench.sources.pull import pull_tasks

    mirror.add_github("joenahm/MM-Eval", MM, {"knowledge_eval.json": RECORDS})
    url = f"/raw/joenahm/MM-Eval/{MM}/knowledge_eval.json"
    half = len(RECORDS) // 2
    mirror.cut[url] = half
    task = _github_task(tmp_path, RECORDS, sha=_sha(RECORDS), size=len(RECORDS))
    failed = pull_tasks([task], Lock(tmp_path / "lock.json"), say=lambda s: None)
    assert f"download interrupted after {half} bytes" in failed["t.mini"] and "run the pull again to resume" in failed["t.mini"]
    part = tmp_path / "cache" / "data" / "mini" / "knowledge_eval.json.part"
    assert part.read_bytes() == RECORDS[:half]
    assert task.data_location() is None  # half a file is never read
    assert pull_tasks([task], Lock(tmp_path / "lock.json"), say=lambda s: None) == {}
    assert mirror.requests[-1] == ("GET", url, f"bytes={half}-")
    assert (tmp_path / "cache" / "data" / "mini" / "knowledge_eval.json").read_bytes() == RECORDS
    assert not part.exists()


def test_missing_file_is_one_line_naming_the_url(mirror, tmp_path):
    from glotbench.sources.lock import Lock
    from glotbench.sources.pull import pull_tasks

    mirror.add_github("joenahm/MM-Eval", MM, {"other.json": b"[]"})
    task = _github_task(tmp_path, RECORDS)
    failed = pull_tasks([task], Lock(tmp_path / "lock.json"), say=lambda s: None)
    assert failed == {"t.mini": f"github:joenahm/MM-Eval@{MM}: knowledge_eval.json: {mirror.url}/raw/joenahm/MM-Eval/"
                                f"{MM}/knowledge_eval.json: HTTP 404 (not found)"}


def test_lock_pins_a_branch_and_later_pulls_follow_it(mirror, tmp_path):
    """A task on `main`: lock resolves it to today's commit and measures the file; after main moves,
    a pull that follows the lock still fetches the locked commit."""
    from glotbench.sources.lock import Lock
    from glotbench.sources.provenance import task_provenance
    from glotbench.sources.pull import lock_origins, pull_tasks

    mirror.add_github("joenahm/MM-Eval", OLD, {"knowledge_eval.json": RECORDS}, refs={"main": OLD})
    task = _github_task(tmp_path, RECORDS, revision="main")
    lock = Lock(tmp_path / "lock.json")
    assert pull_tasks([task], lock, say=lambda s: None) == {}  # measures the file at OLD
    lock_origins([task.spec], lock, say=lambda s: None)
    lock.save()
    entry = json.loads((tmp_path / "lock.json").read_text())["origins"]["github:joenahm/MM-Eval@main"]
    assert entry["commit"] == OLD
    assert entry["files"] == {"mini/knowledge_eval.json": {"size": len(RECORDS), "sha256": _sha(RECORDS)}}
    moved = RECORDS.replace(b'"q1"', b'"Q1"')
    mirror.add_github("joenahm/MM-Eval", NEW, {"knowledge_eval.json": moved}, refs={"main": NEW})
    (tmp_path / "cache" / "data" / "mini" / "knowledge_eval.json").unlink()
    assert pull_tasks([task], Lock.load(tmp_path / "lock.json"), say=lambda s: None) == {}
    assert (tmp_path / "cache" / "data" / "mini" / "knowledge_eval.json").read_bytes() == RECORDS
    assert ("GET", f"/raw/joenahm/MM-Eval/{OLD}/knowledge_eval.json", None) in mirror.requests
    assert task_provenance(task)["sources"][0] | {} == {
        "kind": "github", "repo": "joenahm/MM-Eval", "config": None, "url": None, "requested_revision": "main",
        "resolved_revision": OLD, "resolved_by": "pulled by glotbench"}


# ------------------------------------------------------------------ the Hub
def _hub_task(tmp_path: Path, revision: str = "main"):
    from glotbench.tasks.registry import make_task
    from glotbench.tasks.spec import load_spec

    y = tmp_path / "defs" / "h.yaml"
    y.parent.mkdir(parents=True, exist_ok=True)
    y.write_text(f"""name: h.snli
version: "1"
language: cs
source:
  license: CC BY-SA 4.0
  fetch:
    - kind: hf
      repo: ctu-aic/snli_cs
      revision: "{revision}"
      splits: [test]
      to: hub/snli
dataset:
  format: jsonl
  splits: {{test: hub/snli/data/test.jsonl}}
fields: {{question: premise, target: label}}
""", encoding="utf-8")
    return make_task(load_spec(y), y)


def test_hub_dataset_lock_pull_verify(mirror, tmp_path):
    """huggingface_hub against the mirror (HF_ENDPOINT): lock resolves main to the commit and records
    each file's sha256; pull fetches that commit; verify passes, then catches a changed byte."""
    from glotbench.sources.lock import Lock
    from glotbench.sources.provenance import task_provenance
    from glotbench.sources.pull import lock_origins, pull_tasks, verify_task

    mirror.add_hf("ctu-aic/snli_cs", OLD, {"data/test.jsonl": SNLI_ROWS, "README.md": b"# SNLI cs\n"}, refs={"main": OLD})
    task = _hub_task(tmp_path)
    lock = Lock(tmp_path / "lock.json")
    lock_origins([task.spec], lock, say=lambda s: None)
    lock.save()
    entry = lock.entry(task.spec.source.fetch[0])
    assert entry["commit"] == OLD and entry["requested"] == "main"
    assert entry["files"]["data/test.jsonl"]["sha256"] == _sha(SNLI_ROWS)
    mirror.add_hf("ctu-aic/snli_cs", NEW, {"data/test.jsonl": b"{}\n"}, refs={"main": NEW})  # main moves on
    assert pull_tasks([task], Lock.load(tmp_path / "lock.json"), say=lambda s: None) == {}
    assert ("GET", f"/datasets/ctu-aic/snli_cs/resolve/{OLD}/data/test.jsonl", None) in mirror.requests
    folder = tmp_path / "cache" / "data" / "hub" / "snli"
    assert (folder / "data" / "test.jsonl").read_bytes() == SNLI_ROWS
    assert [s.target for s in task.samples()] == [2, -1]
    lk = Lock.load(tmp_path / "lock.json")
    assert {c.status for c in verify_task(task.spec, task.data_location().root, lk)} == {"ok"}
    prov = task_provenance(task, lock=lk)
    assert prov["sources"][0]["resolved_revision"] == OLD
    assert prov["files"] == [{"path": "hub/snli/data/test.jsonl", "size": len(SNLI_ROWS), "sha256": _sha(SNLI_ROWS)}]
    (folder / "data" / "test.jsonl").write_bytes(SNLI_ROWS.replace(b"-1", b"+1"))
    checks = verify_task(task.spec, task.data_location().root, lk)
    assert [c.status for c in checks if c.path.endswith("test.jsonl")] == ["mismatch"]


def test_hub_file_that_fails_its_hash_is_refused(mirror, tmp_path):
    from glotbench.sources.lock import Lock
    from glotbench.sources.pull import pull_tasks

    mirror.add_hf("ctu-aic/snli_cs", OLD, {"data/test.jsonl": SNLI_ROWS}, refs={"main": OLD})
    task = _hub_task(tmp_path, revision=OLD)
    lock = Lock(tmp_path / "lock.json")
    lock.put(task.spec.source.fetch[0], OLD, {"data/test.jsonl": {"size": len(SNLI_ROWS), "sha256": "0" * 64}})
    failed = pull_tasks([task], lock, say=lambda s: None)
    assert failed == {"h.snli": f"hf:ctu-aic/snli_cs@{OLD}: data/test.jsonl: sha256 {_sha(SNLI_ROWS)}, expected {'0' * 64}"}
    assert not (tmp_path / "cache" / "data" / "hub" / "snli").exists()
    assert task.data_location() is None


def test_hub_missing_repository_is_one_line(mirror, tmp_path):
    from glotbench.sources.lock import Lock
    from glotbench.sources.pull import pull_tasks

    task = _hub_task(tmp_path)
    failed = pull_tasks([task], Lock(tmp_path / "lock.json"), say=lambda s: None)
    assert failed["h.snli"].startswith("hf:ctu-aic/snli_cs@main: cannot resolve the revision: HTTP 404 (RepositoryNotFoundError")
    assert "\n" not in failed["h.snli"]


def test_hub_task_on_a_branch_fingerprints_the_commit(mirror, tmp_path, monkeypatch):
    """A `format: hf` task on `main`: the data fingerprint names the commit main points at (it was
    `hf:<id>@main` whatever the data), and the lock file pins it."""
    from glotbench.sources.lock import Lock
    from glotbench.tasks.registry import make_task
    from glotbench.tasks.spec import load_spec

    y = tmp_path / "hf.yaml"
    y.write_text('name: h.raw\nversion: "1"\nlanguage: cs\ndataset: {format: hf, hf: {id: ctu-aic/snli_cs, revision: main}}\n')
    mirror.add_hf("ctu-aic/snli_cs", OLD, {"data/test.jsonl": SNLI_ROWS}, refs={"main": OLD})
    first = make_task(load_spec(y), y).data_fingerprint()
    mirror.add_hf("ctu-aic/snli_cs", NEW, {"data/test.jsonl": b"{}\n"}, refs={"main": NEW})
    second = make_task(load_spec(y), y).data_fingerprint()
    assert (first, second) == (f"hf:ctu-aic/snli_cs@{OLD}", f"hf:ctu-aic/snli_cs@{NEW}")
    lock = Lock(tmp_path / "lock.json")
    from glotbench.sources.schema import DataOrigin

    lock.put(DataOrigin(kind="hf", repo="ctu-aic/snli_cs", revision="main", to="x"), OLD, {})
    lock.save()
    monkeypatch.setenv("GLOTBENCH_DATA_LOCK", str(tmp_path / "lock.json"))
    assert make_task(load_spec(y), y).data_fingerprint() == f"hf:ctu-aic/snli_cs@{OLD}"


def test_lfs_object_comes_from_the_media_host(mirror, tmp_path):
    """A Git LFS file (Czech-Bench's AGREE): fetched from GitHub's media host; the raw host's pointer
    would fail the declared sha256 with a note saying what came."""
    from glotbench.sources.lock import Lock
    from glotbench.sources.pull import pull_origin
    from glotbench.sources.schema import DataOrigin

    obj = b'[{"sentence": "Pes ___ stekl.", "answer": "hlasite"}]'
    pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{_sha(obj)}\nsize {len(obj)}\n".encode()
    (mirror.root / "github" / "poludmik/czech-bench" / MM / "benchmarks/agree/data").mkdir(parents=True)
    (mirror.root / "github" / "poludmik/czech-bench" / MM / "benchmarks/agree/data/test.json").write_bytes(pointer)
    media = tmp_path / "media-objects"  # the media host serves the object at the same path
    media.mkdir()
    origin = DataOrigin(kind="github", repo="poludmik/czech-bench", revision=MM, files=[
        {"path": "benchmarks/agree/data/test.json", "to": "czech_bench/agree/test.json", "size": len(obj),
         "sha256": _sha(obj), "lfs": True}])
    with pytest.raises(DataError, match=r"size 1\d\d bytes, expected \d+ \(got a Git LFS pointer, not the object"):
        pull_origin(origin.model_copy(update={"files": [origin.files[0].model_copy(update={"lfs": False})]}),
                    Lock(tmp_path / "l.json"))
    mirror.add_github("poludmik/czech-bench", MM, {"benchmarks/agree/data/test.json": obj})  # now the object
    import os

    os.environ["GLOTBENCH_GITHUB_RAW"] = mirror.url + "/nothing-here"  # LFS files never use the raw host
    try:
        res = pull_origin(origin, Lock(tmp_path / "l.json"))
    finally:
        os.environ["GLOTBENCH_GITHUB_RAW"] = mirror.url + "/raw"
    assert res.files == {"czech_bench/agree/test.json": {"size": len(obj), "sha256": _sha(obj)}}
    assert ("GET", f"/media/poludmik/czech-bench/{MM}/benchmarks/agree/data/test.json", None) in mirror.requests


def test_url_origin_and_a_page_to_fetch_by_hand(mirror, tmp_path):
    from glotbench.sources.lock import Lock
    from glotbench.sources.pull import pull_origin
    from glotbench.sources.schema import DataOrigin

    body = b"problem,answer\nq,a\n"
    mirror.add_github("openai/simple-evals", MM, {"simple_qa_test_set.csv": body})
    url = f"{mirror.url}/raw/openai/simple-evals/{MM}/simple_qa_test_set.csv"
    o = DataOrigin(kind="url", files=[{"url": url, "to": "simpleqa/simple_qa_test_set.csv"}])
    assert pull_origin(o, Lock(tmp_path / "l.json")).files["simpleqa/simple_qa_test_set.csv"]["sha256"] == _sha(body)
    manual = DataOrigin(kind="url", page="http://hdl.handle.net/11234/1-3249",
                        files=[{"to": "czech_bench/squad_cs/dev-v2.0.json"}])
    with pytest.raises(DataError, match=r"no direct download for czech_bench/squad_cs/dev-v2.0.json: get it by hand from "
                                        r"http://hdl.handle.net/11234/1-3249"):
        pull_origin(manual, Lock(tmp_path / "l.json"))


def test_hub_download_cut_half_way_resumes(mirror, tmp_path):
    """The connection drops after 11 MB of a 12 MB Hub file: huggingface_hub keeps the 10 MB it wrote
    and asks for the rest with a Range request; the file is whole and checked."""
    from glotbench.sources.lock import Lock
    from glotbench.sources.pull import pull_tasks

    big = (b'{"premise": "a", "hypothesis": "b", "label": 1}\n' * 260_000)[: 12 * 1024 * 1024]
    mirror.add_hf("ctu-aic/snli_cs", OLD, {"data/test.jsonl": big}, refs={"main": OLD})
    path = f"/datasets/ctu-aic/snli_cs/resolve/{OLD}/data/test.jsonl"
    mirror.cut[path] = 11 * 1024 * 1024
    assert pull_tasks([_hub_task(tmp_path, revision=OLD)], Lock(tmp_path / "l.json"), say=lambda s: None) == {}
    gets = [r for r in mirror.requests if r[0] == "GET" and r[1] == path]
    assert gets == [("GET", path, None), ("GET", path, f"bytes={10 * 1024 * 1024}-")]
    assert _sha((tmp_path / "cache" / "data" / "hub" / "snli" / "data" / "test.jsonl").read_bytes()) == _sha(big)


def test_a_suite_run_fetches_and_sets_aside_what_cannot_be_fetched(mirror, tmp_path):
    """`run --suite mm_eval` with one file missing upstream: the run fetches three tasks, and the
    fourth is set aside with the fetch's own one-line reason; offline, each is set aside with the
    pull command."""
    from rich.console import Console

    from glotbench.engine.config import RunConfig
    from glotbench.engine.display import ConsoleObserver
    from glotbench.engine.plan import drop_tasks_without_data, fetch_missing_data
    from glotbench.paths import find_data_root
    from glotbench.tasks.registry import resolve

    root = find_data_root()
    if root is None or not (root / "mm_eval").is_dir():
        pytest.skip("benchmark data not found: the mirror is filled from shared/data/mm_eval")
    mirror.add_github("joenahm/MM-Eval", MM, {f: root / "mm_eval" / f for f in
                                              ("syntax_eval.json", "semantics_eval.json", "knowledge_eval.json")})
    cfg = RunConfig(tasks=["mm_eval"])
    offline = resolve(["mm_eval"])
    fetch_missing_data(offline, cfg.model_copy(update={"offline": True}), ConsoleObserver(Console(file=open(os.devnull, "w"))))
    with pytest.raises(DataError, match=r"no selected task has its data: task mm_eval\.syntax: data file "
                                        r"mm_eval/syntax_eval\.json not found .*glotbench data pull mm_eval\.syntax"):
        drop_tasks_without_data(offline, cfg)
    tasks = resolve(["mm_eval"])
    out = tmp_path / "console.txt"
    with out.open("w") as fh:
        fetch_missing_data(tasks, cfg, ConsoleObserver(Console(file=fh, width=300)))
    keep, skipped = drop_tasks_without_data(tasks, cfg)
    assert [t.name for t in keep] == ["mm_eval.syntax", "mm_eval.semantics", "mm_eval.knowledge"]
    assert skipped == {"mm_eval.reasoning": f"github:joenahm/MM-Eval@{MM}: reasoning_eval.json: {mirror.url}/raw/"
                                            f"joenahm/MM-Eval/{MM}/reasoning_eval.json: HTTP 404 (not found)"}
    printed = out.read_text()
    assert f"fetching mm_eval.knowledge: github:joenahm/MM-Eval@{MM}" in printed
    assert "licence: none published (treat as all rights reserved)" in printed
