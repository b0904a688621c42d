"""LLM-judge runs end to end: a real llama.cpp server answering and judging Chinese SimpleQA, a
`glotbench run` SIGKILLed while judging and resumed (no judge call repeated, one grade per item);
`glotbench judge` re-grading with a second judge without calling the model (also killed and
resumed); `glotbench compare-judges` over two runs."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
import yaml
from conftest_llama_server import embedded_llama_server

DEFS = Path(__file__).resolve().parents[1] / "src" / "glotbench" / "benchmarks" / "factuality" / "tasks"


def messages_hash(messages) -> str:
    return hashlib.sha256(json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class LoggingProxy:
    """A reverse proxy in front of an OpenAI-compatible server that logs the hash of every
    request's messages as it arrives, so a test can see exactly which calls reached the server."""

    def __init__(self, upstream: str):
        self.upstream = upstream.rstrip("/")
        self.log: list[str] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _relay(self, method: str):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if method == "POST":
                    try:
                        msgs = json.loads(body).get("messages")
                    except ValueError:
                        msgs = None
                    with proxy._lock:
                        proxy.log.append(messages_hash(msgs) if msgs is not None else "?")
                try:
                    r = httpx.request(method, proxy.upstream + self.path.removeprefix("/v1"), content=body or None,
                                      headers={"Content-Type": "application/json"}, timeout=300)
                except httpx.HTTPError:
                    self.send_response(502)
                    self.end_headers()
                    return
                self.send_response(r.status_code)
                self.send_header("Content-Type", r.headers.get("content-type", "application/json"))
                self.send_header("Content-Length", str(len(r.content)))
                self.end_headers()
                try:
                    self.wfile.write(r.content)
                except OSError:  # the client was killed
                    pass

            def do_GET(self):
                self._relay("GET")

            def do_POST(self):
                self._relay("POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def snapshot(self) -> list[str]:
        with self._lock:
            return list(self.log)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def journal_rows(db: Path, sql: str, args=()) -> list[tuple]:
    if not db.exists():
        return []
    con = sqlite3.connect(db)
    try:
        return con.execute(sql, args).fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        con.close()


def role_hashes(db: Path, role: str) -> list[str]:
    return [messages_hash(json.loads(r[0])["messages"])
            for r in journal_rows(db, "SELECT request FROM responses WHERE role=?", (role,))]


def role_keys(db: Path, role: str) -> list[str]:
    return [r[0] for r in journal_rows(db, "SELECT key FROM responses WHERE role=?", (role,))]


def small_csqa_yaml(tmp_path: Path, judge_max_tokens: int = 2) -> Path:
    spec = yaml.safe_load((DEFS / "chinese_simpleqa.yaml").read_text(encoding="utf-8"))
    spec["generation"]["max_tokens"] = 8
    spec["options"]["judge_max_tokens"] = judge_max_tokens
    path = tmp_path / "chinese_simpleqa.small.yaml"
    path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    return path


def wait_for(pred, timeout: float, proc: subprocess.Popen | None = None) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return True
        if proc is not None and proc.poll() is not None:
            return pred()
        time.sleep(0.05)
    return False


@pytest.mark.slow
def test_real_llama_judge_sigkill_while_judging_then_resume(data_root, tmp_path):
    items = 6
    # The grading prompt is ~2,800 tokens for this model; the server's prompt cache (--cache) keeps
    # its shared prefix, so only the first judge call pays for it.
    with embedded_llama_server(n_ctx=4096, extra_args=("--cache", "true")) as (base, gguf):
        proxy = LoggingProxy(base)
        try:
            out = tmp_path / "run"
            name = f"openai:{gguf.name}"
            cmd = [sys.executable, "-m", "glotbench", "run", "--model", name, "--base-url", proxy.base_url,
                   "--judge", name, "--judge-base-url", proxy.base_url, "--tasks", str(small_csqa_yaml(tmp_path)),
                   "--limit", str(items), "--concurrency", "1", "--max-retries", "1", "--output", str(out), "--no-progress"]
            env = {**os.environ, "OPENAI_API_KEY": "x"}
            proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            db = out / "journal.sqlite"
            landed = wait_for(lambda: len(role_hashes(db, "judge")) >= 2, 240, proc)
            proc.send_signal(signal.SIGKILL)
            _, err = proc.communicate()
            assert landed, f"no judge response journaled before the run ended: {err.decode()[-800:]}"
            judged_before = set(role_hashes(db, "judge"))
            answered_before = set(role_hashes(db, "model"))
            assert 2 <= len(judged_before) < items, "the kill should land while judging"
            time.sleep(0.5)  # a request on the wire at the kill still reaches the proxy's log
            n_log = len(proxy.snapshot())

            done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, done.stderr[-2000:]

            judged = role_hashes(db, "judge")
            assert len(judged) == len(set(judged)) == items  # items x 1 sample, no duplicate keys
            after = proxy.snapshot()[n_log:]
            assert not set(after) & judged_before, "a judge call journaled before the kill was sent again"
            assert not set(after) & answered_before, "a model call journaled before the kill was sent again"
            judge_after = [h for h in after if h in set(judged)]
            assert len(judge_after) == len(set(judge_after)) == items - len(judged_before)

            rows = journal_rows(db, "SELECT judge_id, task, sample_id, COUNT(*) FROM judgments GROUP BY 1, 2, 3")
            assert len(rows) == items and all(r[3] == 1 for r in rows) and len({r[0] for r in rows}) == 1
            results = json.loads((out / "results.json").read_text())
            t = results["tasks"]["chinese_simpleqa"]
            assert t["n_scored"] + t["n_errors"] == items and t["n_errors"] == 0
            f = t["factuality"]["overall"]
            assert f["n"] == items and sum(f["counts"].values()) == items
            for r in (json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()):
                (v,) = r["judgments"]  # the raw judge reply is kept next to its grade
                assert v["grade"] in ("CORRECT", "INCORRECT", "NOT_ATTEMPTED", "JUDGE_ERROR") and "raw" in v
                assert (r["pred"] is None) == (v["grade"] == "JUDGE_ERROR")
        finally:
            proxy.close()


# ---------------------------------------------------------------- judge / compare-judges (stub server)
def canned(tmp_path: Path, name: str, judge_rules: list[tuple[str, str]]) -> Path:
    """Model replies by question, judge replies by predicted answer (substring of the request)."""
    lines = [{"match": f"Predicted answer: {ans}", "response": reply} for ans, reply in judge_rules]
    lines += [{"match": q, "response": a} for q, a in
              [("capital of Hungary", "Budapest"), ("Hamlet", "Marlowe"), ("2+2", "no idea"), ("largest lake", "Balaton")]]
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    return path


CSV = "qid,problem,gold,topic\nq1,What is the capital of Hungary?,Budapest,geo\nq2,Who wrote Hamlet?,Shakespeare,lit\n" \
      "q3,What is 2+2?,4,math\nq4,What is the largest lake in Central Europe?,Balaton,geo\n"
TASK = """name: trivia
version: "1.0"
language: en
dataset: {format: csv, splits: {test: %s}}
fields: {id: qid, question: problem, target: gold, topic: topic}
prompt: {user: "{{ question }}"}
metrics: [factuality_co, factuality_f]
slice_by: [topic]
task_class: glotbench.benchmarks.factuality.task:SimpleQATask
options: {grader: chinese_simpleqa_en, judge_max_tokens: 4}
"""


def glot(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "glotbench", *args], env={**os.environ, "OPENAI_API_KEY": "x"},
                          capture_output=True, text=True, timeout=timeout)


def test_rejudge_and_compare_judges(data_root, tmp_path, stub_server):
    csv = tmp_path / "trivia.csv"
    csv.write_text(CSV, encoding="utf-8")
    task = tmp_path / "trivia.yaml"
    task.write_text(TASK % csv, encoding="utf-8")
    # judge A: strict; judge B: lenient (and unreadable once); judge C: agrees with A
    strict = [("Budapest", "A"), ("Marlowe", "B"), ("no idea", "C"), ("Balaton", "A")]
    lenient = [("Budapest", "A"), ("Marlowe", "A"), ("no idea", "dunno"), ("Balaton", "A")]
    model_url = stub_server("--responses", str(canned(tmp_path, "model.jsonl", strict)))
    judge_b_url = stub_server("--responses", str(canned(tmp_path, "b.jsonl", lenient)), "--delay", "0.3")
    runs = []
    for temp in ("0", "0.5"):
        out = tmp_path / f"run_t{temp}"
        done = glot("run", "--model", "openai:m", "--base-url", model_url, "--judge", "openai:judge-a",
                    "--judge-base-url", model_url, "--tasks", str(task), "--temperature", temp, "-o", str(out), "--no-progress")
        assert done.returncode == 0, done.stderr
        runs.append(out)
    model_calls = len(httpx.get(model_url.replace("/v1", "/_log")).json()["log"])
    assert model_calls == 2 * 4 * 2  # answers + judge A, two runs

    # judge B on run 1, killed once mid-way, resumed: no call repeated, the model never called
    cmd = [sys.executable, "-m", "glotbench", "judge", "rerun", str(runs[0]), "--judge", "openai:judge-b",
           "--judge-base-url", judge_b_url, "--concurrency", "1", "--no-progress"]
    proc = subprocess.Popen(cmd, env={**os.environ, "OPENAI_API_KEY": "x"}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    db = runs[0] / "journal.sqlite"
    assert wait_for(lambda: len(role_keys(db, "judge")) >= 4 + 1, 60, proc)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    before = set(role_keys(db, "judge"))  # judge A's 4, then judge B's first ones
    assert 5 <= len(before) < 8
    time.sleep(0.5)
    n_log = len(httpx.get(judge_b_url.replace("/v1", "/_log")).json()["log"])
    done = subprocess.run(cmd, env={**os.environ, "OPENAI_API_KEY": "x"}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "judge requests sent" in done.stdout and "CO" in done.stdout
    log_b = httpx.get(judge_b_url.replace("/v1", "/_log")).json()["log"]
    assert len(log_b) - n_log == 8 - len(before)  # only the ungraded items were sent
    assert len(set(role_keys(db, "judge"))) == 8
    assert len(httpx.get(model_url.replace("/v1", "/_log")).json()["log"]) == model_calls  # model untouched

    res = json.loads((runs[0] / "results.json").read_text())
    judges = res["judges"]
    (ida,) = [j for j in judges if "judge-a" in j]
    (idb,) = [j for j in judges if "judge-b" in j]
    fa = judges[ida]["tasks"]["trivia"]["factuality"]["overall"]
    fb = judges[idb]["tasks"]["trivia"]["factuality"]["overall"]
    assert fa["counts"] == {"CORRECT": 2, "INCORRECT": 1, "NOT_ATTEMPTED": 1, "JUDGE_ERROR": 0}
    # the reference rule: a reply without A/B/C is "C" (NOT_ATTEMPTED), every item counted
    assert fb["counts"] == {"CORRECT": 3, "INCORRECT": 0, "NOT_ATTEMPTED": 1, "JUDGE_ERROR": 0}
    assert res["tasks"]["trivia"]["factuality"]["overall"]["counts"] == fa["counts"]  # the run's own table is kept
    rows = journal_rows(db, "SELECT judge_id, COUNT(*) FROM judgments GROUP BY 1")
    assert sorted(n for _, n in rows) == [4, 4]

    # a repeated `glotbench judge` sends nothing
    again = glot("judge", "rerun", str(runs[0]), "--judge", "openai:judge-b", "--judge-base-url", judge_b_url, "--no-progress")
    assert again.returncode == 0 and "4 already graded" in again.stdout
    assert len(httpx.get(judge_b_url.replace("/v1", "/_log")).json()["log"]) == len(log_b)

    # compare-judges needs both judges on both runs
    assert glot("judge", "rerun", str(runs[1]), "--judge", "openai:judge-b", "--judge-base-url", judge_b_url,
                "--no-progress").returncode == 0
    out_json = tmp_path / "cmp.json"
    cmp = glot("judge", "compare", str(runs[0]), str(runs[1]), "--json", str(out_json))
    assert cmp.returncode == 0, cmp.stderr
    assert "Kendall" in cmp.stdout and "Cohen" in cmp.stdout and "temperature=0.5" in cmp.stdout
    r = json.loads(out_json.read_text())["trivia"]
    assert len(r["models"]) == 2 and len(r["judges"]) == 2
    (kappa,) = r["cohen_kappa"]
    # per run: judge A says C,I,N,C; judge B, read by the reference rule (a reply without A/B/C is
    # "C"), says C,C,N,C -> 4 comparable items, agree on 3
    assert kappa["n_items"] == 8 and kappa["n_excluded"] == 0 and kappa["agreement"] == pytest.approx(6 / 8)
    (tau,) = r["kendall_tau"]
    assert tau["n_models"] == 2
