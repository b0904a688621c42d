"""Thinking blocks: stripping them, and counting reflection markers per language."""

from __future__ import annotations

import pytest

from glotbench.extract import reflection_counts, strip_thinking
from glotbench.languages import get_pack


@pytest.mark.parametrize(
    "text, answer, trace",
    [
        ("<think>2+2? 4</think>The answer is 4.", "The answer is 4.", "2+2? 4"),
        ("<think>\nhmm\n</think>\n\nB", "B", "hmm"),
        ("<THINK>x</THINK>y", "y", "x"),
        ("<thinking>a</thinking> b <reasoning>c</reasoning> d", "b   d", "a\n\nc"),
        ("R1 style trace</think>final", "final", "R1 style trace"),
        ("<think>cut off by the limit", "", "cut off by the limit"),
        ("prefix <think>cut off", "prefix", "cut off"),
        ("plain answer", "plain answer", None),
        ("  think>/think> no opening bracket \n", "think>/think> no opening bracket", None),  # no "<": as it is
        ("a < b </think> c", "c", "a < b"),
        ("", "", None),
    ],
)
def test_strip_thinking(text, answer, trace):
    assert strip_thinking(text) == (answer, trace)


def test_reflection_counts_per_language():
    hu = "Nézzük. Várjunk csak, ez nem jó. Alternatívaként próbáljuk a B-t. Hmm, várj. Várjunk."
    counts = reflection_counts(hu, get_pack("hu"))
    assert counts["várjunk csak"] == 1 and counts["várjunk"] == 1 and counts["várj"] == 1
    assert counts["alternatívaként"] == 1 and counts["hmm"] == 1
    assert reflection_counts("等等，我再想想。或者答案是B。嗯。", get_pack("zh")) == {"等等": 1, "或者": 1, "嗯": 1}
    en = reflection_counts("Wait, that's wrong. Alternatively, await the result.", get_pack("en"))
    assert en == {"wait": 1, "alternatively": 1}  # "await" is not "wait"
    assert reflection_counts(None, get_pack("en")) == {}
