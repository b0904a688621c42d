"""OpenAI-compatible and Anthropic backends against a tiny local HTTP stub: request construction,
response parsing and error mapping (the only place a fake server is used: faults on purpose)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from glotbench.errors import ModelError, PermanentModelError, TransientModelError
from glotbench.models.anthropic_api import AnthropicModel
from glotbench.models.base import GenRequest, LoglikelihoodRequest
from glotbench.models.openai_compat import OpenAICompatModel

ECHO_TEXT = ["Question", ":", " 2", "+", "2", "=", " 4", "\n"]


def _echo_logprobs() -> dict:
    offsets, pos = [], 0
    for t in ECHO_TEXT:
        offsets.append(pos)
        pos += len(t)
    return {"tokens": ECHO_TEXT, "text_offset": offsets,
            "token_logprobs": [None, -1.0, -2.0, -1.0, -1.0, -0.5, -0.25, -3.0],
            "top_logprobs": [None, {":": -1.0}, {" 2": -2.0}, {"+": -1.0}, {"2": -1.0}, {"=": -0.5},
                             {" 4": -0.25}, {"\n": -3.0}]}


class Handler(BaseHTTPRequestHandler):
    requests: list = []  # noqa: RUF012  (shared log of what the stub received)

    def log_message(self, *args):  # keep pytest output clean
        pass

    def _send(self, status: int, payload: dict):
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
            pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        Handler.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
        model = body.get("model", "")
        if model.startswith("status-"):
            status = int(model.split("-")[1])
            return self._send(status, {"error": {"message": f"stub says {status}", "type": "stub_error"},
                                       "type": "error"})
        if model == "slow":
            time.sleep(2)
        if self.path.endswith("/chat/completions"):
            return self._send(200, {
                "id": "chat-1", "object": "chat.completion", "created": 0, "model": model,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": "Улаанбаатар",
                                         "reasoning_content": "<думаю> capital of Mongolia"}}],
                "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}})
        if self.path.endswith("/completions"):
            lp = _echo_logprobs() if body.get("echo") else None
            text = "".join(ECHO_TEXT) if body.get("echo") else " done"
            return self._send(200, {
                "id": "cmpl-1", "object": "text_completion", "created": 0, "model": model,
                "choices": [{"index": 0, "text": text, "finish_reason": "length", "logprobs": lp}],
                "usage": {"prompt_tokens": 7, "completion_tokens": 1, "total_tokens": 8}})
        if self.path.endswith("/messages"):
            return self._send(200, {
                "id": "msg_1", "type": "message", "role": "assistant", "model": model,
                "content": [{"type": "thinking", "thinking": "Let me think.", "signature": "sig"},
                            {"type": "text", "text": "Budapest"}],
                "stop_reason": "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": 20, "output_tokens": 5}})
        self._send(404, {"error": {"message": "no such path"}})


@pytest.fixture(scope="module")
def stub():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def _clear_requests():
    Handler.requests.clear()


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def run(coro):
    return asyncio.run(coro)


def oai(stub, name="m", **kw) -> OpenAICompatModel:
    return OpenAICompatModel(name, base_url=f"{stub}/v1", api_key_env="GLOTBENCH_TEST_NO_SUCH_KEY", **kw)


CHAT = GenRequest(messages=({"role": "system", "content": "Be brief."}, {"role": "user", "content": "Нийслэл?"}),
                  max_tokens=50, temperature=0.3, top_p=0.9, stop=("\n\n",), seed=5, sample_index=2,
                  extra=(("frequency_penalty", 0.5),))


# ---------------------------------------------------------------- OpenAI-compatible
def test_openai_chat_request_and_reasoning(stub):
    m = oai(stub, "qwen")
    res = run(m.generate(CHAT))
    assert res.text == "Улаанбаатар" and res.reasoning.endswith("capital of Mongolia")
    assert (res.input_tokens, res.output_tokens, res.finish_reason) == (11, 3, "stop")
    req = Handler.requests[-1]
    assert req["path"] == "/v1/chat/completions"
    body = req["body"]
    assert body["model"] == "qwen" and body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert (body["max_tokens"], body["temperature"], body["top_p"], body["stop"]) == (50, 0.3, 0.9, ["\n\n"])
    assert body["seed"] == 7  # seed + sample_index
    assert body["frequency_penalty"] == 0.5
    headers = {k.lower(): v for k, v in req["headers"].items()}
    assert headers["authorization"].startswith("Bearer ")  # a dummy key for keyless local servers
    assert m.model_id == f"openai:qwen@{stub}/v1"


def test_openai_plain_prompt_uses_completions(stub):
    res = run(oai(stub).generate(GenRequest(prompt="Once", max_tokens=4)))
    assert res.text == " done" and res.reasoning is None
    assert Handler.requests[-1]["path"] == "/v1/completions"
    assert "seed" not in Handler.requests[-1]["body"]


def test_openai_loglikelihood_needs_trust(stub):
    m = oai(stub)
    assert not m.supports_loglikelihood
    with pytest.raises(PermanentModelError, match="loglikelihood"):
        run(m.loglikelihood(LoglikelihoodRequest("Question: 2+2=", " 4")))
    assert Handler.requests == []


def test_openai_trusted_loglikelihood_sums_continuation_tokens(stub):
    m = oai(stub, logprobs_trusted=True)
    assert m.supports_loglikelihood
    res = run(m.loglikelihood(LoglikelihoodRequest("Question: 2+2= ", "4")))  # trailing space moves over
    assert (res.logprob, res.n_tokens, res.is_greedy) == (-0.25, 1, True)  # generated "\n" is not counted
    body = Handler.requests[-1]["body"]
    assert body["echo"] is True and body["logprobs"] == 1 and body["prompt"] == "Question: 2+2= 4"


@pytest.mark.parametrize("status,cls", [(500, TransientModelError), (503, TransientModelError),
                                        (429, TransientModelError), (400, PermanentModelError),
                                        (404, PermanentModelError), (401, PermanentModelError)])
def test_openai_error_mapping(stub, status, cls):
    with pytest.raises(cls) as info:
        run(oai(stub, f"status-{status}").generate(CHAT))
    msg = str(info.value)
    assert f"HTTP {status}" in msg and f"{stub}/v1/chat/completions" in msg and "\n" not in msg


def test_openai_timeout_is_transient(stub):
    with pytest.raises(TransientModelError, match="timed out"):
        run(oai(stub, "slow", timeout=0.3).generate(CHAT))


def test_openai_unreachable_server_is_one_line_naming_the_url():
    url = closed_port_url()
    m = OpenAICompatModel("m", base_url=url)
    with pytest.raises(TransientModelError) as info:
        run(m.generate(CHAT))
    msg = str(info.value)
    assert "cannot reach" in msg and url in msg and "\n" not in msg


def test_openai_needs_key_for_the_real_api(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelError, match="OPENAI_API_KEY"):
        OpenAICompatModel("gpt-4o-mini")


# ---------------------------------------------------------------- Anthropic
def claude(stub, name="claude-x") -> AnthropicModel:
    return AnthropicModel(name, base_url=stub, api_key_env="GLOTBENCH_TEST_NO_SUCH_KEY")


def test_anthropic_request_splits_system_and_reads_thinking(stub):
    res = run(claude(stub).generate(CHAT))
    assert res.text == "Budapest" and res.reasoning == "Let me think."
    assert (res.input_tokens, res.output_tokens, res.finish_reason) == (20, 5, "end_turn")
    req = Handler.requests[-1]
    assert req["path"] == "/v1/messages"
    body = req["body"]
    assert body["system"] == "Be brief."
    assert body["messages"] == [{"role": "user", "content": "Нийслэл?"}]
    assert (body["max_tokens"], body["temperature"], body["top_p"], body["stop_sequences"]) == (50, 0.3, 0.9, ["\n\n"])
    assert body["frequency_penalty"] == 0.5 and "seed" not in body


def test_anthropic_thinking_knob_drops_temperature(stub):
    m = claude(stub)
    req = GenRequest(messages=({"role": "user", "content": "hi"},), max_tokens=4000,
                     extra=(("thinking", {"type": "enabled", "budget_tokens": 2048}),))
    kw = m.build_params(req)
    assert kw["thinking"]["budget_tokens"] == 2048 and "system" not in kw
    assert "temperature" not in kw.get("extra_body", {})
    with pytest.raises(PermanentModelError, match="chat-only"):
        m.build_params(GenRequest(prompt="plain"))


@pytest.mark.parametrize("status,cls", [(500, TransientModelError), (529, TransientModelError),
                                        (429, TransientModelError), (400, PermanentModelError)])
def test_anthropic_error_mapping(stub, status, cls):
    with pytest.raises(cls) as info:
        run(claude(stub, f"status-{status}").generate(CHAT))
    assert f"HTTP {status}" in str(info.value) and f"{stub}/v1/messages" in str(info.value)


def test_anthropic_unreachable_and_missing_key(monkeypatch):
    url = closed_port_url().removesuffix("/v1")
    with pytest.raises(TransientModelError, match="cannot reach .*127.0.0.1"):
        run(AnthropicModel("c", base_url=url).generate(CHAT))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ModelError, match="ANTHROPIC_API_KEY"):
        AnthropicModel("claude-sonnet-4-5")
