"""`build select --swiss`: Swiss rounds on a deterministic judge (injected on purpose), with the
pairing of every round asserted; and the CLI against a stub judge, journaled."""

from __future__ import annotations

import json

from glotbench.build.swiss import pair_round, parse_better, rounds_for, swiss, Entry
from test_build_qa import cli, lines


def quality_judge(pairs):
    """The better item is the one with the higher ``q``; equal ``q`` is no verdict (a draw)."""
    out = []
    for a, b in pairs:
        out.append("A" if a["q"] > b["q"] else "B" if b["q"] > a["q"] else None)
    return out


def test_swiss_pairing_rounds_and_selection():
    qs = [3, 1, 4, 1, 5, 9, 2, 6]
    items = [{"id": str(i), "q": q} for i, q in enumerate(qs)]
    seen = []
    sel, rest = swiss(items, 2, quality_judge, on_round=lambda r, pairs: seen.append((r, pairs)))
    assert rounds_for(8) == 3
    assert seen == [
        (1, [(0, 1), (2, 3), (4, 5), (6, 7)]),   # all on 0: input order
        (2, [(0, 2), (5, 7), (1, 3), (4, 6)]),   # winners (0, 2, 5, 7) together, then the rest
        (3, [(2, 5), (0, 4), (7, 1), (3, 6)]),   # 2 and 5 on 2; 0, 4, 7 on 1; 1 and 3 on 0.5 (a draw); 6 on 0
    ]
    # final: 5 on 3; 2, 4, 7 on 2 -> Buchholz 4.5, 5.0, 4.5 -> 4 second
    assert [i["id"] for i in sel] == ["5", "4"]
    assert sel[1]["swiss"] == {"score": 2.0, "buchholz": 5.0, "rank": 2, "rounds": 3, "opponents": ["5", "6", "0"], "bye": False}
    assert [i["id"] for i in rest][:2] == ["2", "7"]  # same score and Buchholz: input order


def test_odd_group_gets_a_bye_and_no_rematch():
    es = [Entry(i, {"id": str(i)}) for i in range(5)]
    pairs, bye = pair_round(es)
    assert bye.idx == 4 and [(a.idx, b.idx) for a, b in pairs] == [(0, 1), (2, 3)]
    es[0].opponents, es[1].opponents = [1], [0]
    es[4].bye = True
    pairs, bye = pair_round(es)
    assert bye.idx == 3  # 4 had its bye
    assert (0, 1) not in [(a.idx, b.idx) for a, b in pairs]


def test_small_group_is_kept_without_calls():
    calls = []
    sel, rest = swiss([{"id": "a"}, {"id": "b"}], 2, lambda p: calls.append(p) or [])
    assert len(sel) == 2 and rest == [] and calls == []


def test_parse_better():
    assert parse_better("A is longer... BETTER: B") == "B"
    assert parse_better("**Better:** A") == "A"
    assert parse_better("both fine") is None


def test_select_cli_with_stub_judge_is_journaled(stub_server, tmp_path):
    items = [{"id": f"i{n}", "group": "g1" if n < 5 else "g2", "question": f"Otázka číslo {n}?"} for n in range(7)]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    base = stub_server("--answer", "Question A is clearer. BETTER: A")
    args = ("select", "--swiss", "-i", str(src), "-o", "sel.jsonl", "-k", "2", "--judge", "openai:stub",
            "--judge-base-url", base, "--group-field", "group")
    out = cli(*args, "--dry-run", cwd=tmp_path)
    assert "groups 2 · k 2 · pairwise calls at most 6" in out.stdout  # g1: 5 items, 3 rounds x 2 pairs; g2: 2 <= k
    out = cli(*args, cwd=tmp_path)
    # round 3 pairs i2 with i3 again (no one else left unmet): the same request, asked earlier in this
    # run: a repeat, not a journal hit (the journal was empty when the step started; issue 41)
    assert "kept 4 · dropped 3" in out.stdout
    assert "calls sent 5 · from the journal 0 · repeated in this run 1 · failed 0" in out.stdout
    kept = lines(tmp_path / "sel.jsonl")
    assert [k["id"] for k in kept if k["group"] == "g1"] == ["i0", "i2"]  # "A" always wins: the earlier one
    out = cli(*args, cwd=tmp_path)
    assert "calls sent 0 · from the journal 6" in out.stdout
    assert kept[0]["swiss"]["opponents"] == ["i1", "i2", "i4"] and kept[0]["provenance"][-1]["step"] == "select_swiss"


def test_paper_batches_two_of_five_with_elimination():
    from glotbench.build.swiss import parse_best, swiss_batches

    qs = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8]  # 12 candidates, the judge picks the 2 highest q of each batch
    items = [{"id": str(i), "q": q} for i, q in enumerate(qs)]

    def judge(batches):
        return [sorted(range(len(b)), key=lambda i: (-b[i]["q"], i))[:2] for b in batches]

    seen = []
    sel, rest = swiss_batches(items, 2, judge, on_round=lambda r, g: seen.append((r, g)))
    # round 1: input order in batches of 5 (+ a batch of 2 = bye); picks 2,4 | 5,7 | bye 10,11
    assert seen[0] == (1, [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11]])
    # 12 -> keep ceil(12 * 0.35) = 5: the six on 1 point, input order breaks the tie
    assert seen[1] == (2, [[2, 4, 5, 7, 10]])
    # round 2 picks 5 (q 9) and 7 (q 6): 5 left -> ceil(5 * 0.35) = 2 = k: done
    assert len(seen) == 2
    assert [i["id"] for i in sel] == ["5", "7"]
    assert sel[0]["swiss"]["score"] == 2 and rest[0]["swiss"]["eliminated_in_round"] == 2
    assert {i["id"]: i["swiss"]["eliminated_in_round"] for i in rest}["11"] == 1
    assert parse_best('I pick these. {"best": [3, 1]}', 5, 2) == [2, 0]
    assert parse_best("no idea", 5, 2) is None and parse_best('{"best": [9]}', 5, 2) is None


def test_select_cli_paper_batches(stub_server, tmp_path):
    items = [{"id": f"i{n}", "question": f"Otázka číslo {n}?"} for n in range(12)]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    base = stub_server("--answer", 'Questions 2 and 4 are best. {"best": [2, 4]}')
    args = ("select", "--swiss", "-i", str(src), "-o", "sel.jsonl", "-k", "2", "--judge", "openai:stub",
            "--judge-base-url", base, "--batch", "5", "--pick", "2", "--eliminate", "0.65")
    out = cli(*args, "--dry-run", cwd=tmp_path)
    assert "batches of 5, pick 2, eliminate 0.65 · round 1 calls at most 3" in out.stdout
    out = cli(*args, cwd=tmp_path)
    # round 1: batches i0-i4, i5-i9 judged (picks positions 2, 4), i10-i11 a bye; 5 stay: i1 i3 i6 i8 i10;
    # round 2: one batch, picks i3 and i8
    assert "kept 2 · dropped 10" in out.stdout and "calls sent 3" in out.stdout
    assert [k["id"] for k in lines(tmp_path / "sel.jsonl")] == ["i3", "i8"]
    assert lines(tmp_path / "sel.jsonl")[0]["provenance"][-1]["batch"] == 5
