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

``GET /_log`` returns every request received as ``{"hash", "status"}`` pairs, in order.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import re
import time

FAULTS = ("500", "429", "stall")


class StubApp:
    def __init__(self, answer: str = "A", fault_rate: float = 0.0, stall_s: float = 5.0, echo_gold: bool = False,
                 delay_s: float = 0.0, responses: list[dict] | None = None):
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
            if path.endswith("/models"):
                return await self._json(send, 200, {"object": "list", "data": [{"id": "stub", "object": "model"}]})
            return await self._json(send, 404, {"error": {"message": "not found"}})
        h = hashlib.sha256(body).hexdigest()
        n = self.attempts[h] = self.attempts.get(h, 0) + 1
        fault = self.fault_for(h)
        entry = {"hash": h, "attempt": n, "status": 200, "t": time.time()}
        self.log.append(entry)
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
        try:
            req = json.loads(body or b"{}")
        except json.JSONDecodeError:
            return await self._json(send, 400, {"error": {"message": "bad json"}})
        text = self._answer_for(req)
        reasoning = None
        canned = self._canned_for(req)
        if canned is not None:
            text, reasoning = canned.get("response", ""), canned.get("reasoning")
        usage = {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}
        if path.endswith("/chat/completions"):
            payload = {"id": "stub-" + h[:8], "object": "chat.completion", "created": int(time.time()), "model": req.get("model", "stub"),
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": text,
                                                            **({"reasoning_content": reasoning} if reasoning else {})},
                                    "finish_reason": "stop"}],
                       "usage": usage}
        else:
            payload = {"id": "stub-" + h[:8], "object": "text_completion", "created": int(time.time()), "model": req.get("model", "stub"),
                       "choices": [{"index": 0, "text": text, "finish_reason": "stop", "logprobs": None}], "usage": usage}
        return await self._json(send, 200, payload)

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
    async def _json(send, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]})
        await send({"type": "http.response.body", "body": data})


def main() -> None:
    import uvicorn

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--answer", default="A")
    ap.add_argument("--fault-rate", type=float, default=0.0)
    ap.add_argument("--stall", type=float, default=5.0)
    ap.add_argument("--echo-gold", action="store_true")
    ap.add_argument("--delay", type=float, default=0.0, help="seconds before every answer")
    ap.add_argument("--responses", default=None, help="JSONL of {match, response, reasoning?}: canned answers by prompt substring")
    a = ap.parse_args()
    canned = None
    if a.responses:
        with open(a.responses, encoding="utf-8") as fh:
            canned = [json.loads(line) for line in fh if line.strip()]
    app = StubApp(a.answer, a.fault_rate, a.stall, a.echo_gold, a.delay, canned)
    uvicorn.run(app, host=a.host, port=a.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
