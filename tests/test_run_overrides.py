"""`--system-prompt`, `--gen-kwargs` and `--chat-template` override the task and model defaults, reach the
request (the stub server's log of request bodies), are part of the fingerprint and show in
results.json; each run in a fresh `glotbench run` process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path


def _glotbench(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "glotbench", *args], capture_output=True, text=True, timeout=600,
                          cwd=cwd, env={**os.environ, "OPENAI_API_KEY": "x", "COLUMNS": "200", "NO_COLOR": "1"})


def _bodies(base: str) -> list[dict]:
    with urllib.request.urlopen(base.removesuffix("/v1") + "/_log") as r:
        return [e["body"] for e in json.load(r)["log"] if isinstance(e.get("body"), dict)]


def test_system_prompt_and_gen_kwargs_reach_the_request(stub_server, data_root, tmp_path):
    base = stub_server("--answer", "A", "--log-bodies")
    common = ["--model", "openai:stub", "--base-url", base, "--tasks", "mm_eval.syntax", "--limit", "3", "--no-progress"]
    plain = _glotbench("run", *common, "-o", str(tmp_path / "plain"), cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    n_before = len(_bodies(base))
    r = _glotbench("run", *common, "-o", str(tmp_path / "over"), "--system-prompt", "Te egy bíró vagy.",
                   "--gen-kwargs", "temperature=0.7,top_k=20,max_tokens=33,repetition_penalty=1.1,logprobs=false",
                   cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    bodies = _bodies(base)[n_before:]
    assert len(bodies) == 3
    for b in bodies:
        system = [m for m in b["messages"] if m["role"] == "system"]
        assert system == [{"role": "system", "content": "Te egy bíró vagy."}]  # replaces the task's own
        assert b["temperature"] == 0.7 and b["max_tokens"] == 33
        assert b["top_k"] == 20 and isinstance(b["top_k"], int)  # typed values
        assert b["repetition_penalty"] == 1.1 and b["logprobs"] is False
    res = json.loads((tmp_path / "over" / "results.json").read_text())
    res0 = json.loads((tmp_path / "plain" / "results.json").read_text())
    assert res["settings"]["system_prompt"] == "Te egy bíró vagy."
    assert res["settings"]["gen_kwargs"] == {"temperature": 0.7, "top_k": 20, "max_tokens": 33,
                                             "repetition_penalty": 1.1, "logprobs": False}
    assert "system_prompt" not in res0["settings"]  # unset overrides leave old fingerprints alone
    assert res["fingerprint"] != res0["fingerprint"]
    t, t0 = res["tasks"]["mm_eval.syntax"]["fingerprint"], res0["tasks"]["mm_eval.syntax"]["fingerprint"]
    assert t["settings"] != t0["settings"] and t["data"] == t0["data"]


def test_changed_system_prompt_changes_fingerprint_and_refuses_to_mix(stub_server, data_root, tmp_path):
    base = stub_server("--answer", "A", "--log-bodies")
    common = ["--model", "openai:stub", "--base-url", base, "--tasks", "mm_eval.syntax", "--limit", "2", "--no-progress",
              "-o", str(tmp_path / "run")]
    first = _glotbench("run", *common, "--system-prompt", "one", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    before = (tmp_path / "run" / "results.json").read_text()
    n = len(_bodies(base))
    other = _glotbench("run", *common, "--system-prompt", "two", cwd=tmp_path)
    assert other.returncode == 2
    lines = other.stderr.strip().splitlines()
    assert len(lines) == 1 and "--system-prompt" in lines[0] and "'one'" in lines[0] and "'two'" in lines[0]
    assert len(_bodies(base)) == n  # nothing sent
    assert (tmp_path / "run" / "results.json").read_text() == before
    gk = _glotbench("run", *common, "--system-prompt", "one", "--gen-kwargs", "top_k=5", cwd=tmp_path)
    assert gk.returncode == 2 and "--gen-kwargs" in gk.stderr
    same = _glotbench("run", *common, "--system-prompt", "one", cwd=tmp_path)  # the same command resumes
    assert same.returncode == 0 and "no model calls" in same.stderr, same.stderr


def test_bad_gen_kwargs_and_chat_template_on_a_server_are_one_line(stub_server, data_root, tmp_path):
    base = stub_server("--answer", "A", "--log-bodies")
    common = ["--model", "openai:stub", "--base-url", base, "--tasks", "mm_eval.syntax", "--limit", "2", "--no-progress"]
    bad = _glotbench("run", *common, "--gen-kwargs", "temperature=hot", cwd=tmp_path)
    assert bad.returncode == 2 and "temperature='hot'" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    tpl = tmp_path / "t.jinja"
    tpl.write_text("{% for m in messages %}{{ m.content }}\n{% endfor %}")
    srv = _glotbench("run", *common, "--chat-template", str(tpl), cwd=tmp_path)
    assert srv.returncode == 2 and "--chat-template" in srv.stderr and "llama-server" in srv.stderr, srv.stderr
    assert _bodies(base) == []  # refused before any request
    broken = tmp_path / "broken.jinja"
    broken.write_text("{% for m in messages %}")
    b = _glotbench("run", "--model", "embedded", "--tasks", "mm_eval.syntax", "--limit", "1", "--chat-template",
                   str(broken), cwd=tmp_path)
    assert b.returncode == 2 and str(broken) in b.stderr and len(b.stderr.strip().splitlines()) == 1, b.stderr


def test_chat_template_file_renders_embedded_prompts(data_root, tmp_path, smollm2_path):
    """The embedded model renders chat prompts with the --chat-template file: a template that drops the
    system message and every role marker sends fewer prompt tokens; it is in the model fingerprint."""
    tpl = tmp_path / "bare.jinja"
    tpl.write_text("{% for m in messages %}{% if m.role != 'system' %}{{ m.content }}\n{% endif %}{% endfor %}"
                   "Answer:")
    common = ["--model", "embedded", "--tasks", "mm_eval.syntax", "--limit", "2", "--max-tokens", "2", "--no-progress"]
    own = _glotbench("run", *common, "-o", str(tmp_path / "own"), cwd=tmp_path)
    custom = _glotbench("run", *common, "-o", str(tmp_path / "custom"), "--chat-template", str(tpl), cwd=tmp_path)
    assert own.returncode == 0 and custom.returncode == 0, own.stderr + custom.stderr
    rec_own = [json.loads(x) for x in (tmp_path / "own" / "samples.jsonl").read_text().splitlines()]
    rec_cus = [json.loads(x) for x in (tmp_path / "custom" / "samples.jsonl").read_text().splitlines()]
    for a, b in zip(rec_own, rec_cus):
        # SmolLM2's template adds <|im_start|>system ... <|im_end|> and role markers: the bare one has fewer tokens
        assert b["outputs"][0]["input_tokens"] < a["outputs"][0]["input_tokens"] - 5
    res = json.loads((tmp_path / "custom" / "results.json").read_text())
    res0 = json.loads((tmp_path / "own" / "results.json").read_text())
    assert res["settings"]["chat_template"] == str(tpl) and "chat_template_sha256" in res["model"]
    assert res["tasks"]["mm_eval.syntax"]["fingerprint"]["model"] != res0["tasks"]["mm_eval.syntax"]["fingerprint"]["model"]


def test_system_prompt_replaces_the_task_system_text_in_plain_and_loglikelihood_prompts(data_root, tmp_path):
    """--write-out shows the requests without loading a model: the loglikelihood context and the
    chat messages carry the override instead of MM-Eval's own system text."""
    own = "You are an AI assistant proficient in Mongolian."
    for mode in ("loglikelihood", "generate"):
        base = _glotbench("run", "--tasks", "mm_eval.knowledge", "--mode", mode, "--write-out", "1", cwd=tmp_path)
        over = _glotbench("run", "--tasks", "mm_eval.knowledge", "--mode", mode, "--write-out", "1",
                          "--system-prompt", "Zorilgo: negen useg.", cwd=tmp_path)
        assert base.returncode == 0 and over.returncode == 0, base.stderr + over.stderr
        assert own in base.stdout and own not in over.stdout and "Zorilgo: negen useg." in over.stdout
