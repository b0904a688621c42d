"""`build criteria --criterion-file FILE` (issue 55; OpenHuEval B.1's Hungary-specific filter, Chinese
SimpleQA §3.3's category check): a user's criterion beside the built-in five. End to end with the stub
as model and judge (build qa -> build criteria with the file); a bad file or an item the file cannot
be filled for is one line naming file and field, and the stub receives 0 requests. Fresh processes."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from test_build_qa import PASSAGES, cli, lines

GOOD = """name: czech_specific
description: the question is about Czechia (OpenHuEval B.1's filter, for Czech)
language: cs
prompt:
  cs: |
    Týká se tato otázka specificky Česka?
    Otázka: {{ question }}
    Odpověď: {{ answer }}
    Na konci napiš ANSWER: ANO, nebo ANSWER: NE.
  en: "Is this about Czechia? {{ question }} End with ANSWER: YES or ANSWER: NO."
verdict:
  regex: 'ANSWER:\\s*(\\w+)'
  pass: [ANO, "YES"]   # quoted: YAML reads a bare YES as true
  fail: [NE, "NO"]
"""


def _log(base: str) -> list:
    return httpx.get(base.replace("/v1", "/_log"), timeout=10).json()["log"]


def _responses(path: Path, pairs: list[tuple[str, str]]) -> Path:
    path.write_text("".join(json.dumps({"match": m, "response": r}, ensure_ascii=False) + "\n" for m, r in pairs),
                    encoding="utf-8")
    return path


def test_a_user_criterion_filters_a_built_qa_set(stub_server, tmp_path):
    resp = _responses(tmp_path / "r.jsonl", [
        ("Sněžka je", '{"question": "Kolik metrů měří Sněžka?", "answer": "1603"}'),
        ("Vltava je", '{"question": "Kde pramení Vltava?", "answer": "Na Šumavě"}'),
        ("Karlův most je", '{"question": "Kdy začala stavba Karlova mostu?", "answer": "1357"}'),
        ("Otázka: Kolik metrů měří Sněžka?", "Je to česká hora.\nANSWER: ANO"),
        ("Otázka: Kde pramení Vltava?", "ANSWER: ano"),  # ignore_case (the default)
        ("Otázka: Kdy začala stavba", "Most je v Praze, ale ANSWER: NE"),
    ])
    base = stub_server("--answer", "nevím", "--responses", str(resp), "--log-bodies")
    out = cli("qa", "-p", str(PASSAGES), "-l", "cs", "-m", "openai:stub", "--base-url", base, "-o", "qa.jsonl", "-n", "3",
              cwd=tmp_path)
    assert "in 3 · kept 3" in out.stdout
    (tmp_path / "cz.yaml").write_text(GOOD, encoding="utf-8")
    args = ("criteria", "-i", "qa.jsonl", "--judge", "openai:stub", "--judge-base-url", base, "-o", "crit.jsonl",
            "--criterion-file", "cz.yaml")
    out = cli(*args, cwd=tmp_path)
    assert "in 3 · kept 2 · dropped 1" in out.stdout and "calls sent 3" in out.stdout
    kept = {k["id"]: k for k in lines(tmp_path / "crit.jsonl")}
    assert set(kept) == {"p2-q0", "p3-q0"} and set(kept["p2-q0"]["criteria"]) == {"czech_specific"}
    assert kept["p2-q0"]["criteria"]["czech_specific"]["verdict"] == "pass"
    prov = kept["p2-q0"]["provenance"][-1]
    assert prov["criteria"] == ["czech_specific"] and len(prov["criterion_files"]["czech_specific"]["sha256"]) == 64
    (d,) = lines(tmp_path / "crit.dropped.jsonl")
    assert d["id"] == "p1-q0" and d["removed_by"] == "criteria:czech_specific"
    # the prompt sent is the file's Czech template, filled from the item
    sent = [e for e in _log(base) if "Týká se tato otázka" in json.dumps(e, ensure_ascii=False)]
    assert len(sent) == 3
    # resumable: a rerun answers from the journal; beside a built-in criterion both are checked
    again = cli(*args, cwd=tmp_path)
    assert "calls sent 0 · from the journal 3" in again.stdout
    both = cli(*args[:-2], "-o", "c2.jsonl", "--criterion-file", "cz.yaml", "--criterion", "time_stable", cwd=tmp_path)
    assert "from the journal 3" in both.stdout
    for it in lines(tmp_path / "c2.jsonl") + lines(tmp_path / "c2.dropped.jsonl"):
        assert set(it["criteria"]) == {"time_stable", "czech_specific"}


BAD = {
    "unknown field": ("name: x\nprompt: {en: '{{ question }}'}\nverdit: {rule: verdict}\n", "field 'verdit': unknown field"),
    "unsafe template": ("name: x\nprompt: {en: '{{ question.__class__ }}'}\n", "field 'prompt.en': the template reaches for Python internals"),
    "syntax": ("name: x\nprompt: {en: '{{ question '}\n", "field 'prompt.en': template syntax error line 1"),
    "taken name": ("name: grounded\nprompt: {en: '{{ question }}'}\n", "field 'name': 'grounded' is taken"),
    "bad name": ("name: 'Drop Table'\nprompt: {en: '{{ question }}'}\n", "field 'name': 'Drop Table' is not a criterion name"),
    "no group": ("name: x\nprompt: {en: '{{ question }}'}\nverdict: {regex: 'VERDICT', pass: [A], fail: [B]}\n",
                 "field 'verdict.regex': needs a group"),
    "no fail words": ("name: x\nprompt: {en: '{{ question }}'}\nverdict: {regex: '(A)', pass: [A]}\n", "field 'verdict.fail'"),
    "both rules": ("name: x\nprompt: {en: '{{ question }}'}\nverdict: {rule: verdict, regex: '(A)'}\n", "field 'verdict': give exactly one"),
    "no prompt for language": ("name: x\nlanguage: hu\nprompt: {en: '{{ question }}'}\n", "field 'language': no prompt for 'hu'"),
    "missing item field": ("name: x\nprompt: {cs: '{{ question }} {{ category }}'}\n",
                           "record 1: field 'category': missing, and "),
    "item language without prompt": ("name: x\nprompt: {en: '{{ question }}', hu: '{{ question }}'}\n",
                                     "record 1: field 'language': 'cs' has no prompt in "),
    "not yaml": ("name: [x\n", "invalid YAML at line"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_criterion_file_is_one_line_and_sends_nothing(stub_server, tmp_path, case):
    text, want = BAD[case]
    (tmp_path / "qa.jsonl").write_text(json.dumps({"id": "a", "language": "cs", "question": "Q?", "answer": "A"}) + "\n",
                                       encoding="utf-8")
    (tmp_path / "bad.yaml").write_text(text, encoding="utf-8")
    base = stub_server()
    out = cli("criteria", "-i", "qa.jsonl", "--judge", "openai:stub", "--judge-base-url", base, "-o", "c.jsonl",
              "--criterion-file", "bad.yaml", cwd=tmp_path, check=False)
    assert out.returncode != 0
    err = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert len(err) == 1 and want in err[0], out.stderr
    assert ("bad.yaml" in err[0]) or ("qa.jsonl" in err[0])
    assert _log(base) == []
    assert not (tmp_path / "c.jsonl").exists() and not (tmp_path / "build.journal.sqlite").exists()


def test_verdict_reading_first_last_only(tmp_path):
    from glotbench.build.criterion_file import load_criterion_file

    def crit(match: str):
        p = tmp_path / f"{match}.yaml"
        p.write_text(f"name: c_{match}\nprompt: {{en: x}}\nverdict: {{regex: 'V=(\\w+)', pass: [y], fail: [n], match: {match}}}\n",
                     encoding="utf-8")
        return load_criterion_file(p, set())

    assert crit("last").verdict("V=y then V=n") == "fail"
    assert crit("first").verdict("V=y then V=n") == "pass"
    assert crit("only").verdict("V=y then V=n") == "unparsed"
    assert crit("only").verdict("V=Y and V=y") == "pass"
    assert crit("last").verdict("V=maybe") == "unparsed" and crit("last").verdict("nothing") == "unparsed"


def test_shipped_criterion_files_by_name(stub_server, tmp_path):
    """OpenHuEval's Hungary-specific filter and Chinese SimpleQA's category check ship as criterion
    files (benchmark packages' files/build/criteria); an item lacking a field the prompt prints is
    refused before any request, an optional one the prompt only tests may be absent."""
    items = [{"id": "h1", "language": "hu", "question": "Mikor koronázták meg I. Istvánt?", "answer": "1000"},
             {"id": "h2", "language": "hu", "question": "Mennyi 2 + 2?", "answer": "4"}]
    (tmp_path / "hu.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    resp = _responses(tmp_path / "r.jsonl", [("Kérdés: Mikor koronázták", "Magyar történelem.\nVERDICT: PASS"),
                                             ("Kérdés: Mennyi 2 + 2?", "Általános.\nVERDICT: FAIL"),
                                             ("问题：汉十高速", "相关。\nVERDICT: PASS")])
    base = stub_server("--answer", "?", "--responses", str(resp), "--log-bodies")
    out = cli("criteria", "-i", "hu.jsonl", "--judge", "openai:stub", "--judge-base-url", base, "-o", "hu_kept.jsonl",
              "--criterion-file", "hungary-specific", cwd=tmp_path)
    assert "in 2 · kept 1 · dropped 1" in out.stdout
    assert lines(tmp_path / "hu_kept.jsonl")[0]["id"] == "h1"
    assert lines(tmp_path / "hu_kept.dropped.jsonl")[0]["removed_by"] == "criteria:hungary_specific"
    zh = [{"id": "z1", "language": "zh", "primary_category": "工程、技术与应用科学", "question": "汉十高速公路连接的武汉市和哪两个城市？",
           "answer": "孝感、十堰"}]
    (tmp_path / "zh.jsonl").write_text(json.dumps(zh[0], ensure_ascii=False) + "\n", encoding="utf-8")
    out = cli("criteria", "-i", "zh.jsonl", "--judge", "openai:stub", "--judge-base-url", base, "-o", "zh_kept.jsonl",
              "--criterion-file", "csqa-in-category", cwd=tmp_path)
    assert "kept 1 · dropped 0" in out.stdout  # no secondary_category: the prompt only tests it
    sent = [e for e in _log(base) if "类别：工程、技术与应用科学" in json.dumps(e, ensure_ascii=False)]
    assert len(sent) == 1
    n = len(_log(base))
    (tmp_path / "zh2.jsonl").write_text(json.dumps({**zh[0], "primary_category": None}, ensure_ascii=False) + "\n", encoding="utf-8")
    out = cli("criteria", "-i", "zh2.jsonl", "--judge", "openai:stub", "--judge-base-url", base, "-o", "x.jsonl",
              "--criterion-file", "csqa-in-category", cwd=tmp_path, check=False)
    assert out.returncode != 0 and "zh2.jsonl: record 1: field 'primary_category': missing" in out.stderr
    out = cli("criteria", "-i", "zh.jsonl", "--judge", "openai:stub", "--judge-base-url", base, "-o", "x.jsonl",
              "--criterion-file", "no-such-criterion", cwd=tmp_path, check=False)
    assert "no such criterion file" in out.stderr and "hungary-specific" in out.stderr
    assert len(_log(base)) == n


def test_a_name_the_prompt_only_tests_fails_at_render_before_any_request(stub_server, tmp_path):
    (tmp_path / "qa.jsonl").write_text(json.dumps({"id": "a", "question": "Q?"}) + "\n", encoding="utf-8")
    (tmp_path / "c.yaml").write_text("name: c\nprompt: {en: '{{ question }}{% if hint %} {{ hint }}{% endif %}'}\n", encoding="utf-8")
    base = stub_server()
    out = cli("criteria", "-i", "qa.jsonl", "--judge", "openai:stub", "--judge-base-url", base, "-o", "c.jsonl",
              "--criterion-file", "c.yaml", cwd=tmp_path, check=False)
    err = [x for x in out.stderr.splitlines() if x.strip()]
    assert out.returncode != 0 and len(err) == 1 and "qa.jsonl: record 1:" in err[0] and "'hint'" in err[0], out.stderr
    assert _log(base) == []
