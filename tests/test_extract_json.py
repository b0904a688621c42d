"""The first JSON object in an output: prose, fences, nesting, small repairs; None when broken."""

from __future__ import annotations

import pytest

from glotbench.extract import first_json_object


@pytest.mark.parametrize(
    "text, want",
    [
        ('{"answer": "B", "confidence": 80}', {"answer": "B", "confidence": 80}),
        ('Itt a válaszom:\n{"válasz": "Budapest", "biztosság": 95}\nRemélem, segít.', {"válasz": "Budapest", "biztosság": 95}),
        ('```json\n{"grade": "A"}\n```', {"grade": "A"}),
        ('好的。\n```json\n{"答案": "北京", "置信度": 90}\n```\n以上。', {"答案": "北京", "置信度": 90}),
        ('{"outer": {"inner": {"deep": [1, {"x": 2}]}}, "k": null}', {"outer": {"inner": {"deep": [1, {"x": 2}]}}, "k": None}),
        ('Note: {"s": "a } brace and a { brace", "q": "say \\"hi\\""} end', {"s": "a } brace and a { brace", "q": 'say "hi"'}),
        ('Use {curly} braces. Then {"a": 1}', {"a": 1}),
        ('{"a": 1} and {"b": 2}', {"a": 1}),  # the first one
        ('[1, 2] then {"c": 3}', {"c": 3}),
        # small repairs
        ('{"a": 1, "b": [1, 2,],}', {"a": 1, "b": [1, 2]}),
        ("{'answer': 'C', 'sure': True, 'note': None}", {"answer": "C", "sure": True, "note": None}),
        ("{'text': \"it's fine\", 'n': 2}", {"text": "it's fine", "n": 2}),
        ('{\n  "a": 1, // first\n  /* block */ "b": 2\n}', {"a": 1, "b": 2}),
        ("Here's my grading: {'score': 7, 'reason': 'Jó válasz, de hiányos.'}", {"score": 7, "reason": "Jó válasz, de hiányos."}),
    ],
)
def test_first_json_object(text, want):
    assert first_json_object(text) == want


@pytest.mark.parametrize(
    "text",
    [
        "",
        None,
        "no json here",
        "[1, 2, 3]",
        '{"a": 1',  # truncated
        "{a: 1}",  # unquoted keys are not guessed
        '{"broken": {"inner": 1} "x"}',  # a piece of a broken object is not returned
    ],
)
def test_no_object_gives_none(text):
    assert first_json_object(text) is None


def test_brace_heavy_and_deeply_nested_output_does_not_crash():
    assert first_json_object("x{" * 2000 + '{"ok": 1}') == {"ok": 1}
    assert first_json_object("{" * 3000) is None
    assert first_json_object('{"a":' * 3000) is None  # deeper than the decoder's recursion limit
    latex = "We get \\frac{1}{2} and \\sqrt{x}, so it's {\"a\": {\"b\": \"}\"}}"
    assert first_json_object(latex) == {"a": {"b": "}"}}
