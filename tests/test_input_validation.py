"""Finding 5: every bad input gives one line naming the file (and record or field) and exit 2
before any model call; redirects to another host are refused. Each case runs the real CLI in a
fresh subprocess against the fault stub, whose request log must stay empty."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import httpx
import pytest

TASK = """\
name: t.check
version: "1"
language: en
dataset:
  format: {fmt}
  splits: {{test: {data}}}
  encoding: {encoding}
fields:
  question: question
  hint: hint
  choices: choices
  target: answer
output_type: multiple_choice
prompt:
  user: "{{{{ question }}}} {{{{ hint }}}}\\n{{{{ choices_block }}}}"
extractor: {{name: choice}}
scorer: label
{extra}
"""

GOOD = [{"question": f"q{i}", "hint": "h", "choices": ["x", "y"], "answer": "A"} for i in range(3)]


def _write_task(tmp_path, records=None, *, raw: bytes | None = None, fmt="jsonl", encoding="utf-8", extra=""):
    data = tmp_path / f"data.{fmt}"
    if raw is not None:
        data.write_bytes(raw)
    elif fmt == "jsonl":
        data.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    else:
        data.write_text(json.dumps(records), encoding="utf-8")
    task = tmp_path / "task.yaml"
    task.write_text(TASK.format(fmt=fmt, data=str(data), encoding=encoding, extra=extra), encoding="utf-8")
    return task, data


def _run(base, task, *extra, tmp_path):
    cmd = [sys.executable, "-m", "glotbench", "run", "--model", "openai:stub", "--base-url", base,
           "--tasks", str(task), "--output", str(tmp_path / "run"), "--no-progress", *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env={**os.environ, "OPENAI_API_KEY": "x"})


def _assert_one_line_exit_2(done, base, *words):
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, done.stderr
    for w in words:
        assert w in lines[0], lines[0]
    assert httpx.get(base.replace("/v1", "/_log")).json()["log"] == [], "a model call was made"


@pytest.fixture()
def base(stub_server):
    return stub_server()


def test_null_prompt_field_is_an_error(base, tmp_path):
    recs = [*GOOD, {"question": "q", "hint": None, "choices": ["x", "y"], "answer": "A"}]
    task, data = _write_task(tmp_path, recs)
    _assert_one_line_exit_2(_run(base, task, tmp_path=tmp_path), base, str(data), "record 3", "'hint'", "null")


def test_missing_optional_prompt_field_is_an_error(base, tmp_path):
    recs = [*GOOD, {"question": "q", "choices": ["x", "y"], "answer": "A"}]
    task, data = _write_task(tmp_path, recs)
    _assert_one_line_exit_2(_run(base, task, tmp_path=tmp_path), base, str(data), "record 3", "'hint'")


def test_explicit_default_fills_a_null_prompt_field(base, tmp_path):
    recs = [*GOOD, {"question": "q", "hint": None, "choices": ["x", "y"], "answer": "A"}]
    task, _ = _write_task(tmp_path, recs, extra='default: {hint: ""}')
    done = _run(base, task, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    prompts = [json.loads(x)["prompt"] for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert not any("None" in m["content"] for p in prompts for m in p)


def test_null_option_is_an_error(base, tmp_path):
    recs = [*GOOD, {"question": "q", "hint": "h", "choices": ["x", None], "answer": "A"}]
    task, data = _write_task(tmp_path, recs)
    _assert_one_line_exit_2(_run(base, task, tmp_path=tmp_path), base, str(data), "record 3", "option 1 is null")


def test_empty_dataset_is_an_error(base, tmp_path):
    task, data = _write_task(tmp_path, raw=b"\n\n")
    _assert_one_line_exit_2(_run(base, task, tmp_path=tmp_path), base, str(data), "no records")


@pytest.mark.parametrize("flag, value, field", [("--max-tokens", "-5", "max_tokens"), ("--temperature", "-0.5", "temperature"),
                                                 ("--max-tokens", "0", "max_tokens")])
def test_bad_sampling_value_on_the_command_line(base, tmp_path, flag, value, field):
    task, _ = _write_task(tmp_path, GOOD)
    _assert_one_line_exit_2(_run(base, task, flag, value, tmp_path=tmp_path), base, f"'{field}'")


def test_bad_sampling_value_in_the_task_file(base, tmp_path):
    task, _ = _write_task(tmp_path, GOOD, extra="generation: {max_tokens: -1}")
    _assert_one_line_exit_2(_run(base, task, tmp_path=tmp_path), base, str(task), "generation.max_tokens")


def test_bad_sampling_value_in_a_run_config(base, tmp_path):
    task, _ = _write_task(tmp_path, GOOD)
    cfg = tmp_path / "run.yaml"
    cfg.write_text(f"tasks: [{task}]\ntemperature: -1\n")
    _assert_one_line_exit_2(_run(base, task, "--config", str(cfg), tmp_path=tmp_path), base, str(cfg), "temperature")


def test_duplicate_yaml_key_is_an_error(base, tmp_path):
    task, _ = _write_task(tmp_path, GOOD, extra="scorer: label")  # `scorer:` given twice
    _assert_one_line_exit_2(_run(base, task, tmp_path=tmp_path), base, str(task), "duplicate key 'scorer'", "line")


def test_one_option_item_warns(base, tmp_path):
    recs = [*GOOD, {"question": "q", "hint": "h", "choices": ["only"], "answer": "A"}]
    task, data = _write_task(tmp_path, recs)
    done = _run(base, task, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    warn = [x for x in done.stderr.splitlines() if x.startswith("warning")]
    assert len(warn) == 1 and "record 3" in warn[0] and "only one option" in warn[0] and str(data) in warn[0]


def test_non_utf8_data_names_file_and_line(base, tmp_path):
    raw = b"".join(json.dumps(r).encode() + b"\n" for r in GOOD) + b'{"question": "caf\xe9", "hint": "h"}\n'
    task, data = _write_task(tmp_path, raw=raw)
    _assert_one_line_exit_2(_run(base, task, tmp_path=tmp_path), base, str(data), "line 4", "not valid utf-8")


def test_non_utf8_json_array_names_file_and_line(base, tmp_path):
    raw = json.dumps(GOOD, indent=1).encode().replace(b'"q2"', b'"q\xff"')
    task, data = _write_task(tmp_path, raw=raw, fmt="json")
    _assert_one_line_exit_2(_run(base, task, tmp_path=tmp_path), base, str(data), "line ", "not valid utf-8")


def test_deep_nesting_names_file_and_line(base, tmp_path):
    deep = '{"question": "q", "hint": "h", "x": ' + "[" * 100000 + "]" * 100000 + "}"
    raw = "".join(json.dumps(r) + "\n" for r in GOOD).encode() + deep.encode() + b"\n"
    task, data = _write_task(tmp_path, raw=raw)
    _assert_one_line_exit_2(_run(base, task, tmp_path=tmp_path), base, str(data), "line 4", "nested too deeply")


def test_unknown_encoding_names_file(base, tmp_path):
    task, data = _write_task(tmp_path, GOOD, encoding="klingon-8")
    _assert_one_line_exit_2(_run(base, task, tmp_path=tmp_path), base, str(data), "unknown encoding 'klingon-8'")


def test_redirect_to_another_host_is_refused(stub_server):
    from glotbench.errors import PermanentModelError
    from glotbench.models.base import GenRequest
    from glotbench.models.openai_compat import OpenAICompatModel

    base = stub_server("--bad", "redirect-other")
    m = OpenAICompatModel("stub", base_url=base, api_key_env="GLOTBENCH_TEST_NO_SUCH_KEY")

    async def go():
        try:
            await m.generate(GenRequest(prompt="x"))
        finally:
            await m.aclose()

    with pytest.raises(PermanentModelError, match=r"redirected \(HTTP 307\) to another host, http://localhost:.*refused"):
        asyncio.run(go())
    log = httpx.get(base.replace("/v1", "/_log")).json()["log"]
    assert len(log) == 1  # nothing followed the redirect


def test_same_host_redirect_keeps_the_post(stub_server):
    from glotbench.models.base import GenRequest
    from glotbench.models.openai_compat import OpenAICompatModel

    base = stub_server("--bad", "redirect-same", "--answer", "Z")
    m = OpenAICompatModel("stub", base_url=base, api_key_env="GLOTBENCH_TEST_NO_SUCH_KEY")

    async def go():
        try:
            return await m.generate(GenRequest(messages=({"role": "user", "content": "hi"},)))
        finally:
            await m.aclose()

    assert asyncio.run(go()).text == "Z"
    log = httpx.get(base.replace("/v1", "/_log")).json()["log"]
    assert [e["status"] for e in log] == [307, "redirected"] and log[1]["method"] == "POST"


def test_anthropic_redirect_is_refused_and_the_key_stays_home():
    """The Anthropic SDK follows redirects by default, with x-api-key attached: ours does not."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from glotbench.errors import PermanentModelError
    from glotbench.models.anthropic_api import AnthropicModel

    seen = []

    class Other(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            seen.append(dict(self.headers))
            self.send_response(500)
            self.end_headers()

    other = ThreadingHTTPServer(("127.0.0.1", 0), Other)

    class Redirect(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(307)
            self.send_header("Location", f"http://localhost:{other.server_address[1]}/v1/messages")
            self.send_header("Content-Length", "0")
            self.end_headers()

    home = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    for s in (other, home):
        threading.Thread(target=s.serve_forever, daemon=True).start()
    try:
        os.environ["GLOTBENCH_TEST_ANTHROPIC_KEY"] = "sk-secret"
        m = AnthropicModel("m", base_url=f"http://127.0.0.1:{home.server_address[1]}",
                           api_key_env="GLOTBENCH_TEST_ANTHROPIC_KEY")

        async def go():
            try:
                await m.generate(GenRequest_chat())
            finally:
                await m.aclose()

        with pytest.raises(PermanentModelError, match="HTTP 307"):
            asyncio.run(go())
        assert seen == []
    finally:
        os.environ.pop("GLOTBENCH_TEST_ANTHROPIC_KEY", None)
        for s in (other, home):
            s.shutdown()
            s.server_close()


def GenRequest_chat():
    from glotbench.models.base import GenRequest

    return GenRequest(messages=({"role": "user", "content": "hi"},), max_tokens=5)
