"""`glotbench run --suite czech_bench --limit 5` in a fresh process that sees no benchmark data
(GLOTBENCH_DATA holding only the hand-fetched SQuAD-cs file, the package copied away from the
checkout, a temp cwd, an empty cache, offline flags cleared): the run fetches the other 26 tasks'
data from the loopback mirror and runs all 27.

The mirror serves every Hub fixture repository (tests/fixtures/hub_mirror: the 17 repositories
behind the 20 Hub-only tasks, today's layouts: SNLI's -1 rows, Belebele's per-language configs,
the legacy id ``truthful_qa`` redirected to ``truthfulqa/truthful_qa``) at a commit that ``main``
names, and the GitHub files the other six tasks read (Klokánek, facebook_comments, mall_reviews,
CTKFacts, GSM8K-en, AGREE as a Git LFS object) at the commits their task files pin, as small
made-up stand-ins in the real formats. The stand-ins' sizes and sha256 are written into the copied
task files in place of the real files' (everything else about each origin, repo, commit, path and
LFS, is the shipped declaration), so the run's checks against the declared hashes are the ones
that pass. CTKFacts, Facebook comments, Mall.cz (the thesis' splits), AGREE and SQuAD 2.0-cs come
from Czech-Bench's repository as Git LFS objects; SQuAD's task also fetches the MorfFlex dictionary
(the real one when the shared data has it, else a stand-in MorphoDiTa cannot load: the lemma and
root levels are then left out, in the run and in the oracles alike)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from value_oracles import run_value_mismatches

pytest.importorskip("datasets", reason="datasets not installed (pip install 'glotbench[hub]')")
pytest.importorskip("huggingface_hub", reason="huggingface_hub not installed (pip install 'glotbench[hub]')")

REPO = Path(__file__).resolve().parents[1]
HUB = REPO / "tests" / "fixtures" / "hub_mirror" / "datasets"
HAND = REPO / "tests" / "fixtures" / "czech_bench_hub" / "czech_bench"
REDIRECTS = {"truthful_qa": "truthfulqa/truthful_qa"}  # legacy Hub ids the Hub redirects
SQUAD = "czech_bench/squad_cs/dev-v2.0.json"
MORFFLEX = "czech_bench/morphology/czech-morfflex/czech-morfflex2.0-220710.dict"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _commit(repo: str) -> str:
    return hashlib.sha1(f"main of {repo}".encode()).hexdigest()  # noqa: S324 - a made-up commit id


def _lines(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


def github_standins() -> dict[str, bytes]:
    """A small file in each real format, by the path the task reads it at (``to``)."""
    kl = [{"question": f"Kolik je {a} + {b}?", "answers": {k: str(a + b + d) for k, d in zip("ABCDE", (-2, -1, 0, 1, 2))},
           "correct_answer": "C", "category": c, "year": 2014 + c} for c, (a, b) in enumerate([(1, 2), (3, 4), (5, 6),
                                                                                             (7, 8), (9, 10), (11, 12)])]
    posts = ["Skvělý obchod, doporučuji!", "To je hrůza.", "Nevím, uvidíme.", "Miluju to!!!", "Jak kdy :)",
             "Nic moc.", "Dobrý den."]
    ctk = [{"id": 7 + i, "label": lab, "claim": f"Tvrzení {i}.", "evidence": [[f"Odstavec {i} a.", f"Odstavec {i} b."]]}
           for i, lab in enumerate(["SUPPORTS", "REFUTES", "NOT ENOUGH INFO", "SUPPORTS", "REFUTES", "SUPPORTS"])]
    gsm = [{"question": f"Janet has {n} eggs and eats 3. How many are left?",
            "answer": f"She has {n} - 3 = <<{n}-3={n - 3}>>{n - 3} left.\n#### {n - 3:,}"} for n in (16, 20, 9, 1003, 7, 12)]
    mall = 'text,label\n"Spokojenost s výrobkem.\n",2\nNic moc,0\n"Dobré, ale drahé",1\nSuper!,2\nRozbité.,0\nOK,1\n'
    from czech_bench_ref import THESIS_SPLITS, arrow_bytes, thesis_split_rows
    from glotbench.paths import resolve_data_file

    build = Path(tempfile.mkdtemp(prefix="arrow-standins-"))
    arrows = {f"czech_bench/{key}_test/data-00000-of-00001.arrow": arrow_bytes(thesis_split_rows(key, 6), build / key)
              for key in THESIS_SPLITS}
    shutil.rmtree(build, ignore_errors=True)
    real_dict = resolve_data_file(MORFFLEX)
    return {
        **arrows,
        SQUAD: (HAND / "squad_cs" / "dev-v2.0.json").read_bytes(),
        MORFFLEX: real_dict.read_bytes() if real_dict.is_file() else b"not a MorphoDiTa dictionary\n",
        "czech_klokanek/dataset.json": json.dumps(kl, ensure_ascii=False).encode(),
        "czech_bench/facebook_comments/gold-posts.txt": ("\n".join(posts) + "\n").encode(),
        "czech_bench/facebook_comments/gold-labels.txt": b"p\nn\n0\np\nb\nn\n0\n",  # b (bipolar) is dropped
        "czech_bench/mall_reviews/data_test.csv": mall.encode(),
        "czech_bench/ctkfacts/export_08-30-2021_0200am_173.jsonl": _lines(ctk),
        "gsm8k_en/test.jsonl": _lines(gsm),
        "czech_bench/agree/test.json": (HAND / "agree" / "test.json").read_bytes(),
    }


def _declare(yaml_text: str, to: str, data: bytes) -> str:
    """The file entry whose ``to`` is ``to``: its size and sha256 set to ``data``'s."""
    block = re.compile(rf"(  to: {re.escape(to)}\n(?:      \w+: .*\n)*?      size: )\d+(\n      sha256: )[0-9a-f]{{64}}")
    new, n = block.subn(rf"\g<1>{len(data)}\g<2>{_sha(data)}", yaml_text)
    assert n == 1, f"no declared file with to: {to}"
    return new


@pytest.fixture(scope="module")
def pkg(tmp_path_factory) -> Path:
    """glotbench's source copied where no ../shared/data is near, the GitHub stand-ins declared."""
    dst = tmp_path_factory.mktemp("pkg")
    shutil.copytree(REPO / "src" / "glotbench", dst / "glotbench", ignore=shutil.ignore_patterns("__pycache__"))
    defs = dst / "glotbench" / "benchmarks"
    for to, data in github_standins().items():
        hits = [p for p in defs.rglob("*.yaml") if f"to: {to}\n" in p.read_text(encoding="utf-8")]
        assert hits, to
        for p in hits:
            p.write_text(_declare(p.read_text(encoding="utf-8"), to, data), encoding="utf-8")
    return dst


@pytest.fixture()
def mirror(tmp_path):
    """Every Hub fixture repository at a commit ``main`` names; the GitHub stand-ins at the commits
    and paths the task files declare."""
    from glotbench.tasks.registry import resolve
    from glotbench.testing.hub_mirror import start_mirror

    m = start_mirror(tmp_path / "mirror")
    for repo_dir in sorted(p for org in HUB.iterdir() if org.is_dir() for p in org.iterdir() if p.is_dir()):
        repo = repo_dir.relative_to(HUB).as_posix()
        m.add_hf(repo, _commit(repo), {p.relative_to(repo_dir).as_posix(): p for p in repo_dir.rglob("*") if p.is_file()},
                 refs={"main": _commit(repo)})
    for old, new in REDIRECTS.items():
        m.add_hf_redirect(old, new)
    standins = github_standins()
    for task in resolve(["czech_bench"]):
        for o in task.spec.source.fetch:
            if o.kind == "github":
                m.add_github(o.repo, o.revision, {f.path: standins[f.dest] for f in o.files})
    yield m
    m.stop()


def _env(pkg: Path, tmp_path: Path, mirror, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in (
        "GLOTBENCH_DATA", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "GLOTBENCH_DATA_LOCK", "GLOTBENCH_OFFLINE")}
    env.update({**mirror.env(), "PYTHONPATH": str(pkg), "GLOTBENCH_CACHE_DIR": str(tmp_path / "cache"),
                "OPENAI_API_KEY": "x", "HF_HOME": str(tmp_path / "hf_home"), "COLUMNS": "250", **extra})
    return env


def _cli(pkg, tmp_path, mirror, *args, timeout=900, **extra) -> subprocess.CompletedProcess:
    cwd = tmp_path / "work"
    cwd.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "glotbench", *args], cwd=cwd, env=_env(pkg, tmp_path, mirror, **extra),
                          capture_output=True, text=True, timeout=timeout)


def test_suite_fetches_and_runs_all_27(pkg, tmp_path, mirror, stub_server):
    from glotbench.tasks.registry import resolve

    tasks = {t.name: t.spec for t in resolve(["czech_bench"])}
    assert len(tasks) == 27
    out = tmp_path / "run"
    r = _cli(pkg, tmp_path, mirror, "run", "--suite", "czech_bench", "--limit", "5", "-m", "openai:stub",
             "--base-url", stub_server("--answer", "1"), "-o", str(out), "--no-progress")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    said = r.stdout + r.stderr
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert res["skipped_tasks"] == {}
    assert sorted(res["tasks"]) == sorted(tasks)
    cache = tmp_path / "cache" / "data"
    small = {"czech_bench.agree": 2, "czech_bench.squad": 2}  # the hand-made AGREE and SQuAD-cs fixtures
    standins = github_standins()
    for name, spec in tasks.items():
        t = res["tasks"][name]
        assert t["n_items"] == small.get(name, 5), name
        assert t["n_scored"] == t["n_items"] and t["n_errors"] == 0, name
        # scored (a headline the reference leaves undefined when nothing parses is null; the oracles check it)
        assert any(b["value"] is not None for b in t["metrics"].values()), name
        d = t["data"]
        assert (d["root"], d["root_kind"]) == (str(cache), "cache"), name
        assert len(d["sources"]) == len(spec.source.fetch) == 1, name
        o, src = spec.source.fetch[0], d["sources"][0]
        assert f"fetching {name}: {o.label()} (" in said, name
        if o.kind == "hf":  # main resolved to the commit the mirror's main names, every file as served
            served = mirror.root / "hf" / REDIRECTS.get(o.repo, o.repo) / _commit(REDIRECTS.get(o.repo, o.repo))
            assert (src["requested_revision"], src["resolved_revision"], src["resolved_by"]) == (
                "main", _commit(REDIRECTS.get(o.repo, o.repo)), "pulled by glotbench"), name
            got = {f["path"]: f["sha256"] for f in d["files"]}
            want = {f"{o.to}/{p.relative_to(served).as_posix()}": _sha(p.read_bytes())
                    for p in served.rglob("*") if p.is_file()}
            assert got and set(got) <= set(want) and all(got[k] == want[k] for k in got), name
            assert any(k.endswith((".parquet", ".jsonl", ".csv")) for k in got), name
        else:  # the pinned commit; each file the stand-in, matching what the task file declares
            assert (src["requested_revision"], src["resolved_revision"], src["resolved_by"]) == (
                o.revision, o.revision, "pulled by glotbench"), name
            assert sorted(d["files"], key=lambda f: f["path"]) == sorted(
                ({"path": f.dest, "size": len(standins[f.dest]), "sha256": _sha(standins[f.dest]), "matches_declared": True}
                 for f in o.files if not f.optional), key=lambda f: f["path"]), name
    assert (cache / MORFFLEX).read_bytes() == standins[MORFFLEX]  # the optional dictionary was fetched with SQuAD
    for name in ("czech_bench.agree", "czech_bench.squad", "czech_bench.ctkfacts", "czech_bench.facebook_comments",
                 "czech_bench.mall_reviews"):
        lfs = next(o for o in tasks[name].source.fetch)
        assert ("GET", f"/media/{lfs.repo}/{lfs.revision}/{lfs.files[0].path}", None) in mirror.requests, name
    assert any(p.startswith("/api/datasets/truthful_qa/") for _, p, _ in mirror.requests)  # redirected, followed
    samples = [json.loads(x) for x in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    golds = {n: [s["gold"] for s in samples if s["task"] == n] for n in ("czech_bench.snli", "czech_bench.snli_en")}
    assert (golds["czech_bench.snli"].count("-1"), golds["czech_bench.snli_en"].count("-1")) == (2, 1)  # scored, no abort
    assert res["tasks"]["czech_bench.snli"]["metrics"]["cb_parsed"]["value"] == 1.0
    assert run_value_mismatches(out) == []  # every number of the 27 recomputed from samples.jsonl


def test_mirror_redirects_a_renamed_repo(tmp_path, monkeypatch):
    """The legacy id ``truthful_qa`` (a task file names it; the Hub moved it to
    ``truthfulqa/truthful_qa``): a 307 to the new id on the API and on file URLs, followed by
    huggingface_hub as on the Hub."""
    import httpx

    from glotbench.sources import hub
    from glotbench.testing.hub_mirror import start_mirror

    m = start_mirror(tmp_path / "mirror")
    try:
        new, commit = "truthfulqa/truthful_qa", "c" * 40
        m.add_hf(new, commit, {"README.md": b"# tqa\n"}, refs={"main": commit})
        m.add_hf_redirect("truthful_qa", new)
        r = httpx.get(f"{m.url}/datasets/truthful_qa/resolve/main/README.md?x=1")
        assert (r.status_code, r.headers["location"]) == (307, f"/datasets/{new}/resolve/main/README.md?x=1")
        monkeypatch.setenv("HF_ENDPOINT", m.url)
        got, files = hub.resolve("truthful_qa", "main")
        assert (got, files["README.md"]["sha256"]) == (commit, _sha(b"# tqa\n"))
        assert httpx.get(f"{m.url}/api/datasets/CIIRC-NLP/truthful_qa/revision/main").status_code == 404
    finally:
        m.stop()
