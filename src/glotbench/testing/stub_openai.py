"""An instant OpenAI-compatible server for tests and benchmarks, with faults injected on purpose.

    python -m glotbench.testing.stub_openai --port 8765 [--answer A] [--fault-rate 0.3] [--stall 5] [--delay 0]

It answers /v1/chat/completions and /v1/completions at once with a fixed answer (or, with
``--echo-gold``, the text after "GOLD=" in the prompt, for exact-score tests; with
``--responses FILE``, a canned answer from a JSONL of ``{"match", "response", "reasoning"?}``
lines: the first line whose ``match`` occurs in the request body answers, ``reasoning`` coming
back as ``reasoning_content`` like DeepSeek's API). Faults are
chosen per request body (a stable hash), so a retried request sees its own schedule:

* ``500`` bodies fail with HTTP 500 on every attempt (the item ends as an error);
* ``429`` bodies get HTTP 429 on the first two attempts, then succeed;
* ``stall`` bodies hang for ``--stall`` seconds on the first attempt, then succeed.

Malformed or hostile answers (``--bad KIND``) go to every ``--bad-every``-th distinct request
body (1: all of them), on every attempt of that body, so an item ends as an error after its retries:

* ``choices-str`` ``{"choices": "A"}``; ``choices-dict`` ``{"choices": {...}}``;
  ``message-str`` ``{"choices": [{"message": "A"}]}``; ``usage-str`` a good answer with ``"usage": "x"``;
  ``content-int`` / ``content-list`` content ``42`` / ``[1, 2]``; ``not-json`` a text body;
* ``error-200`` HTTP 200 with ``{"error": {"message": "quota exceeded ..."}}``;
* ``retry-after`` HTTP 429 with ``Retry-After: --retry-after`` on the first attempt, then success;
* ``auth`` HTTP 401; ``endless`` a 200 whose body never ends (a byte every 0.1 s);
* ``huge`` a 200 streaming ``--huge-mb`` MB; ``redirect-other`` a 307 to the same port on another
  host (``localhost`` vs ``127.0.0.1``); ``redirect-same`` a 307 to ``/r`` + the same path (answered).

``GET /v1/models`` lists ``--served-id`` (default ``stub``); ``--no-models`` answers it 404 (a
server that does not say what it serves); ``--model-path FILE`` answers llama.cpp's ``GET /props``
with that ``model_path``.

``GET /_log`` returns every request received as ``{"hash", "status"}`` pairs, in order
(``--log-bodies``: with the parsed request ``body`` too).

It runs on uvicorn when the ``serve`` extra is installed, else on the standard library's asyncio
(:mod:`glotbench.testing.asgi_stdlib`): no extra is needed.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import re
import time

FAULTS = ("500", "429", "stall")
BAD_KINDS = ("choices-str", "choices-dict", "message-str", "usage-str", "content-int", "content-list", "not-json",
             "error-200", "retry-after", "auth", "endless", "huge", "redirect-other", "redirect-same")


def echo_logprobs(prompt: str, answer: str) -> tuple[str, dict]:
    """``echo=True`` with ``logprobs``: the prompt echoed one character per token, each character's
    log-probability ``-(1 + ord(c) % 7) / 10`` (the first token's is null, as servers send it), then
    the generated answer as one more token. Deterministic, so a log-likelihood run has a value to check."""
    chars = list(prompt) + [answer]
    offsets, pos = [], 0
    for c in chars:
        offsets.append(pos)
        pos += len(c)
    lps = [None] + [-(1 + ord(c[0]) % 7) / 10 if c else 0.0 for c in chars[1:]]
    return prompt + answer, {"tokens": chars, "token_logprobs": lps, "text_offset": offsets, "top_logprobs": None}


class StubApp:
    def __init__(self, answer: str = "A", fault_rate: float = 0.0, stall_s: float = 5.0, echo_gold: bool = False,
                 delay_s: float = 0.0, responses: list[dict] | None = None, bad: str | None = None,
                 bad_every: int = 1, retry_after: float = 2.0, huge_mb: float = 300.0):
        self.bad = bad
        self.bad_every = max(1, bad_every)
        self.retry_after = retry_after
        self.huge_mb = huge_mb
        self._bad_order: dict[str, int] = {}  # distinct body -> arrival index
        self.answer = answer
        self.responses = responses or []
        self.delay_s = delay_s
        self.fault_rate = fault_rate
        self.stall_s = stall_s
        self.echo_gold = echo_gold
        self.attempts: dict[str, int] = {}
        self.log: list[dict] = []

    def fault_for(self, h: str) -> str | None:
        x = int(h[:8], 16) / 0xFFFFFFFF
        if x >= self.fault_rate:
            return None
        return FAULTS[int(h[8:10], 16) % 3]

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return
        body = b""
        while True:
            msg = await receive()
            body += msg.get("body", b"")
            if not msg.get("more_body"):
                break
        path = scope["path"]
        if scope["method"] == "GET":
            if path == "/_log":
                return await self._json(send, 200, {"log": self.log})
            if path.endswith("/models") and not getattr(self, "no_models", False):
                served = getattr(self, "served_id", "stub")
                return await self._json(send, 200, {"object": "list", "data": [{"id": served, "object": "model",
                                                                                 "created": int(time.time())}]})
            if path == "/props" and getattr(self, "model_path", None):
                return await self._json(send, 200, {"model_path": self.model_path, "total_slots": 1})
            return await self._json(send, 404, {"error": {"message": "not found"}})
        if path.startswith("/r/"):  # the target of redirect-same
            path = path[2:]
            body_h = hashlib.sha256(body).hexdigest()
            self.log.append({"hash": body_h, "attempt": 0, "status": "redirected", "t": time.time(),
                             "method": scope["method"]})
            return await self._answer(send, path, body, body_h)
        h = hashlib.sha256(body).hexdigest()
        n = self.attempts[h] = self.attempts.get(h, 0) + 1
        fault = self.fault_for(h)
        entry = {"hash": h, "attempt": n, "status": 200, "t": time.time()}
        if getattr(self, "log_bodies", False):
            try:
                entry["body"] = json.loads(body)
            except ValueError:
                entry["body"] = body.decode("utf-8", "replace")
        self.log.append(entry)
        if self.bad:
            idx = self._bad_order.setdefault(h, len(self._bad_order))
            if idx % self.bad_every == 0:
                entry["bad"] = self.bad
                handled = await self._bad_answer(send, scope, path, body, h, n, entry)
                if handled:
                    return
        if fault == "500":
            entry["status"] = 500
            return await self._json(send, 500, {"error": {"message": "injected server error", "type": "server_error"}})
        if fault == "429" and n <= 2:
            entry["status"] = 429
            return await self._json(send, 429, {"error": {"message": "injected rate limit", "type": "rate_limit"}})
        if fault == "stall" and n == 1:
            entry["status"] = "stall"
            await asyncio.sleep(self.stall_s)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        return await self._answer(send, path, body, h)

    def _payload(self, path: str, req: dict, h: str) -> dict:
        text = self._answer_for(req)
        reasoning = None
        canned = self._canned_for(req)
        if canned is not None:
            text, reasoning = canned.get("response", ""), canned.get("reasoning")
        usage = {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}
        if path.endswith("/chat/completions"):
            return {"id": "stub-" + h[:8], "object": "chat.completion", "created": int(time.time()), "model": req.get("model", "stub"),
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text,
                                                         **({"reasoning_content": reasoning} if reasoning else {})},
                                 "finish_reason": "stop"}],
                    "usage": usage}
        logprobs = None
        if req.get("echo") and req.get("logprobs") and isinstance(req.get("prompt"), str):
            text, logprobs = echo_logprobs(req["prompt"], text)
        return {"id": "stub-" + h[:8], "object": "text_completion", "created": int(time.time()), "model": req.get("model", "stub"),
                "choices": [{"index": 0, "text": text, "finish_reason": "stop", "logprobs": logprobs}], "usage": usage}

    async def _bad_answer(self, send, scope, path: str, body: bytes, h: str, n: int, entry: dict) -> bool:
        """Send the --bad answer; False when this attempt should be answered normally."""
        kind = self.bad
        try:
            req = json.loads(body or b"{}")
        except json.JSONDecodeError:
            req = {}
        good = self._payload(path, req, h)
        if kind == "choices-str":
            return await self._json(send, 200, {**good, "choices": "A"}) or True
        if kind == "choices-dict":
            return await self._json(send, 200, {**good, "choices": {"0": good["choices"][0]}}) or True
        if kind == "message-str":
            return await self._json(send, 200, {**good, "choices": [{"index": 0, "message": "A"}]}) or True
        if kind == "usage-str":
            return await self._json(send, 200, {**good, "usage": "x"}) or True
        if kind in ("content-int", "content-list"):
            value = 42 if kind == "content-int" else [1, 2]
            choice = dict(good["choices"][0])
            if "message" in choice:
                choice["message"] = {**choice["message"], "content": value}
            else:
                choice["text"] = value
            return await self._json(send, 200, {**good, "choices": [choice]}) or True
        if kind == "not-json":
            return await self._raw(send, 200, b"<html>gateway says hello</html>", b"text/html") or True
        if kind == "error-200":
            return await self._json(send, 200, {"error": {"message": "quota exceeded for this key (stub)",
                                                          "type": "insufficient_quota"}}) or True
        if kind == "retry-after":
            if n > 1:
                return False
            entry["status"] = 429
            return await self._json(send, 429, {"error": {"message": "slow down (stub)"}},
                                    extra=[(b"retry-after", f"{self.retry_after:g}".encode())]) or True
        if kind == "auth":
            entry["status"] = 401
            return await self._json(send, 401, {"error": {"message": "invalid api key (stub)"}}) or True
        if kind == "endless":
            entry["status"] = "endless"
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": b'{"choices": [', "more_body": True})
            for _ in range(6000):  # ten minutes, or until the client hangs up
                await asyncio.sleep(0.1)
                await send({"type": "http.response.body", "body": b" ", "more_body": True})
            return True
        if kind == "huge":
            entry["status"] = "huge"
            chunk = b" " * (1 << 20)
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": b'{"pad": "', "more_body": True})
            for _ in range(int(self.huge_mb)):
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b'"}'})
            return True
        if kind in ("redirect-other", "redirect-same"):
            host = dict(scope["headers"]).get(b"host", b"127.0.0.1").decode()
            port = host.rsplit(":", 1)[-1]
            if kind == "redirect-other":
                other = "localhost" if host.startswith("127.0.0.1") else "127.0.0.1"
                loc = f"http://{other}:{port}{path}"
            else:
                loc = f"http://{host}/r{path}"
            entry["status"] = 307
            return await self._raw(send, 307, b"", b"text/plain", extra=[(b"location", loc.encode())]) or True
        raise ValueError(f"unknown --bad kind {kind!r}")

    async def _answer(self, send, path: str, body: bytes, h: str):
        try:
            req = json.loads(body or b"{}")
        except json.JSONDecodeError:
            return await self._json(send, 400, {"error": {"message": "bad json"}})
        return await self._json(send, 200, self._payload(path, req, h))

    def _answer_for(self, req: dict) -> str:
        if not self.echo_gold:
            return self.answer
        text = json.dumps(req, ensure_ascii=False)
        m = re.search(r"GOLD=([^\s\"\\]+)", text)
        return m.group(1) if m else self.answer

    def _canned_for(self, req: dict) -> dict | None:
        if not self.responses:
            return None
        text = "\n".join(str(m.get("content", "")) for m in req.get("messages") or []) + str(req.get("prompt") or "")
        return next((r for r in self.responses if r["match"] in text), None)

    @staticmethod
    async def _json(send, status: int, payload: dict, extra: list | None = None) -> None:
        await StubApp._raw(send, status, json.dumps(payload).encode(), b"application/json", extra)

    @staticmethod
    async def _raw(send, status: int, data: bytes, ctype: bytes, extra: list | None = None) -> None:
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", ctype), (b"content-length", str(len(data)).encode()), *(extra or [])]})
        await send({"type": "http.response.body", "body": data})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--answer", default="A")
    ap.add_argument("--fault-rate", type=float, default=0.0)
    ap.add_argument("--stall", type=float, default=5.0)
    ap.add_argument("--echo-gold", action="store_true")
    ap.add_argument("--delay", type=float, default=0.0, help="seconds before every answer")
    ap.add_argument("--bad", choices=BAD_KINDS, default=None, help="malformed or hostile answers (see above)")
    ap.add_argument("--bad-every", type=int, default=1, help="every N-th distinct request body gets --bad (1: all)")
    ap.add_argument("--retry-after", type=float, default=2.0, help="seconds sent in Retry-After by --bad retry-after")
    ap.add_argument("--huge-mb", type=float, default=300.0, help="body size for --bad huge")
    ap.add_argument("--responses", default=None, help="JSONL of {match, response, reasoning?}: canned answers by prompt substring")
    ap.add_argument("--log-bodies", action="store_true", help="GET /_log entries carry each request body too")
    ap.add_argument("--served-id", default="stub", help="the model id GET /v1/models lists")
    ap.add_argument("--no-models", action="store_true", help="GET /v1/models answers 404 (the server does not say)")
    ap.add_argument("--model-path", default=None, help="GET /props answers this model_path (llama.cpp's server)")
    a = ap.parse_args()
    canned = None
    if a.responses:
        with open(a.responses, encoding="utf-8") as fh:
            canned = [json.loads(line) for line in fh if line.strip()]
    app = StubApp(a.answer, a.fault_rate, a.stall, a.echo_gold, a.delay, canned, bad=a.bad, bad_every=a.bad_every,
                  retry_after=a.retry_after, huge_mb=a.huge_mb)
    app.log_bodies = a.log_bodies
    app.served_id, app.no_models, app.model_path = a.served_id, a.no_models, a.model_path
    try:
        import uvicorn
    except ImportError:  # the `serve` extra is not installed: the standard library serves the stub
        from glotbench.testing.asgi_stdlib import serve

        print(f"stub_openai: serving on http://{a.host}:{a.port} (standard library server; uvicorn not installed)",
              flush=True)
        serve(app, a.host, a.port)
        return
    uvicorn.run(app, host=a.host, port=a.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
