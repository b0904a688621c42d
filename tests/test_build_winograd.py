"""`build winograd` (issue 55; HuLU §3.1: HuWNLI is GLUE's WNLI construction, the pronoun replaced by
each candidate referent) and HuCB per inference-cancelling marker (HuLU §3.3: the released files carry
no marker, so `build classify --labels hucb-markers` tags it and a task slices by it). Fresh processes;
the real HuWS/HuWNLI files (when present) check the construction against the published pairs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from test_build_qa import cli, lines

from glotbench.build.winograd import from_pronoun, from_question, pairs
from glotbench.errors import DataError

REPO = Path(__file__).resolve().parents[1]
def _hulu() -> Path:
    from glotbench.paths import resolve_data_file

    return resolve_data_file("hulu")


def test_pronoun_replaced_by_each_candidate():
    s = "The trophy doesn't fit into the brown suitcase because it is too large."
    assert from_pronoun(s, "it", "the trophy") == ("The trophy doesn't fit into the brown suitcase because the trophy is too large.", "it")
    assert from_pronoun("It rained. It was cold.", "It", "the day", 1) == ("It rained. The day was cold.", "It")
    assert from_pronoun("Italy is big.", "it", "x") is None  # whole words only, case as given
    assert from_question("Kik kerülték az erőszakot?", "a tüntetők") == ("A tüntetők kerülték az erőszakot.", "Kik")
    recs = [("line 1", {"id": "w1", "sentence": s, "pronoun": "it", "candidate1": "the trophy", "candidate2": "the suitcase",
                        "correct": "The trophy"})]
    got = pairs(recs, id_field="id", sentence_field="sentence", candidate_fields=["candidate1", "candidate2"],
                correct_field="correct", pronoun_field="pronoun", source="s.jsonl")
    assert [(p["id"], p["sentence2"].split("because ")[1], p["label"]) for p in got] == [
        ("w1-0", "the trophy is too large.", "1"), ("w1-1", "the suitcase is too large.", "0")]
    bad = [("line 1", {**recs[0][1], "correct": "the bag"})]
    with pytest.raises(DataError, match=r"^s.jsonl: line 1: field 'correct': 'the bag' is none of the candidates"):
        pairs(bad, id_field="id", sentence_field="sentence", candidate_fields=["candidate1", "candidate2"],
              correct_field="correct", pronoun_field="pronoun", source="s.jsonl")


def test_cli_pairs_run_as_a_wnli_task(stub_server, tmp_path):
    """The written pairs are HuWNLI records: the hulu.wnli task file, pointed at them, runs and scores."""
    import os
    import subprocess
    import sys

    schemas = [{"id": "1", "sentence": "The trophy doesn't fit into the brown suitcase because it is too large.",
                "pronoun": "it", "a": "the trophy", "b": "the suitcase", "right": "the trophy"},
               {"id": "2", "sentence": "The trophy doesn't fit into the brown suitcase because it is too small.",
                "pronoun": "it", "a": "the trophy", "b": "the suitcase", "right": "the suitcase"}]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(x) + "\n" for x in schemas), encoding="utf-8")
    out = cli("winograd", "-i", "s.jsonl", "-o", "pairs.jsonl", "--candidates", "a,b", "--correct-field", "right",
              "--pronoun-field", "pronoun", cwd=tmp_path)
    assert "schemas 2 · pairs 4 (label 1: 2, 0: 2)" in out.stdout
    assert [p["label"] for p in lines(tmp_path / "pairs.jsonl")] == ["1", "0", "0", "1"]
    spec = yaml.safe_load((REPO / "src/glotbench/benchmarks/hulu/tasks/wnli.yaml").read_text(encoding="utf-8"))
    spec.pop("source", None)
    spec.update(name="local.built_wnli", suites=[], fewshot={"n": 0},
                dataset={"format": "jsonl", "splits": {"test": "pairs.jsonl"}, "eval_split": "test"})
    (tmp_path / "wnli.yaml").write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    base = stub_server("--answer", "A")  # always "entailed": right on the two label-1 pairs
    done = subprocess.run([sys.executable, "-m", "glotbench", "run", "-t", "wnli.yaml", "-m", "openai:stub", "--base-url", base,
                           "-o", "run"], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO / "src")},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    res = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))
    assert res["tasks"]["local.built_wnli"]["metrics"]["accuracy"]["value"] == 0.5


def test_cli_on_huws_reproduces_the_published_huwnli_pairs(tmp_path):
    HULU = _hulu()
    src = HULU / "HuWS" / "huws.json"
    if not src.is_file():
        pytest.skip("HuWS not in shared/data")
    out = cli("winograd", "-i", str(src), "-o", "wnli.jsonl", "--sentence-field", "Sent", "--candidates", "Answer1,Answer2",
              "--correct-field", "CorrectAnswer", "--question-field", "Question", "--id-field", "ID", cwd=tmp_path)
    assert "schemas 244 · pairs 488 (label 1: 244, 0: 244)" in out.stdout
    ours = lines(tmp_path / "wnli.jsonl")
    published = [r for f in ("train", "dev", "test") for r in json.loads((HULU / "HuWNLI" / f"{f}.json").read_text(encoding="utf-8"))]
    bag = lambda s: tuple(sorted(re.findall(r"\w+", s.casefold())))  # noqa: E731  (HuWNLI sometimes reorders the words)
    ref: dict = {}
    for r in published:
        ref.setdefault((r["sentence1"], bag(r["sentence2"])), set()).add(r["label"])
    premises = {r["sentence1"] for r in published}
    mine = [p for p in ours if p["sentence1"] in premises]
    same = [p for p in mine if (p["sentence1"], bag(p["sentence2"])) in ref]
    # measured: 470 of our pairs have a HuWNLI premise, 276 the same words as a published hypothesis
    # (the rest: a wh-word in another case, a name spelt otherwise); every one of those has its label
    assert len(mine) == 470 and len(same) >= 270
    assert all(ref[(p["sentence1"], bag(p["sentence2"]))] == {p["label"]} for p in same)


HUCB = [  # HuLU §3.3's own example (3) and two made in its manner
    {"id": "0", "premise": "Hogyan bizonyítom hogy itt történt a baleset?", "hypothesis": "Itt történt a baleset.", "label": "neutral"},
    {"id": "1", "premise": "Nem hiszem, hogy Péter eljön ma este.", "hypothesis": "Péter eljön ma este.", "label": "contradiction"},
    {"id": "2", "premise": "Ha tudtad volna, hogy esik, hoztál volna esernyőt.", "hypothesis": "Esik.", "label": "neutral"},
]


def test_hucb_tagged_by_marker_and_sliced(stub_server, tmp_path):
    (tmp_path / "hucb.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in HUCB), encoding="utf-8")
    resp = tmp_path / "r.jsonl"
    resp.write_text("".join(json.dumps({"match": m, "response": r}, ensure_ascii=False) + "\n" for m, r in [
        ("Premissza: Hogyan bizonyítom", "Kérdő mondat.\nLABEL: kérdés"),
        ("Premissza: Nem hiszem", "LABEL: tagadás"),
        ("Premissza: Ha tudtad", "feltételes, talán modális"),  # names no label: unparsed, counted
    ]), encoding="utf-8")
    base = stub_server("--answer", "A", "--responses", str(resp))
    out = cli("classify", "-i", "hucb.jsonl", "--labels", "hucb-markers", "--judge", "openai:stub", "--judge-base-url", base,
              "-o", "tagged.jsonl", cwd=tmp_path)
    assert "unparsed 1" in out.stdout
    assert [r["marker"] for r in lines(tmp_path / "tagged.jsonl")] == ["kérdés", "tagadás", None]
    spec = yaml.safe_load((REPO / "src/glotbench/benchmarks/hulu/tasks/cb.yaml").read_text(encoding="utf-8"))
    spec.pop("source", None)
    spec.update(name="local.hucb_by_marker", suites=[], slice_by=["marker"], fewshot={"n": 0},
                dataset={"format": "jsonl", "splits": {"dev": "tagged.jsonl"}, "eval_split": "dev"})
    spec["fields"]["marker"] = "marker"
    (tmp_path / "cb_marker.yaml").write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    import os
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "glotbench", "run", "-t", "cb_marker.yaml", "-m", "openai:stub", "--base-url", base,
                           "-o", "run"], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO / "src")}, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    res = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))
    slices = res["tasks"]["local.hucb_by_marker"]["slices"]["marker"]
    # one slice per marker; the item the judge named no marker for is its own slice ("None"), counted, not guessed
    assert {k: v["n"] for k, v in slices.items()} == {"kérdés": 1, "tagadás": 1, "None": 1}
    assert set(slices["kérdés"]["metrics"]) == {"weighted_f1", "accuracy"}
