"""Each extraction says which rule produced it, on the result and in samples.jsonl; stated confidence scales."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from glotbench.extract import Extraction, explain, explain_choice, explain_number, get_extractor, read_confidence
from glotbench.extract.confidence import parse_stated_answer

L = ["A", "B", "C", "D"]


@pytest.mark.parametrize("text, lang, value, rule", [
    ("The answer is B.", "en", "B", "choice:answer_phrase"),
    ("$\\boxed{C}$", "en", "C", "choice:boxed"),
    ("C是正确的。", "zh", "C", "choice:correct_phrase"),
    ("Není to A, ale D.", "cs", "D", "choice:contrast"),
    ("A: nem. B: nem. C: igen.", "hu", "C", "choice:verdict_list"),
    ("Odpověď je A. Počkat, ne, správná odpověď je D.", "cs", "D", "choice:self_correction"),
    ("B. Wait, D.", "en", "D", "choice:self_correction"),
    ("B", "en", "B", "choice:leading_label"),
    ("Let me think.\n\nC", "en", "C", "choice:label_line"),
    ("B is incorrect; C.", "en", "C", "choice:final_label"),
    ("The answer is A or B.", "en", None, "choice:ambiguous:answer_phrase"),
    ("A. Praha\nB.", "cs", None, "choice:echo"),
    ("Nevím.", "cs", None, "choice:none"),
])
def test_choice_rules(text, lang, value, rule):
    got = explain_choice(text, L, None, lang)
    assert (got.value, got.rule) == (value, rule)


@pytest.mark.parametrize("text, lang, value, rule", [
    ("#### 72", "en", 72, "number:hashes"),
    ("\\boxed{\\frac{3}{4}}", "en", 0.75, "number:boxed"),
    ("答案是 3.5 万", "zh", 35000, "number:answer_phrase"),
    ("答案是十八", "zh", 18, "number:answer_phrase_chinese_numeral"),
    ("so 9 * 2 = 18", "en", 18, "number:last_number"),
    ("The answer is 1 234,5", "en", None, "number:ambiguous:answer_phrase"),
    ("no number", "en", None, "number:none"),
])
def test_number_rules(text, lang, value, rule):
    got = explain_number(text, lang)
    assert (got.value, got.rule) == (value, rule)


def test_registered_extractors_keep_their_signature_and_explain():
    sample = {"labels": L, "choices": None}
    assert get_extractor("choice")("Answer: C", sample=sample, pack="en") == "C"
    assert explain(get_extractor("choice"), "Answer: C", sample=sample, pack="en") == Extraction("C", "choice:answer_phrase")
    assert explain(get_extractor("number"), "Answer: 7", sample={}, pack="en").rule == "number:answer_phrase"
    # An extractor without an explain twin is named by its function.
    assert explain(get_extractor("text"), " hi ", sample={}, pack="en") == Extraction("hi", "_text")


@pytest.mark.parametrize("raw, value, scale", [
    (0.85, 85, "0-1"), ("0.85", 85, "0-1"), ("0,85", 85, "0-1"), (1.0, 100, "0-1"), (0.0, 0, "0-1"),
    (85, 85, "0-100"), ("85", 85, "0-100"), (72.5, 72.5, "0-100"), (1, 1, "0-100"), (0, 0, "0-100"),
    ("85%", 85, "percent"), ("0.5 %", 0.5, "percent"),
    (150, None, None), (-3, None, None), ("high", None, None), (True, None, None), (None, None, None),
    (float("nan"), None, None), ("150%", None, None),
])
def test_stated_confidence_scales(raw, value, scale):
    got = read_confidence(raw)
    assert (got.value, got.scale) == (value, scale)
    if value is None:
        assert got.error


def test_stated_answer_records_the_scale():
    s = parse_stated_answer('{"answer": "Paris", "confidence_score": 0.85}')
    assert (s.answer, s.confidence, s.scale) == ("Paris", 85.0, "0-1")
    s = parse_stated_answer('{"answer": "Paris", "confidence_score": 85}')
    assert (s.confidence, s.scale) == (85.0, "0-100")
    s = parse_stated_answer('{"answer": "Paris", "confidence_score": "very"}')
    assert s.confidence is None and s.scale is None and "0-1" in s.error


def test_samples_jsonl_records_the_extraction_rule(stub_server, data_root, tmp_path):
    base = stub_server("--answer", "A")
    out = tmp_path / "r"
    done = subprocess.run([sys.executable, "-m", "glotbench", "run", "--model", "openai:s", "--base-url", base,
                           "--tasks", "mm_eval.knowledge", "--limit", "3", "-o", str(out), "--no-progress"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(x) for x in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 3
    assert all(r["pred"] == "A" and r["extraction_rule"] == "choice:leading_label" for r in rows), rows[0]
