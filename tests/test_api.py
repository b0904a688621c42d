"""`glotbench.evaluate(...)`: the Python API, each run in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import json, sys
    import glotbench
    assert "glotbench.api" not in sys.modules and "glotbench.engine.session" not in sys.modules, "import must stay cheap"
    kw = json.loads(sys.argv[1])
    res = glotbench.evaluate(**kw)
    assert isinstance(res, glotbench.EvalResult)
    print(json.dumps({
        "fingerprint": res.fingerprint, "output_dir": str(res.output_dir),
        "tasks": {n: {"n_items": t.n_items, "metrics": {m: [v.value, list(v.ci95) if v.ci95 else None, v.direction]
                                                      for m, v in t.metrics.items()}} for n, t in res.tasks.items()},
        "samples": [[s.task, s.id, s.status, s.gold, s.pred, s.values] for s in res.samples],
        "same_as_load": glotbench.load_result(res.output_dir) == res,
    }))
""")


def evaluate_in_subprocess(cwd, **kw) -> dict:
    r = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(kw)], cwd=cwd, capture_output=True, text=True,
                       timeout=600, env={**os.environ, "NO_COLOR": "1"})
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def check_against_run_dir(out: dict, cwd) -> None:
    from pathlib import Path

    run = Path(cwd) / out["output_dir"]
    results = json.loads((run / "results.json").read_text())
    assert out["fingerprint"] == results["fingerprint"]
    for name, t in results["tasks"].items():
        for m, v in t["metrics"].items():
            assert out["tasks"][name]["metrics"][m] == [v["value"], v["ci95"], t["metric_definitions"][m]["direction"]]
    lines = [json.loads(x) for x in (run / "samples.jsonl").read_text().splitlines()]
    assert out["samples"] == [[s["task"], s["sample_id"], s["status"], s["gold"], s["pred"], s["values"]] for s in lines]
    assert out["same_as_load"] is True


def test_evaluate_against_stub_server(stub_server, data_root, tmp_path):
    base = stub_server("--answer", "A")
    out = evaluate_in_subprocess(tmp_path, model="openai:stub", tasks=["mm_eval.knowledge"], limit=10, base_url=base,
                                 bootstrap=50, max_retries=0, output="run")
    assert out["output_dir"] == "run"
    task = out["tasks"]["mm_eval.knowledge"]
    assert task["n_items"] == 10 and len(out["samples"]) == 10
    value, ci, direction = task["metrics"]["accuracy"]
    assert direction == "higher" and ci[0] <= value <= ci[1]
    # the stub answers A: accuracy is the share of items whose gold is A
    assert value == pytest.approx(sum(s[3] == "A" for s in out["samples"]) / 10, abs=1e-5)
    check_against_run_dir(out, tmp_path)


def test_evaluate_embedded_model(smollm2_path, data_root, tmp_path):
    out = evaluate_in_subprocess(tmp_path, model="embedded", tasks=["mm_eval.knowledge"], limit=2, max_tokens=4,
                                 bootstrap=20)
    assert out["output_dir"].startswith("runs")  # the CLI's default directory
    assert len(out["samples"]) == 2 and out["tasks"]["mm_eval.knowledge"]["n_items"] == 2
    check_against_run_dir(out, tmp_path)


def test_unknown_setting_is_refused_before_running(tmp_path):
    import glotbench

    with pytest.raises(Exception, match="no_such_setting"):
        glotbench.evaluate(tasks=["mm_eval.knowledge"], no_such_setting=1)
