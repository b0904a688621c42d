"""glotbench.json_codec means what the standard library's json means: cache keys byte-identical to
``json.dumps(sort_keys=True, ...)`` (a changed key would re-send every answered request of a resumed
run), and every value read back the same, on inputs where orjson alone would differ."""

from __future__ import annotations

import hashlib
import json
import math
import random

import numpy as np
import pytest

from glotbench import json_codec
from glotbench.models.base import GenRequest, LoglikelihoodRequest

# Where orjson on its own differs from json: exponent spelling, NaN / inf, big ints, float subclasses,
# non-string keys, str subclasses, lone surrogates, control characters.
AWKWARD = [
    1e-05, 1.5e-07, 1e16, 1e22, 5e-324, -0.0, 0.1 + 0.2, float("nan"), float("inf"), -float("inf"),
    1e-4, math.nextafter(1e-4, 0), -math.nextafter(1e-4, 1), math.nextafter(1e16, 0), -1e16,  # repr's exponent edges
    2**64, 2**64 - 1, -(2**63) - 1, 10**30, np.float64(0.5), np.float32(0.25), np.int64(7),
    {1: "int key"}, "\ud800", "\x00\x1f\x7f\u2028", 'q"uo\\te\n\t', "中文 é 😀", True, None, (1, 2), [],
]


class Tag(str):
    pass


def _random_value(rng: random.Random, depth: int = 0):
    pick = rng.randrange(12 if depth < 3 else 7)
    if pick == 0:
        return rng.choice(AWKWARD)
    if pick == 1:
        return rng.random() * 10 ** rng.randint(-8, 20) * rng.choice([1, -1])
    if pick == 2:
        return rng.randint(-(2**70), 2**70) if rng.random() < 0.2 else rng.randint(-1000, 1000)
    if pick == 3:
        return "".join(rng.choice("ab \n\"\\中é😀\x01") for _ in range(rng.randint(0, 12)))
    if pick == 4:
        return rng.choice([True, False, None])
    if pick == 5:
        return round(rng.random(), rng.randint(0, 4))
    if pick == 6:
        return Tag("sub")
    if pick < 9:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(["b", "a", "é", "Z", "10", "2", "中"]) + str(i): _random_value(rng, depth + 1)
            for i in range(rng.randint(0, 4))}


def _same(a, b) -> bool:
    """Equal, with NaN equal to NaN and types compared (1 vs 1.0 vs True)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b and (not isinstance(a, float) or math.copysign(1, a) == math.copysign(1, b))


def _stdlib_or_error(fn):
    try:
        return fn()
    except Exception as err:  # noqa: BLE001 - the error type is what is compared
        return type(err)


CASES = [_random_value(random.Random(seed)) for seed in range(3000)] + AWKWARD


@pytest.mark.parametrize("chunk", range(6))
def test_canonical_bytes_are_the_stdlib_text_byte_for_byte(chunk):
    for obj in CASES[chunk::6]:
        ref = _stdlib_or_error(lambda: json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":")))
        ref_bytes = _stdlib_or_error(lambda: ref.encode()) if isinstance(ref, str) else ref
        assert _stdlib_or_error(lambda: json_codec.canonical_bytes(obj)) == ref_bytes, obj


@pytest.mark.parametrize("chunk", range(6))
def test_dumps_and_loads_give_the_stdlib_values(chunk):
    for obj in CASES[chunk::6]:
        ref_text = _stdlib_or_error(lambda: json.dumps(obj, ensure_ascii=False, default=str))
        got_text = _stdlib_or_error(lambda: json_codec.dumps(obj))
        if isinstance(ref_text, type):
            assert got_text is ref_text, obj
            continue
        assert _same(json.loads(got_text), json.loads(ref_text)), obj
        compact = json_codec.dumps(obj, separators=json_codec.COMPACT)  # sample records: same values, and compact wherever written
        assert _same(json.loads(compact), json.loads(ref_text)), obj
        # both readers agree on both texts
        assert _same(json_codec.loads(got_text), json.loads(got_text)), obj
        assert _same(json_codec.loads(ref_text), json.loads(ref_text)), obj
        assert _same(json_codec.loads(ref_text.encode("utf-8", "surrogatepass")), json.loads(ref_text)), obj
        ref_body = _stdlib_or_error(lambda: json.dumps(obj, ensure_ascii=False).encode())
        got_body = _stdlib_or_error(lambda: json_codec.dumps_bytes(obj))
        if isinstance(ref_body, type):
            assert got_body is ref_body, obj
        else:
            assert _same(json.loads(got_body), json.loads(ref_body)), obj


@pytest.mark.parametrize("chunk", range(6))
def test_journal_rows_and_results_files_give_the_stdlib_values(chunk):
    """dumps_utf8 (journal rows) and dumps_indented (results.json): the values of the stdlib's text
    (default=str), as UTF-8; a lone surrogate, which has no UTF-8, comes back through escapes; and
    where orjson writes results.json the layout is the stdlib's indent=2, byte for byte."""
    for obj in CASES[chunk::6]:
        for got_fn, ref_fn in ((lambda: json_codec.dumps_utf8(obj, separators=json_codec.COMPACT),
                                lambda: json.dumps(obj, ensure_ascii=False, default=str)),
                               (lambda: json_codec.dumps_indented(obj),
                                lambda: json.dumps(obj, ensure_ascii=False, indent=2, default=str))):
            ref = _stdlib_or_error(ref_fn)
            got = _stdlib_or_error(got_fn)
            if isinstance(ref, type):
                assert got is ref, obj
                continue
            assert isinstance(got, bytes), obj
            assert _same(json.loads(got.decode()), json.loads(ref)), obj
        ref_bytes = _stdlib_or_error(lambda: json.dumps(obj, ensure_ascii=False, indent=2).encode())
        if json_codec._plain(obj, True) and isinstance(ref_bytes, bytes):  # no float orjson spells otherwise
            assert json_codec.dumps_indented(obj) == ref_bytes, obj  # the very same bytes


@pytest.mark.parametrize("text", ["18446744073709551616", "-9223372036854775809", "[123456789012345678901]",
                                  "NaN", "[Infinity]", "1e400", '"\\ud800"', '{"a": 1, "a": 2}', "  [1.0, -0.0]  "])
def test_loads_reads_what_orjson_alone_would_misread(text):
    assert _same(json_codec.loads(text), json.loads(text))
    assert _same(json_codec.loads(text.encode()), json.loads(text))


def test_loads_refuses_what_json_refuses():
    for bad in ["", "{", "not json", b"\xff\xfe{"]:
        with pytest.raises(ValueError):
            json_codec.loads(bad)


def test_request_keys_unchanged():
    """The cache key of a request: sha256 of the stdlib canonical text, as every earlier journal has it."""
    req = GenRequest(messages=({"role": "user", "content": "Kérdés: 中文?\n\"A\""},), max_tokens=64,
                     temperature=1e-05, top_p=0.95, stop=("\n",), seed=3, sample_index=1,
                     extra=(("frequency_penalty", 0.5), ("logit_bias", {"50256": -100})))
    text = json.dumps({"kind": "generate", "model": "openai:m@http://x/v1", **req.to_dict()},
                      sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert req.key("openai:m@http://x/v1") == hashlib.sha256(text.encode()).hexdigest()
    # the key this request had before orjson (main at e70d261), so journals written then still resume
    assert req.key("openai:m@http://x/v1") == "c96c88e8f5e728339fb388fd71c4a75edcc5b0deb19a1b748cbc8d557a77ec7d"


def test_loglikelihood_keys_are_the_stdlib_hash():
    req = LoglikelihoodRequest(context="Kérdés: 中文 1e-05?", continuation=" A")
    text = json.dumps({"kind": "loglikelihood", "model": "llamacpp:x", **req.to_dict()},
                      sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert req.key("llamacpp:x") == hashlib.sha256(text.encode()).hexdigest()


def test_long_digit_run_guard_finds_what_the_regex_finds():
    """The bytes.translate guard in front of orjson answers exactly as ``re.search(rb"[0-9]{19}")``."""
    import random
    import re

    rng = random.Random(7)
    alphabet = ["0", "9", "5", "a", "-", ".", "e", " ", "\u0660", "٣", "中", "\uff11"]  # Arabic-Indic / fullwidth digits are not [0-9]
    for _ in range(4000):
        runs = [rng.choice(alphabet) * rng.choice([1, 1, 2, 17, 18, 19, 20]) for _ in range(rng.randint(0, 6))]
        text = "".join(runs)
        data = text.encode()
        assert json_codec.has_long_digit_run(data) == (re.search(rb"[0-9]{19}", data) is not None), text
    assert json_codec.has_long_digit_run(b"x" + b"1234567890" * 2)
    assert not json_codec.has_long_digit_run(b"123456789012345678 9")
    big = '{"id": 123456789012345678901234, "k": "\u4e2d"}'
    assert json_codec.loads(big) == json.loads(big) and isinstance(json_codec.loads(big)["id"], int)
