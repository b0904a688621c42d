"""A converted lm-eval task whose data is a Hub dataset goes through glotbench's data layer: the
conversion declares ``source.fetch`` (kind hf: the repository, its config and splits, a folder under the
data root), ``glotbench data lock`` pins ``main`` to a commit, the run fetches that commit's snapshot and
reads it from the folder (never the split name looked up as a local file), and a later offline run reads
the same folder. belebele_ces_Latn as shipped in the lm-eval wheel, against a loopback Hub serving
facebook/belebele in the repository's own layout (a README ``configs:`` block, ``data/<lang>.jsonl``);
``main`` moves after the lock, and the run still reads the locked commit. Every prompt and option
continuation equals lm-eval's ConfigurableTask's on the locked commit's records."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from test_lm_eval_zoo_import import SRC, _belebele, _tasks_dir, lm_eval_requests

C1, C2 = "a" * 40, "b" * 40
README = ("---\nconfigs:\n" + "".join(f"- config_name: {lang}\n  data_files:\n  - split: test\n    path: data/{lang}.jsonl\n"
                                      for lang in ("ces_Latn", "hun_Latn")) + "---\n# Belebele (mirror)\n").encode()


def _files(tag: str) -> dict[str, bytes]:
    def lines(lang):
        return "".join(json.dumps({**_belebele(i), "dialect": lang, "question": f" {tag} otázka {i}? "},
                                  ensure_ascii=False) + "\n" for i in range(6)).encode()

    return {"README.md": README, "data/ces_Latn.jsonl": lines("ces_Latn"), "data/hun_Latn.jsonl": lines("hun_Latn")}


def _cli(*args, cwd, env):
    full = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": SRC, **env}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], cwd=cwd, env=full, capture_output=True, text=True,
                          timeout=600)


def test_converted_hub_task_is_fetched_locked_and_read_from_the_data_root(tmp_path):
    import yaml

    from glotbench.testing.hub_mirror import start_mirror
    from glotbench.testing.servers import start_stub, stop

    tasks_dir = _tasks_dir()
    rel = "belebele/belebele_ces_Latn.yaml"
    m = start_mirror(tmp_path / "mirror")
    base, proc = start_stub("--answer", "A")
    try:
        m.add_hf("facebook/belebele", C1, _files("locked"), refs={"main": C1})
        env = {**m.env(), "GLOTBENCH_CACHE_DIR": str(tmp_path / "cache"), "HF_HOME": str(tmp_path / "hf_home"),
               "GLOTBENCH_DATA": "", "GLOTBENCH_OFFLINE": "", "HF_DATASETS_OFFLINE": "", "HF_HUB_OFFLINE": "",
               "GLOTBENCH_DATA_LOCK": ""}
        c = _cli("tasks", "import", str(tasks_dir / rel), "--language", "cs", "-o", "bele.yaml", cwd=tmp_path,
                 env=env)
        assert c.returncode == 0, c.stderr
        spec = yaml.safe_load((tmp_path / "bele.yaml").read_text(encoding="utf-8"))
        [origin] = spec["source"]["fetch"]
        assert origin == {"kind": "hf", "repo": "facebook/belebele", "revision": "main", "config": "ces_Latn",
                          "splits": ["test"], "to": "lm_eval/facebook/belebele"}
        lock = _cli("data", "lock", "bele.yaml", cwd=tmp_path, env=env)
        assert lock.returncode == 0, lock.stdout + lock.stderr
        assert C1 in (tmp_path / "glotbench-data.lock.json").read_text()
        m.add_hf("facebook/belebele", C2, _files("moved"), refs={"main": C2})  # main moves after the lock
        args = ("run", "-m", "openai:stub", "--base-url", base, "-M", "logprobs_trusted=true", "--mode", "loglikelihood",
                "-t", "bele.yaml", "--num-fewshot", "5", "--no-progress", "--bootstrap", "20", "--max-retries", "0")
        r = _cli(*args, "-o", "run", cwd=tmp_path, env=env)  # fetches the locked commit itself
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        offline = _cli(*args, "-o", "run_offline", cwd=tmp_path, env={**env, "GLOTBENCH_OFFLINE": "1", "HF_HUB_OFFLINE": "1"})
        assert offline.returncode == 0, offline.stdout[-2000:] + offline.stderr[-2000:]
    finally:
        stop(proc)
        m.stop()
    assert (tmp_path / "cache" / "data" / "lm_eval" / "facebook" / "belebele" / "data" / "ces_Latn.jsonl").is_file()
    [entry] = json.loads((tmp_path / "run" / "results.json").read_text())["tasks"].values()
    [src] = entry["data"]["sources"]
    assert src["resolved_revision"] == C1 and entry["data"]["root_kind"] == "cache"
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "test.jsonl").write_bytes(_files("locked")["data/ces_Latn.jsonl"])
    theirs = lm_eval_requests(tasks_dir, rel, 5, {"test": tmp_path / "locked" / "test.jsonl"})
    for run in ("run", "run_offline"):
        recs = {int(x["idx"]): x for x in map(json.loads, (tmp_path / run / "samples.jsonl").read_text().splitlines())}
        assert len(recs) == len(theirs) == 6
        for i, reqs in theirs.items():
            assert recs[i]["prompt"] == reqs[0][0], (run, i)
            assert "locked otázka" in recs[i]["prompt"] and "moved" not in recs[i]["prompt"]


def test_offline_without_the_snapshot_is_one_line_naming_data_pull(tmp_path):
    tasks_dir = _tasks_dir()
    env = {"GLOTBENCH_CACHE_DIR": str(tmp_path / "cache"), "GLOTBENCH_DATA": "", "GLOTBENCH_OFFLINE": "1"}
    c = _cli("tasks", "import", str(tasks_dir / "belebele/belebele_ces_Latn.yaml"), "-o", "bele.yaml",
             cwd=tmp_path, env=env)
    assert c.returncode == 0, c.stderr
    r = _cli("run", "-m", "openai:stub", "--base-url", "http://127.0.0.1:9/v1", "--mode", "loglikelihood",
             "-M", "logprobs_trusted=true", "-t", "bele.yaml", "--no-progress", cwd=tmp_path, env=env)
    assert r.returncode == 2
    [line] = r.stderr.strip().splitlines()
    assert "glotbench data pull lm_eval.belebele_ces_Latn" in line and "lm_eval/facebook/belebele" in line
