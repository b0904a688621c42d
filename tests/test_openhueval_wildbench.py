import json
from pathlib import Path

import pytest

from glotbench.errors import DataError
from glotbench.benchmarks.openhueval import wildbench as wb
from glotbench.paths import resolve_data_file

FIXTURE = Path(__file__).parent / "fixtures" / "hu_wildbench_sample.jsonl"

JUDGE_REPLY = """The response names three dishes and gives practical advice.

```
{
    "strengths": "Megnevezi a gulyáslevest és a lángost, és tanácsot ad a napi menühöz.",
    "weaknesses": "Nem említi a Központi Vásárcsarnokot.",
    "score": "8"
}
```"""


@pytest.fixture(scope="module")
def records():
    if not resolve_data_file(f"openhueval/prompts/{wb.JUDGE_FILE}").is_file():
        pytest.skip("OpenHuEval prompt files not found under the data root")
    return wb.load(str(FIXTURE))


def test_fixture_loads(records):
    assert [r["session_id"] for r in records] == [f"hwb-fixture-00{i}" for i in range(1, 6)]
    assert all(len(r["checklist"]) >= 8 for r in records)  # the paper keeps questions with >= 8 items


def test_bad_records_are_one_line_errors(tmp_path):
    rec = json.loads(FIXTURE.read_text(encoding="utf-8").splitlines()[0])
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({k: v for k, v in rec.items() if k != "checklist"}) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"hwb-fixture-001 lacks field 'checklist'"):
        wb.load(str(bad))
    rec2 = dict(rec, turn=rec["turn"] + [{"role": "assistant", "content": "x"}])
    bad.write_text(json.dumps(rec2) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="last item of field 'turn'") as err:
        wb.load(str(bad))
    assert "\n" not in str(err.value)


def test_messages_and_history(records):
    multi = records[2]
    assert wb.build_messages(multi) == multi["turn"]
    assert wb.history_text(multi) == (
        "USER: Mikor kell beíratni a gyereket általános iskolába?\n\n"
        "ASSISTANT: Magyarországon általában áprilisban van az általános iskolai beiratkozás.\n\n"
    )
    assert wb.history_text(records[0]) == ""


def test_judge_prompt(records):
    r = records[0]
    p = wb.build_judge_prompt(r, "<think>gondolkodom</think>Kóstold meg a lángost!")
    assert "<|begin_of_query|>\n\n" + r["turn"][-1]["content"] + "\n\n<|end_of_query|>" in p
    assert "<|begin_of_checklist|>\n\n- " + r["checklist"][0] + "\n- " in p
    assert "<|begin_of_response|>\n\nKóstold meg a lángost!\n\n<|end_of_response|>" in p
    for ph in ("{history}", "{user_query}", "{checklist}", "{prediction}"):
        assert ph not in p


def test_parse_judgement():
    j = wb.parse_judgement(JUDGE_REPLY)
    assert j["score"] == 8.0
    assert j["strengths"].startswith("Megnevezi") and j["weaknesses"].startswith("Nem említi")
    # The reference pattern wants a quoted score; lenient mode also takes a bare number.
    bare = '{"strengths": "a", "weaknesses": "b", "score": 7}'
    assert wb.parse_judgement(bare)["score"] is None
    assert wb.parse_judgement(bare, lenient=True)["score"] == 7.0
    assert wb.parse_judgement('"score": "[1~10]"')["score"] is None
    assert wb.parse_judgement('"score": "11"')["score"] is None
    assert wb.parse_judgement("no json at all") == {"strengths": None, "weaknesses": None, "score": None}


def test_groups_and_wb_score(records):
    assert wb.task_groups(records[2]) == ["education_profession", "life_culture_custom"]
    assert wb.task_groups(records[4]) == ["life_culture_custom"]  # three tags, one group
    replies = [JUDGE_REPLY, '"score": "6"', '"score": "10"', "garbage", '"score": "5"']
    items = [wb.score(r, j) for r, j in zip(records, replies)]
    s = wb.summarize(items)
    assert s["wb_score"] == pytest.approx(10 * (8 + 6 + 10 + 5) / 4)  # mean x 10, no WildBench rescaling
    assert s["n_unparsed"] == 1 and s["n_items"] == 5
    by = wb.summarize_by_group(items)
    assert by["life_culture_custom"]["wb_score"] == pytest.approx(10 * (8 + 10 + 5) / 3)
    assert by["business_finance"]["wb_score"] == 60.0
    assert by["politics_policy_law"]["n_unparsed"] == 1
