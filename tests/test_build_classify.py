"""`build classify --labels FILE|NAME` (issue 55; OpenHuEval C.3's 8 dimensions, Chinese SimpleQA's 6
topics, HuLU §3.3's HuCB markers shipped): end to end with the stub as model and judge (build qa ->
build criteria --criterion-file -> build classify), strict label parsing (unparsed: counted, not
guessed), resumable through the journal, a bad label file refused before any request. Fresh processes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from test_build_criterion_file import GOOD, _responses
from test_build_qa import PASSAGES, cli, lines

from glotbench.build.classify import builtin_sets, load_label_set, parse_label

# the papers: shared/seeds beside the checkout (a worktree sits one folder deeper)
SEEDS = next((p for p in (Path(__file__).resolve().parents[k] / "shared" / "seeds" for k in (2, 3)) if p.is_dir()),
             Path("shared/seeds"))
TOPICS = """name: my-topics
field: topic
labels:
  nature: mountains, rivers, nature
  buildings: bridges, castles, buildings
other: other
prompt:
  cs: |
    Zařaď otázku do jedné kategorie:
    {{ labels_block }}
    Otázka: {{ question }}
    Na konci napiš LABEL: <kategorie>.
"""


def _log(base: str) -> list:
    return httpx.get(base.replace("/v1", "/_log"), timeout=10).json()["log"]


def test_parse_label_is_strict():
    labels = {"l": "L", "lcc": "LCC", "others": "Others", "modális tagadás": "modális tagadás", "modális": "modális"}
    assert parse_label("Because ...\nLABEL: LCC", labels) == "LCC"
    assert parse_label("**Label:** `lcc`.", labels) == "LCC"
    assert parse_label("LCC", labels) == "LCC"  # the whole reply is one label
    assert parse_label("címke: modális tagadás", labels) == "modális tagadás"
    assert parse_label("LABEL: modális", labels) == "modális"
    assert parse_label("<think>LABEL: L</think>LABEL: Others", labels) == "Others"
    for bad in ("I think it is LCC", "LABEL: LCC or L", "LABEL: L\nLABEL: LCC", "LABEL: Culture", "", "L, LCC"):
        assert parse_label(bad, labels) is None, bad
    assert parse_label("LABEL: L\nso, LABEL: L", labels) == "L"  # several lines that agree


def test_shipped_sets_are_the_papers():
    sets = {name: load_label_set(p) for name, p in builtin_sets().items()}
    assert set(sets) >= {"openhueval-dims", "csqa-topics", "hucb-markers"}
    dims = sets["openhueval-dims"]
    assert dims.labels == ["L", "H", "LCC", "EP", "GP", "F", "PPL", "BF", "Others"] and dims.field == "dimension"
    markers = sets["hucb-markers"]
    assert len(markers.labels) == 10 and markers.field == "marker"
    assert len(sets["csqa-topics"].labels) == 6
    hulu = next(iter(sorted(SEEDS.glob("002_*.txt"))), None)
    assert hulu is not None or not Path("/work/shared/seeds").is_dir()  # not skipped where the papers are
    if hulu is not None:  # HuLU §3.3's list, re-read from the paper
        text = " ".join(hulu.read_text(encoding="utf-8").replace("-\n", "").split())  # words hyphenated at line ends
        listed = re.search(r"10 féle marker figyelhető meg: (.*?)\.", text).group(1)
        assert [x.strip() for x in listed.split(",")] == markers.labels
    oh = next(iter(sorted(SEEDS.glob("000_*.txt"))), None)
    if oh is not None:  # Table 2's descriptions, verbatim
        text = oh.read_text(encoding="utf-8")
        for desc in ("Historical events and historical development of Hungary", "Famous figures of Hungary",
                     "Business and finance in Hungary", "Education system in Hungary and related professions"):
            assert desc in text and any(desc.lower() in v.lower() for v in dims.spec.labels.values())
    from glotbench.paths import resolve_data_file

    data = resolve_data_file("chinese_simpleqa/chinese_simpleqa.jsonl")
    if data.is_file():  # the released data's primary categories
        cats = {json.loads(x)["primary_category"] for x in data.read_text(encoding="utf-8").splitlines() if x.strip()}
        assert cats == set(sets["csqa-topics"].labels)
    for ls in sets.values():  # every shipped prompt shows every label
        for lang in ls.spec.prompt:
            text = ls.prompt({"question": "Q", "answer": "A", "premise": "P", "hypothesis": "H"}, lang)
            assert all(lab in text for lab in ls.labels)


def test_a_built_qa_set_filtered_by_a_user_criterion_is_labelled(stub_server, tmp_path):
    resp = _responses(tmp_path / "r.jsonl", [
        ("Sněžka je", '{"question": "Kolik metrů měří Sněžka?", "answer": "1603"}'),
        ("Vltava je", '{"question": "Kde pramení Vltava?", "answer": "Na Šumavě"}'),
        ("Karlův most je", '{"question": "Kdy začala stavba Karlova mostu?", "answer": "1357"}'),
        # the stub answers the first match: the classify prompts (their label list) before the criterion's
        ("Zařaď otázku do jedné kategorie:\n- nature: mountains, rivers, nature\n- buildings: bridges, castles, buildings\n"
         "- other\nOtázka: Kolik", "Hora.\nLABEL: nature"),
        ("- other\nOtázka: Kde pramení", "It is a river, so nature or maybe other"),  # names no label: unparsed
        ("- other\nOtázka: Kdy začala", "**LABEL:** Buildings"),
        ("Otázka: Kolik metrů měří Sněžka?", "ANSWER: ANO"),
        ("Otázka: Kde pramení Vltava?", "ANSWER: ANO"),
        ("Otázka: Kdy začala stavba", "ANSWER: ANO"),
    ])
    base = stub_server("--answer", "nevím", "--responses", str(resp), "--log-bodies")
    cli("qa", "-p", str(PASSAGES), "-l", "cs", "-m", "openai:stub", "--base-url", base, "-o", "qa.jsonl", "-n", "3", cwd=tmp_path)
    (tmp_path / "cz.yaml").write_text(GOOD, encoding="utf-8")
    out = cli("criteria", "-i", "qa.jsonl", "--judge", "openai:stub", "--judge-base-url", base, "-o", "crit.jsonl",
              "--criterion-file", "cz.yaml", cwd=tmp_path)
    assert "kept 3" in out.stdout
    (tmp_path / "topics.yaml").write_text(TOPICS, encoding="utf-8")
    args = ("classify", "-i", "crit.jsonl", "--labels", "topics.yaml", "--judge", "openai:stub", "--judge-base-url", base,
            "-o", "labelled.jsonl")
    out = cli(*args, cwd=tmp_path)
    assert "in 3 · kept 3 · dropped 0" in out.stdout and "unparsed 1" in out.stdout and "calls sent 3" in out.stdout
    got = {it["id"]: it for it in lines(tmp_path / "labelled.jsonl")}
    assert {k: v["topic"] for k, v in got.items()} == {"p2-q0": "nature", "p3-q0": None, "p1-q0": "buildings"}
    assert got["p3-q0"]["classify"]["my-topics"]["status"] == "unparsed"
    assert got["p2-q0"]["provenance"][-1]["step"] == "classify" and got["p2-q0"]["criteria"]["czech_specific"]["verdict"] == "pass"
    n_before = len(_log(base))
    again = cli(*args, "--unparsed", "drop", "-o", "l2.jsonl", cwd=tmp_path)  # resumable: all from the journal
    assert "calls sent 0 · from the journal 3" in again.stdout and len(_log(base)) == n_before
    assert "kept 2 · dropped 1" in again.stdout
    assert lines(tmp_path / "l2.dropped.jsonl")[0]["removed_by"] == "classify:my-topics"
    # a fourth item added: only its call is sent
    more = lines(tmp_path / "crit.jsonl") + [{"id": "new", "language": "cs", "question": "Kde leží Brno?", "answer": "Na Moravě"}]
    (tmp_path / "more.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in more), encoding="utf-8")
    out = cli("classify", "-i", "more.jsonl", "--labels", "topics.yaml", "--judge", "openai:stub", "--judge-base-url", base,
              "-o", "l3.jsonl", cwd=tmp_path)
    assert "calls sent 1 · from the journal 3" in out.stdout and len(_log(base)) == n_before + 1
    # a shipped set by name: OpenHuEval's dimensions, the English prompt (the items are Czech: the file's default)
    out = cli("classify", "-i", "crit.jsonl", "--labels", "openhueval-dims", "--judge", "openai:stub", "--judge-base-url", base,
              "-o", "dims.jsonl", "--dry-run", cwd=tmp_path)
    assert "items 3 · labels 9 · calls 3" in out.stdout and "to send 3" in out.stdout


@pytest.mark.parametrize("text,want", [
    ("name: t\nlabels: {a: x, b: y}\nprompt: {cs: '{{ question }}'}\n", "field 'prompt.cs': never shows the labels"),
    ("name: t\nlabels: {a: x}\nprompt: {cs: '{{ labels_block }}'}\n", "field 'labels': Dictionary should have at least 2 items"),
    ("name: t\nlabels: {a: x, A: y}\nprompt: {cs: '{{ labels_block }}'}\n", "field 'labels': 'A' reads the same as 'a'"),
    ("name: t\nlabels: {a: x, b: y}\nprompt: {cs: '{{ labels_block }}{{ lipsum.__globals__ }}'}\n", "the template reaches for Python internals"),
    ("name: t\nlabels: {a: x, b: y}\nprompt: {cs: '{{ labels_block }}{{ topic_hint }}'}\n", "record 1: field 'topic_hint': missing"),
    ("name: t\nlabels: {a: x, b: y}\nprompt: {cs: '{{ labels_block }}'}\ncolour: red\n", "field 'colour': unknown field"),
])
def test_a_bad_label_set_is_one_line_and_sends_nothing(stub_server, tmp_path, text, want):
    (tmp_path / "qa.jsonl").write_text(json.dumps({"id": "a", "language": "cs", "question": "Q?", "answer": "A"}) + "\n",
                                       encoding="utf-8")
    (tmp_path / "bad.yaml").write_text(text, encoding="utf-8")
    base = stub_server()
    out = cli("classify", "-i", "qa.jsonl", "--labels", "bad.yaml", "--judge", "openai:stub", "--judge-base-url", base,
              "-o", "c.jsonl", cwd=tmp_path, check=False)
    err = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert out.returncode != 0 and len(err) == 1 and want in err[0], out.stderr
    assert _log(base) == [] and not (tmp_path / "c.jsonl").exists()
    out = cli("classify", "-i", "qa.jsonl", "--labels", "no-such-set", "--judge", "openai:stub", "--judge-base-url", base,
              "-o", "c.jsonl", cwd=tmp_path, check=False)
    assert "neither a file nor a shipped label set" in out.stderr and "openhueval-dims" in out.stderr
    out = cli("classify", "--labels", "list", cwd=tmp_path)
    assert "openhueval-dims: 9 labels -> field 'dimension'" in out.stdout and "hucb-markers: 10 labels -> field 'marker'" in out.stdout


def test_compare_field_agreement_with_known_labels(stub_server, tmp_path):
    """--compare-field: the judge's topics against the data's own categories (Cohen's kappa, checked
    against the plain restatement in tests/value_oracles.py)."""
    from value_oracles import plain_cohen_kappa

    gold = ["中华文化", "社会", "社会", "自然与自然科学", "中华文化"]
    said = ["中华文化", "社会", "自然与自然科学", "自然与自然科学", None]  # the last: unparsed
    items = [{"id": f"z{i}", "language": "zh", "question": f"问题{i}？", "answer": "答", "primary_category": g}
             for i, g in enumerate(gold)]
    (tmp_path / "zh.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    resp = tmp_path / "r.jsonl"
    resp.write_text("".join(json.dumps({"match": f"问题：问题{i}？", "response": f"LABEL: {s}" if s else "不确定"},
                                       ensure_ascii=False) + "\n" for i, s in enumerate(said)), encoding="utf-8")
    base = stub_server("--answer", "?", "--responses", str(resp))
    out = cli("classify", "-i", "zh.jsonl", "--labels", "csqa-topics", "--judge", "openai:stub", "--judge-base-url", base,
              "-o", "t.jsonl", "--compare-field", "primary_category", cwd=tmp_path)
    k = plain_cohen_kappa(gold[:4], said[:4])
    assert f"Cohen's kappa {k:.3f} [95% CI" in out.stdout and "equal 75.0% over 4 items (1 without" in out.stdout
    assert [r["topic"] for r in lines(tmp_path / "t.jsonl")] == said
