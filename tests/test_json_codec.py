"""glotbench.json_codec: cache keys byte-identical to every earlier journal's (a changed key would
re-send every answered request of a resumed run), journal rows and results.json read back as written."""

from __future__ import annotations

import hashlib
import json

from glotbench import json_codec
from glotbench.models.base import GenRequest, LoglikelihoodRequest


def test_request_keys_unchanged():
    """The cache key of a request: sha256 of the stdlib canonical text, as every earlier journal has it."""
    req = GenRequest(messages=({"role": "user", "content": "Kérdés: 中文?\n\"A\""},), max_tokens=64,
                     temperature=1e-05, top_p=0.95, stop=("\n",), seed=3, sample_index=1,
                     extra=(("frequency_penalty", 0.5), ("logit_bias", {"50256": -100})))
    text = json.dumps({"kind": "generate", "model": "openai:m@http://x/v1", **req.to_dict()},
                      sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert req.key("openai:m@http://x/v1") == hashlib.sha256(text.encode()).hexdigest()
    assert req.keyed_json("openai:m@http://x/v1") == text.encode()
    # the key every earlier journal holds for this request (with the stdlib and with orjson), so they still resume
    assert req.key("openai:m@http://x/v1") == "c96c88e8f5e728339fb388fd71c4a75edcc5b0deb19a1b748cbc8d557a77ec7d"


def test_plain_prompt_key_unchanged():
    """A plain-prompt request with defaults (no messages, no extra): its key as written by earlier journals."""
    req = GenRequest(prompt="Question: 2+2?\nAnswer:", max_tokens=8, stop=("\n",))
    text = ('{"extra":{},"kind":"generate","max_tokens":8,"messages":null,"model":"llamacpp:x","prompt":'
            '"Question: 2+2?\\nAnswer:","sample_index":0,"seed":null,"stop":["\\n"],"temperature":0.0,"top_p":null}')
    assert req.keyed_json("llamacpp:x") == text.encode()
    assert req.key("llamacpp:x") == hashlib.sha256(text.encode()).hexdigest()


def test_loglikelihood_keys_are_the_stdlib_hash():
    req = LoglikelihoodRequest(context="Kérdés: 中文 1e-05?", continuation=" A")
    text = json.dumps({"kind": "loglikelihood", "model": "llamacpp:x", **req.to_dict()},
                      sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert req.key("llamacpp:x") == hashlib.sha256(text.encode()).hexdigest()


def test_rows_read_back_the_same_values():
    """A journal row and results.json: the values written, big integers exact, NaN kept, a lone
    surrogate (no UTF-8 for it) written with escapes instead of failing the write."""
    obj = {"id": 123456789012345678901234, "x": float("nan"), "t": "中 \ud800 é", "f": 1e-05, "n": None}
    for data in (json_codec.dumps_utf8(obj, separators=json_codec.COMPACT), json_codec.dumps_indented(obj)):
        back = json_codec.loads(data)
        assert back["id"] == obj["id"] and isinstance(back["id"], int)
        assert back["x"] != back["x"] and back["t"] == obj["t"] and back["f"] == 1e-05 and back["n"] is None
    assert json_codec.dumps_utf8({"a": [1, 2]}, separators=json_codec.COMPACT) == b'{"a":[1,2]}'
    assert json_codec.dumps_indented({"a": "é"}) == json.dumps({"a": "é"}, ensure_ascii=False, indent=2).encode()
