"""`--log-to mlflow:URI` / `--log-to wandb`: a real run against the stub server logged to a local MLflow
file store (read back with MLflow's own client) and to W&B in offline mode (read back from the
offline run folder); a missing tracker package is one line naming the extra, before any request."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

RUN = ["--model", "openai:stub", "--tasks", "mm_eval.syntax", "--limit", "4", "--no-progress", "--bootstrap", "50"]


def _glotbench(*args: str, cwd: Path, env: dict | None = None, pre: str = "") -> subprocess.CompletedProcess:
    code = f"import sys; {pre}\nfrom glotbench.cli import main; sys.argv = ['glotbench', *sys.argv[1:]]; main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=600, cwd=cwd,
                          env={**os.environ, "OPENAI_API_KEY": "x", "NO_COLOR": "1", **(env or {})})


def _requests(base: str) -> int:
    with urllib.request.urlopen(base.removesuffix("/v1") + "/_log") as r:
        return len(json.load(r)["log"])


@pytest.mark.skipif(importlib.util.find_spec("mlflow") is None, reason="pip install 'glotbench[mlflow]'")
def test_mlflow_file_store(stub_server, data_root, tmp_path, monkeypatch):
    base = stub_server("--answer", "A")
    store = f"file:{tmp_path / 'mlruns'}"
    # MLflow 3 keeps the file store in maintenance mode: without the opt-in it refuses, in one line
    refused = _glotbench("run", *RUN, "--base-url", base, "-o", str(tmp_path / "run"), "--log-to", f"mlflow:{store}",
                         cwd=tmp_path, env={"MLFLOW_ALLOW_FILE_STORE": "false"})
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr[-2000:]
    last = refused.stderr.strip().splitlines()[-1]
    assert last.startswith("error: --log-to mlflow:file:") and "MLFLOW_ALLOW_FILE_STORE" in last
    assert "rerun the same command" in last
    assert (tmp_path / "run" / "results.json").is_file()  # the run is not lost
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    r = _glotbench("run", *RUN, "--base-url", base, "-o", str(tmp_path / "run"), "--log-to", f"mlflow:{store}",
                   cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "no model calls" in r.stderr  # the rerun only logged
    assert "logged to mlflow run" in r.stderr
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=store)
    exp = client.get_experiment_by_name("glotbench")
    [run] = client.search_runs([exp.experiment_id])
    assert run.data.tags["glotbench.fingerprint"] == res["fingerprint"]
    assert run.data.params["settings.limit"] == "4" and run.data.params["model.model_id"] == res["model"]["model_id"]
    acc = res["tasks"]["mm_eval.syntax"]["metrics"]["accuracy"]
    assert run.data.metrics["mm_eval.syntax/accuracy"] == pytest.approx(acc["value"])
    assert run.data.metrics["mm_eval.syntax/accuracy_ci_low"] == pytest.approx(acc["ci95"][0])
    assert run.data.metrics["mm_eval.syntax/accuracy_ci_high"] == pytest.approx(acc["ci95"][1])
    assert run.data.metrics["mm_eval.syntax/n_scored"] == 4
    names = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"results.json", "samples.jsonl", "report.html"} <= names
    got = Path(client.download_artifacts(run.info.run_id, "results.json", str(tmp_path / "dl")))
    assert json.loads(got.read_text())["fingerprint"] == res["fingerprint"]


@pytest.mark.skipif(importlib.util.find_spec("wandb") is None, reason="pip install 'glotbench[wandb]'")
def test_wandb_offline(stub_server, data_root, tmp_path):
    base = stub_server("--answer", "A")
    env = {"WANDB_MODE": "offline", "WANDB_DIR": str(tmp_path / "wb"), "WANDB_SILENT": "true",
           "WANDB_DISABLE_GIT": "true", "WANDB_CONSOLE": "off"}
    (tmp_path / "wb").mkdir()
    r = _glotbench("run", *RUN, "--base-url", base, "-o", str(tmp_path / "run"), "--log-to", "wandb:gb-test",
                   cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    [run_dir] = list((tmp_path / "wb" / "wandb").glob("offline-run-*"))
    [log] = list(run_dir.glob("run-*.wandb"))  # the offline run log `wandb sync` uploads
    summary, history, config = {}, {}, {}
    for rec in wandb_records(log):
        kind = rec.WhichOneof("record_type")
        if kind == "summary":
            summary.update({_key(i): json.loads(i.value_json) for i in rec.summary.update})
        elif kind == "history":
            history.update({_key(i): json.loads(i.value_json) for i in rec.history.item})
        elif kind == "run":
            config.update({i.key: json.loads(i.value_json) for i in rec.run.config.update})
    acc = res["tasks"]["mm_eval.syntax"]["metrics"]["accuracy"]
    for got in (summary, history):
        assert got["mm_eval.syntax/accuracy"] == pytest.approx(acc["value"])
        assert got["mm_eval.syntax/accuracy_ci_low"] == pytest.approx(acc["ci95"][0])
        assert got["mm_eval.syntax/accuracy_ci_high"] == pytest.approx(acc["ci95"][1])
    assert summary["glotbench.fingerprint"] == res["fingerprint"]
    assert config["settings.limit"] == "4" and config["model.model_id"] == res["model"]["model_id"]


def _key(item) -> str:
    return item.key or "/".join(item.nested_key)  # "task/metric" is stored as a nested key


def wandb_records(path: Path) -> list:
    """The records of an offline run's .wandb file (W&B's LevelDB-style log: 7-byte file header, 32 KiB
    blocks, 7-byte chunk headers crc/length/type), parsed with wandb's own protobuf Record class."""
    import struct

    from wandb.proto import wandb_internal_pb2 as pb

    data = path.read_bytes()
    assert data[:4] == b":W&B"
    pos, block, buf, chunks = 7, 32768, b"", []
    while pos + 7 <= len(data):
        if block - pos % block < 7:  # a block's tail too short for a header is padding
            pos += block - pos % block
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        chunk, pos = data[pos + 7:pos + 7 + length], pos + 7 + length
        if kind == 1:
            chunks.append(chunk)
        elif kind == 2:
            buf = chunk
        elif kind == 3:
            buf += chunk
        elif kind == 4:
            chunks.append(buf + chunk)
    out = []
    for c in chunks:
        rec = pb.Record()
        rec.ParseFromString(c)
        out.append(rec)
    return out


@pytest.mark.parametrize("tracker", ["mlflow", "wandb"])
def test_missing_tracker_package_is_one_line_before_any_request(stub_server, data_root, tmp_path, tracker):
    base = stub_server("--answer", "A")
    r = _glotbench("run", *RUN, "--base-url", base, "--log-to", tracker, cwd=tmp_path,
                   pre=f"sys.modules[{tracker!r}] = None  # the package is absent")
    assert r.returncode == 2, r.stderr[-2000:]
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and f"glotbench[{tracker}]" in lines[0], lines
    assert _requests(base) == 0
    bad = _glotbench("run", *RUN, "--base-url", base, "--log-to", "neptune", cwd=tmp_path)
    assert bad.returncode == 2 and "unknown tracker" in bad.stderr
