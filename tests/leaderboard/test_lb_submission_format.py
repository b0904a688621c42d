"""The predictions file format and its validator (every problem reported, in plain words)."""

from __future__ import annotations

import json

from glotbench.leaderboard.submission_format import make_submission, validate_submission

IDS = {"0", "1", "2", "3"}
LABELS = {"0", "1"}


def check(doc, max_bytes=10_000):
    raw = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    return validate_submission(raw, IDS, LABELS, max_bytes)


def test_object_and_bare_list_are_accepted():
    doc = make_submission("hulu.cola", "m", {i: "1" for i in sorted(IDS)})
    sub, problems = check(doc)
    assert problems == [] and sub.task == "hulu.cola" and sub.model == "m"
    assert sub.predictions == {i: "1" for i in IDS}
    sub, problems = check(doc["predictions"])
    assert problems == [] and sub.task is None and len(sub.predictions) == 4


def test_integer_ids_and_labels_become_strings_and_bom_is_allowed():
    raw = "\ufeff".encode() + json.dumps([{"id": i, "label": 1} for i in range(4)]).encode()
    sub, problems = validate_submission(raw, IDS, LABELS, 10_000)
    assert problems == [] and sub.predictions["3"] == "1"


def test_every_problem_is_reported_at_once():
    entries = [{"id": "0", "label": "1"}, {"id": "0", "label": "0"}, {"id": "9", "label": "1"}, {"id": "1", "label": "maybe"}]
    sub, problems = check({"task": "hulu.cola", "predictions": entries})
    assert sub is None
    text = "\n".join(problems)
    assert "1 unknown id(s)" in text and "'9'" in text
    assert "missing id(s)" in text and "'2'" in text and "'3'" in text
    assert "duplicate id(s)" in text and "'0'" in text
    assert "Label 'maybe' is not in the label set ('0', '1')" in text
    assert len(problems) == 4


def test_not_json_wrong_shape_too_large_and_wrong_task():
    assert "not valid JSON" in check(b'{"predictions": [')[1][0]
    assert "line 1" in check(b'{"predictions": [')[1][0]
    assert "not UTF-8" in check(b"\xff\xfe\x00")[1][0]
    assert "empty" in check(b"   ")[1][0]
    assert 'no "predictions" field' in check({"task": "x"})[1][0]
    assert "top level is a JSON int" in check(5)[1][0]
    assert "must be a list" in check({"predictions": {"0": "1"}})[1][0]
    _, problems = check([{"id": "0"}, "x", {"label": "1"}] + [{"id": i, "label": "1"} for i in "123"])
    assert problems[0].startswith("Wrong shape:") and "entry 0 (id '0') has no string \"label\"" in problems[0]
    assert "entry 1 is not an object" in problems[0] and "entry 2 has no string \"id\"" in problems[0]
    _, problems = check(make_submission("hulu.cola", "m", {i: "1" for i in IDS}), max_bytes=20)
    assert problems and problems[0].startswith("The file is too large") and "limit is 20 bytes" in problems[0]
    raw = json.dumps(make_submission("hulu.sst", "m", {i: "1" for i in IDS})).encode()
    _, problems = validate_submission(raw, IDS, LABELS, 10_000, expected_task="hulu.cola")
    assert problems == ["The file is for task 'hulu.sst', but it was uploaded for task 'hulu.cola'."]


def test_long_id_lists_are_cut_short():
    _, problems = validate_submission(b"[]", {str(i) for i in range(50)}, LABELS, 1000)
    assert problems == ["The predictions list is empty."]
    _, problems = validate_submission(json.dumps([{"id": "0", "label": "1"}]).encode(), {str(i) for i in range(50)}, LABELS, 1000)
    assert problems == ["49 missing id(s), every item needs a prediction: '1', '2', '3', '4', '5', '6', '7', '8', '9', '10' and 39 more."]
