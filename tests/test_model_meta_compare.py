"""#54 model metadata, in fresh processes against the stub server: ``run --model-meta size=7B,open=yes,
reasoning=no`` (or ``--model-meta-file``) is stored in results.json and read back typed
(RunResult.model_meta; a run without it reads empty); a bad value is one line before any request;
``compare --by size|open|reasoning`` gives group means with intervals equal to a plain loop
(tests/value_oracles.py:plain_group_means), and ``--plot`` draws score vs size as a PNG."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from mc_task import mc_task_yaml
from value_oracles import plain_group_means

SRC = str(Path(__file__).resolve().parents[1] / "src")
ENV = {**os.environ, "OPENAI_API_KEY": "x", "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}

GOLDS = {"demo.a": "AABBCDDAAB", "demo.b": "CCCDDABBCA"}
# model -> (stub answer, --model-meta)
MODELS = {"m1": ("A", "size=7B,open=yes,reasoning=no"), "m2": ("B", "size=70B,open=no,reasoning=yes"),
          "m3": ("C", "size=7b,open=yes,reasoning=yes"), "m4": ("D", "size=1.5B,open=no,reasoning=no")}


def _tasks(tmp: Path) -> list[str]:
    out = []
    for name, golds in GOLDS.items():
        data = tmp / f"{name}.jsonl"
        data.write_text("".join(json.dumps({"id": f"i{k}", "q": f"{name} q{k}", "opts": ["w", "x", "y", "z"], "gold": g})
                                + "\n" for k, g in enumerate(golds)), encoding="utf-8")
        (tmp / f"{name}.yaml").write_text(mc_task_yaml(name, data), encoding="utf-8")
        out.append(str(tmp / f"{name}.yaml"))
    return out


def _glotbench(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "glotbench", *args], env=ENV, capture_output=True, text=True,
                          timeout=300, cwd=cwd)


@pytest.fixture()
def runs(stub_server, tmp_path):
    tasks = _tasks(tmp_path)
    out = {}
    for name, (answer, meta) in MODELS.items():
        base = stub_server("--answer", answer)
        done = _glotbench("run", "--model", "openai:stub", "--base-url", base, "--tasks", ",".join(tasks), "--no-progress",
                          "--output", str(tmp_path / name), "--model-meta", meta, "--bootstrap", "50", cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-2000:]
        out[name] = tmp_path / name
    return out


def _score(run: Path, task: str) -> float:
    return json.loads((run / "results.json").read_text())["tasks"][task]["metrics"]["accuracy"]["value"]


def test_model_meta_is_stored_typed_and_groups_equal_a_plain_loop(runs, tmp_path):
    from glotbench.output.run_result import RunResult

    res = json.loads((runs["m4"] / "results.json").read_text())
    assert res["model_meta"] == {"size": "1.5B", "size_b": 1.5, "open": False, "reasoning": False}
    typed = RunResult.from_json(res).model_meta
    assert (typed.size_b, typed.open, typed.reasoning) == (1.5, False, False)
    assert RunResult.from_json({"tasks": {}}).model_meta.empty  # a run written before model_meta
    assert RunResult.from_json(res).to_json()["model_meta"] == res["model_meta"]
    groups_of = {"size": {"m1": "7B", "m2": "70B", "m3": "7B", "m4": "1.5B"},
                 "open": {"m1": "open", "m2": "closed", "m3": "open", "m4": "closed"},
                 "reasoning": {"m1": "non-reasoning", "m2": "reasoning", "m3": "reasoning", "m4": "non-reasoning"}}
    for key, group_of in groups_of.items():
        out = tmp_path / f"by_{key}.json"
        args = ["compare", "--by", key, *map(str, runs.values()), "--n-boot", "300", "--seed", "3", "--json", str(out)]
        if key == "size":
            args += ["--plot", str(tmp_path / "size.png")]
        done = _glotbench(*args, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-2000:]
        rows = json.loads(out.read_text())["rows"]
        for task in GOLDS:
            scores = {m: _score(runs[m], task) for m in MODELS}
            want = plain_group_means(scores, group_of, 300, 3)
            got = {r["group"]: (r["mean"], r["ci95"]) for r in rows if r["task"] == task}
            assert set(got) == set(want)
            for g, (mean, ci) in want.items():
                assert got[g][0] == pytest.approx(mean, abs=1e-12)
                assert (got[g][1] is None) == (ci is None) and (ci is None or got[g][1] == pytest.approx(ci, abs=1e-12))
        # the average over tasks: each model's mean over both tasks, grouped the same way
        avg = {m: sum(_score(runs[m], t) for t in GOLDS) / len(GOLDS) for m in MODELS}
        want = plain_group_means(avg, group_of, 300, 3)
        got = {r["group"]: (r["mean"], r["ci95"]) for r in rows if r["task"] == "(all tasks)"}
        assert {g: v[0] for g, v in got.items()} == pytest.approx({g: v[0] for g, v in want.items()})
        assert key in done.stdout and "demo.a" in done.stdout
    report = _glotbench("runs", "report", str(runs["m2"]), "-o", str(tmp_path / "r.html"), cwd=tmp_path)
    assert report.returncode == 0, report.stderr[-2000:]
    assert "size=70B, open=no, reasoning=yes" in (tmp_path / "r.html").read_text()
    png = tmp_path / "size.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000


def test_a_run_without_the_key_is_left_out_and_named(runs, tmp_path):
    res = runs["m1"] / "results.json"
    data = json.loads(res.read_text())
    del data["model_meta"]
    res.write_text(json.dumps(data))
    done = _glotbench("runs", "compare", "--by", "open", *map(str, runs.values()), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "no open in its model_meta" in done.stdout and "m1" in done.stdout


@pytest.mark.parametrize("args, words", [
    (["--model-meta", "size=big"], ["size", "'big'", "7B"]),
    (["--model-meta", "open=maybe"], ["open", "'maybe'", "yes or no"]),
    (["--model-meta-file", "absent.yaml"], ["--model-meta-file", "absent.yaml", "no such file"]),
])
def test_bad_model_meta_is_one_line_before_any_request(stub_server, tmp_path, args, words):
    base = stub_server()
    tasks = _tasks(tmp_path)
    done = _glotbench("run", "--model", "openai:stub", "--base-url", base, "--tasks", tasks[0], "--no-progress",
                      "--output", str(tmp_path / "out"), *args, cwd=tmp_path)
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-1500:]
    assert len(lines) == 1 and all(w in lines[0] for w in words), lines
    assert httpx.get(base.replace("/v1", "/_log")).json()["log"] == []


def test_model_meta_file_is_read_and_the_flag_wins(stub_server, tmp_path):
    base = stub_server()
    tasks = _tasks(tmp_path)
    (tmp_path / "meta.yaml").write_text("size: 135M\nopen: yes\nreasoning: yes\nfamily: smollm\n", encoding="utf-8")
    done = _glotbench("run", "--model", "openai:stub", "--base-url", base, "--tasks", tasks[0], "--no-progress",
                      "--output", str(tmp_path / "out"), "--model-meta-file", str(tmp_path / "meta.yaml"),
                      "--model-meta", "reasoning=no", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-1500:]
    meta = json.loads((tmp_path / "out" / "results.json").read_text())["model_meta"]
    assert meta == {"size": "135M", "size_b": 0.135, "open": True, "reasoning": False, "family": "smollm"}


def test_compare_by_a_key_no_run_has_is_one_line():
    runs = sorted(str(p) for p in (Path(__file__).parent / "fixtures" / "signal_runs").iterdir())[:2]
    done = _glotbench("runs", "compare", "--by", "size", *runs, cwd=Path(__file__).parent)
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-1500:]
    assert len(lines) == 1 and "no run has size in its model_meta" in lines[0], lines


def test_an_invalid_score_is_counted_and_never_averaged(runs, tmp_path):
    res = runs["m3"] / "results.json"
    data = json.loads(res.read_text())
    data["tasks"]["demo.a"]["status"] = "invalid"
    res.write_text(json.dumps(data))
    out = tmp_path / "open.json"
    done = _glotbench("runs", "compare", "--by", "open", *map(str, runs.values()), "--json", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {(r["task"], r["group"]): r for r in json.loads(out.read_text())["rows"]}
    row = rows[("demo.a", "open")]  # m1 and m3 are open; m3's demo.a is invalid
    assert (row["models"], row["n_invalid"]) == (["openai:stub (m1)"], 1)  # each run labelled with its folder
    assert row["mean"] == pytest.approx(_score(runs["m1"], "demo.a")) and row["ci95"] is None
    # the average over tasks uses only the tasks every model scored validly: demo.b alone
    (avg,) = [r for r in json.loads(out.read_text())["rows"] if r["task"] == "(all tasks)" and r["group"] == "open"]
    assert avg["mean"] == pytest.approx((_score(runs["m1"], "demo.b") + _score(runs["m3"], "demo.b")) / 2)
