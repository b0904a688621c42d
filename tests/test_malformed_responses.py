"""Finding 1: a malformed HTTP 200 answer is a per-item error carrying the server's own words,
retried like a transient fault, never the end of the run (fault stub, real HTTP)."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from glotbench.engine.config import RunConfig
from glotbench.engine.session import run_evaluation
from glotbench.errors import TransientModelError
from glotbench.models.base import GenRequest
from glotbench.models.openai_compat import OpenAICompatModel

CHAT = GenRequest(messages=({"role": "user", "content": "2+2?"},), max_tokens=5)
PLAIN = GenRequest(prompt="2+2=", max_tokens=5)


def _model(base: str, **kw) -> OpenAICompatModel:
    return OpenAICompatModel("stub", base_url=base, api_key_env="GLOTBENCH_TEST_NO_SUCH_KEY", **kw)


async def _gen(model, req):
    try:
        return await model.generate(req)
    finally:
        await model.aclose()


@pytest.mark.parametrize("kind, words", [
    ("choices-str", "'choices' must be a non-empty list, got str"),
    ("choices-dict", "'choices' must be a non-empty list, got dict"),
    ("message-str", "'choices[0].message' must be an object, got str"),
    ("usage-str", "'usage' must be an object, got str"),
    ("content-int", "'choices[0].message.content' must be a string, got int"),
    ("content-list", "'choices[0].message.content' is a list holding int"),
    ("not-json", "not JSON"),
    ("error-200", "quota exceeded for this key (stub)"),
])
def test_each_malformed_body_is_a_transient_error_naming_the_problem(stub_server, kind, words):
    base = stub_server("--bad", kind)
    with pytest.raises(TransientModelError) as info:
        asyncio.run(_gen(_model(base), CHAT))
    msg = str(info.value)
    assert words in msg and "\n" not in msg
    assert base in msg  # names the server


def test_plain_completion_with_int_text_is_malformed(stub_server):
    base = stub_server("--bad", "content-int")
    with pytest.raises(TransientModelError, match=r"'choices\[0\].text' must be a string, got int"):
        asyncio.run(_gen(_model(base, chat=False), PLAIN))


def test_content_parts_are_joined():
    from glotbench.models.response_shape import chat_fields

    data = {"choices": [{"message": {"content": [{"type": "text", "text": "B"}, {"type": "image_url"}, "!"]}}]}
    assert chat_fields(data, what="x")["text"] == "B!"


def test_one_malformed_item_in_40_finishes_with_one_error(stub_server, data_root, tmp_path):
    """The run from the report: 1 malformed answer in 40 used to crash mm_eval.knowledge every time."""
    base = stub_server("--bad", "choices-str", "--bad-every", "40", "--answer", "A")
    cfg = RunConfig(model="openai:stub", base_url=base, tasks=["mm_eval.knowledge"], limit=40, concurrency=8,
                    max_retries=2, retry_base_delay=0.01, output=str(tmp_path / "run"), bootstrap=20)
    results, out = run_evaluation(cfg, show_progress=False)
    t = results["tasks"]["mm_eval.knowledge"]
    assert (t["n_scored"], t["n_errors"]) == (39, 1)
    log = httpx.get(base.replace("/v1", "/_log")).json()["log"]
    bad = [e for e in log if e.get("bad")]
    assert len(bad) == 3 and len({e["hash"] for e in bad}) == 1  # retried like a transient fault: 1 + 2 retries
    samples = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    err = next(s for s in samples if s["status"] == "error")
    assert "'choices' must be a non-empty list, got str" in err["error"] and err["attempts"] == 3


def test_error_in_200_body_keeps_the_servers_message_in_the_item(stub_server, data_root, tmp_path):
    base = stub_server("--bad", "error-200", "--bad-every", "5")
    cfg = RunConfig(model="openai:stub", base_url=base, tasks=["mm_eval.semantics"], limit=10, concurrency=2,
                    max_retries=0, output=str(tmp_path / "run"), bootstrap=20)
    results, out = run_evaluation(cfg, show_progress=False)
    assert results["tasks"]["mm_eval.semantics"]["n_errors"] == 2
    errors = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    errors = [s for s in errors if s["status"] == "error"]
    assert all("quota exceeded for this key (stub)" in s["error"] for s in errors)


def test_unexpected_exception_from_a_backend_is_an_item_error(data_root, tmp_path):
    """Whatever a backend raises (here a bug: KeyError) ends that item, not the run."""
    from glotbench.models.base import GenResult, Model

    class Flaky(Model):
        model_id = "flaky"

        def __init__(self):
            self.n = 0

        async def generate(self, request):
            self.n += 1
            if "GOLD" not in str(request) and self.n % 7 == 0:
                raise KeyError("choices")
            return GenResult(text="A")

    cfg = RunConfig(model="flaky", tasks=["mm_eval.syntax"], limit=21, concurrency=1, output=str(tmp_path / "r"),
                    bootstrap=20)
    results, _ = run_evaluation(cfg, show_progress=False, model=Flaky())
    t = results["tasks"]["mm_eval.syntax"]
    assert t["n_errors"] == 3 and t["n_scored"] == 18


@pytest.mark.parametrize("body, words", [
    ({"content": "A"}, "'content' must be a list of blocks, got str"),
    ({"content": [{"type": "text", "text": 42}]}, "a text block's 'text' must be a string, got int"),
    ({"content": [{"type": "text", "text": "ok"}], "usage": {"input_tokens": "x", "output_tokens": 1}},
     "'usage.input_tokens' must be an integer"),
])
def test_anthropic_malformed_body_is_a_transient_error(body, words):
    """The same rule for the Anthropic backend (the official SDK does not validate the body)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from glotbench.models.anthropic_api import AnthropicModel

    payload = json.dumps({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                          "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}, **body}).encode()

    class H(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        m = AnthropicModel("m", base_url=f"http://127.0.0.1:{server.server_address[1]}", api_key_env="NO_SUCH_KEY_X")

        async def go():
            try:
                await m.generate(CHAT)
            finally:
                await m.aclose()

        with pytest.raises(TransientModelError, match="malformed") as info:
            asyncio.run(go())
        assert words in str(info.value)
    finally:
        server.shutdown()
        server.server_close()
