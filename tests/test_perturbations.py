"""``run --perturb``: seeded perturbations of an item's input text (prompts/perturb.py), declared per
language pack, refused before any request when they do not apply, in the fingerprint; and
``compare --paired`` reporting the performance drop rate with an item-paired interval, checked
against a plain loop (tests/value_oracles.py). CLI calls are fresh subprocesses against the stub."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import httpx
import numpy as np
import pytest

from glotbench.errors import GlotbenchError
from glotbench.languages import get_pack
from glotbench.prompts import perturb
from glotbench.report.analysis.robustness import drop_rate
from value_oracles import plain_drop_rate

SRC = Path(__file__).resolve().parents[1] / "src"


# ------------------------------------------------------------------ the perturbations themselves

def test_strip_diacritics_czech_and_hungarian():
    assert perturb.strip_diacritics("Příliš žluťoučký kůň úpěl ďábelské ódy") == "Prilis zlutoucky kun upel dabelske ody"
    assert perturb.strip_diacritics("Árvíztűrő tükörfúrógép") == "Arvizturo tukorfurogep"
    assert perturb.strip_diacritics("plain ASCII") == "plain ASCII"


def test_translit_mongolian_is_mns_5217_and_russian_is_iso_9():
    # MNS 5217:2012: х kh, ц ts, ж j, ө ö, ү ü, е ye, я ya, й i
    assert perturb.transliterate("Монгол Улсын хөгжил", "mn") == "Mongol Ulsyn khögjil"
    assert perturb.transliterate("Цэцэг жимс үзэм ерөнхий яам", "mn") == "Tsetseg jims üzem yerönkhii yaam"
    assert perturb.transliterate("ШУА", "mn") == "SHUA"
    # ISO 9:1995 / GOST 7.79-2000 system A: one Latin letter per Cyrillic letter
    assert perturb.transliterate("Щука съела ёжика, чай", "ru") == "Ŝuka sʺela ëžika, čaj"
    assert perturb.transliterate("Юля и Эхо", "ru") == "Ûlâ i Èho"


def test_opencc_converts_both_ways():
    pytest.importorskip("opencc")
    t2s = perturb.Perturber(["zh_t2s"], "zh", 1)
    s2t = perturb.Perturber(["zh_s2t"], "zh", 1)
    assert t2s.apply("漢字簡體轉換", "k") == "汉字简体转换"
    assert s2t.apply("汉字简体转换", "k") == "漢字簡體轉換"


def test_opencc_missing_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "opencc", None)
    with pytest.raises(GlotbenchError, match=r"glotbench\[zh\]"):
        perturb.Perturber(["zh_t2s"], "zh", 1)


def test_typos_are_seeded_keyboard_neighbours_at_the_rate():
    text = "the quick brown fox jumps over the lazy dog " * 200
    a = perturb.Perturber(["typos:0.1"], "en", 7).apply(text, "t:1")
    assert a == perturb.Perturber(["typos:0.1"], "en", 7).apply(text, "t:1")  # seeded
    assert a != perturb.Perturber(["typos:0.1"], "en", 8).apply(text, "t:1")
    changed = [(x, y) for x, y in zip(text, a) if x != y]
    letters = sum(c.isalpha() for c in text)
    assert 0.07 < len(changed) / letters < 0.13
    assert all(y in perturb.QWERTY_NEIGHBOURS[x] for x, y in changed)
    assert len(a) == len(text)


def test_case_and_whitespace():
    assert perturb.Perturber(["case"], "cs", 1).apply("Kolik Je HODIN?", "k") == "kolik je hodin?"
    out = perturb.Perturber(["whitespace"], "cs", 1).apply("a b c d e f g h", "k")
    assert out.split() == list("abcdefgh") and out != "a b c d e f g h"


@pytest.mark.parametrize("spec, why", [("nope", "unknown perturbation 'nope'"), ("typos:2", "typo rate"),
                                       ("case:0.1", "only typos takes a value")])
def test_a_bad_spec_is_one_line(spec, why):
    with pytest.raises(GlotbenchError, match=why):
        perturb.parse([spec])


def test_each_pack_declares_known_perturbations():
    for code in ("cs", "hu", "en", "mn", "zh", "ru"):
        declared = get_pack(code).perturbations
        assert declared and set(declared) <= set(perturb.PERTURBATIONS), code
    assert "strip_diacritics" in get_pack("cs").perturbations and "strip_diacritics" in get_pack("hu").perturbations
    assert "translit" in get_pack("mn").perturbations and "translit" not in get_pack("cs").perturbations
    assert {"zh_t2s", "zh_s2t"} <= set(get_pack("zh").perturbations)
    assert {"translit", "typos"} <= set(get_pack("ru").perturbations) and "strip_diacritics" not in get_pack("ru").perturbations


# ------------------------------------------------------------------ PDR against a plain loop

def test_drop_rate_equals_a_plain_loop():
    rng = random.Random(3)
    clean = [float(rng.random() < 0.7) for _ in range(57)]
    pert = [c if rng.random() < 0.8 else 1 - c for c in clean]
    got = drop_rate(clean, pert, n=500, seed=11)
    want = plain_drop_rate(clean, pert, n=500, seed=11)
    assert got.drop_rate == pytest.approx(want[0], abs=1e-12)
    assert [got.low, got.high] == pytest.approx([want[1], want[2]], abs=1e-12)
    assert got.low <= got.drop_rate <= got.high


def test_drop_rate_of_a_zero_clean_score_is_undefined():
    assert np.isnan(drop_rate([0.0, 0.0], [1.0, 0.0], n=50).drop_rate)


# ------------------------------------------------------------------ end to end on the stub

ITEMS = [{"id": f"i{k}", "q": (f"Příští otázka {k}?" if k < 6 else f"otazka {k}?"), "a": "ano"} for k in range(8)]


def _task(tmp_path: Path, language: str = "cs") -> Path:
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ITEMS), encoding="utf-8")
    path = tmp_path / "task.yaml"
    path.write_text("\n".join([f"name: my.perturbed_{language}", 'version: "1"', f"language: {language}",
                               f"dataset: {{format: jsonl, splits: {{test: {tmp_path / 'items.jsonl'}}}}}",
                               "fields: {id: id, question: q, target: a}", "output_type: generate",
                               "prompt: {user: '{{ question }}'}", "scorer: exact_match", "metrics: [exact_match]"]) + "\n",
                    encoding="utf-8")
    return path


def _stub(stub_server, tmp_path: Path) -> str:
    """Right ("ano") when the prompt has its diacritics, and for "otazka 1?"; wrong ("ne") otherwise."""
    resp = tmp_path / "responses.jsonl"
    resp.write_text(json.dumps({"match": "ř", "response": "ano"}) + "\n" + json.dumps({"match": "otazka 1?", "response": "ano"})
                    + "\n", encoding="utf-8")
    return stub_server("--answer", "ne", "--responses", str(resp), "--log-bodies")


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_API_KEY": "x", "PYTHONPATH": str(SRC)}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], env=env, capture_output=True, text=True,
                          timeout=240, cwd=cwd)


def _run(base: str, task: Path, out: Path, *args: str) -> subprocess.CompletedProcess:
    return _cli("run", "-m", "openai:stub", "--base-url", base, "-t", str(task), "-o", str(out), "--no-progress", *args,
                cwd=out.parent)


def _log(base: str) -> list:
    return httpx.get(base.replace("/v1", "/_log")).json()["log"]


def test_a_perturbation_the_language_does_not_declare_is_refused_before_any_request(stub_server, tmp_path):
    base = _stub(stub_server, tmp_path)
    task = _task(tmp_path)
    for spec, words in (("translit", "does not apply to task my.perturbed_cs (language cs)"),
                        ("zh_t2s", "does not apply"), ("typo", "unknown perturbation 'typo'")):
        done = _run(base, task, tmp_path / "run", "--perturb", spec)
        assert done.returncode == 2, done.stderr
        lines = [x for x in done.stderr.splitlines() if x.strip()]
        assert len(lines) == 1 and words in lines[0], done.stderr
    assert len(_log(base)) == 0
    assert not (tmp_path / "run" / "journal.sqlite").exists()


def test_strip_diacritics_perturbs_the_input_not_the_reference_and_compare_gives_the_drop(stub_server, tmp_path):
    base = _stub(stub_server, tmp_path)
    task = _task(tmp_path)
    clean, pert = tmp_path / "clean", tmp_path / "pert"
    assert _run(base, task, clean).returncode == 0
    sent_clean = len(_log(base))
    done = _run(base, task, pert, "--perturb", "strip_diacritics")
    assert done.returncode == 0, done.stderr
    bodies = [json.dumps(e["body"], ensure_ascii=False) for e in _log(base)[sent_clean:]]
    assert len(bodies) == 8 and not any("ř" in b or "á" in b for b in bodies)
    assert any("ř" in json.dumps(e["body"], ensure_ascii=False) for e in _log(base)[:sent_clean])
    assert any("Pristi otazka 0?" in b for b in bodies)
    res_c = json.loads((clean / "results.json").read_text())
    res_p = json.loads((pert / "results.json").read_text())
    name = "my.perturbed_cs"
    fp_c, fp_p = res_c["tasks"][name]["fingerprint"], res_p["tasks"][name]["fingerprint"]
    assert fp_c["id"] != fp_p["id"] and fp_c["settings"] != fp_p["settings"] and fp_c["data"] == fp_p["data"]
    assert res_p["settings"]["perturb"] == ["strip_diacritics"]
    golds = {json.loads(x)["gold"] for x in (pert / "samples.jsonl").read_text().splitlines() if x.strip()}
    assert golds == {"ano"}  # the reference is not perturbed
    # a rerun resumes: nothing sent again
    n = len(_log(base))
    assert _run(base, task, pert, "--perturb", "strip_diacritics").returncode == 0
    assert len(_log(base)) == n
    cmp = _cli("runs", "compare", "--paired", str(clean), str(pert), "--n-boot", "400", "--json", str(tmp_path / "c.json"),
               cwd=tmp_path)
    assert cmp.returncode == 0, cmp.stderr
    assert "drop 1 - B/A" in cmp.stdout
    row = json.loads((tmp_path / "c.json").read_text())["paired"][0]
    order = [json.loads(x)["sample_id"] for x in (clean / "samples.jsonl").read_text().splitlines() if x.strip()]
    clean_v = [1.0 if int(i[1:]) < 6 else 0.0 for i in order]
    pert_v = [1.0 if i == "i1" else 0.0 for i in order]
    want = plain_drop_rate(clean_v, pert_v, n=400, seed=0)
    assert row["score_a"] == pytest.approx(0.75) and row["score_b"] == pytest.approx(0.125)
    assert row["drop_rate"] == pytest.approx(want[0]) == pytest.approx(5 / 6)
    assert [row["drop_low"], row["drop_high"]] == pytest.approx([want[1], want[2]])


def test_typos_use_the_languages_keyboard():
    """Czech and Hungarian typists make QWERTZ typos, accented letters included (ČSN 36 9050, MSZ 7795.3);
    English keeps the US QWERTY map, key for key as the grid always was."""
    from glotbench.prompts import keyboards

    cs = keyboards.layout_for("cs")[1]
    hu = keyboards.layout_for("hu")[1]
    # hand-read from the standards' key charts: the letters around a key
    # (the grid model, as for QWERTY: the three keys at columns c-1..c+1 of the rows above and below)
    assert set(cs["z"]) == set("tuřžýghj")  # z sits where QWERTY has y, below keys 5-7 (ř ž ý)
    assert set(cs["y"]) == set("xas")
    assert set(cs["ů"]) == set("lopú")  # right of l, below o p ú
    assert set(cs["ě"]) == set("šqwe")  # key 2: beside š, above q w e
    assert set(hu["í"]) == set("ya")  # the 102nd key, left of y
    assert set(hu["ű"]) == set("áőú")  # right of á, below ő ú
    assert set(hu["ö"]) == set("üopő")
    assert "z" in cs["t"] and "y" not in cs["t"] and "y" in perturb.QWERTY_NEIGHBOURS["t"]
    # the US map, re-stated as the original loop built it (same order: rng.choice depends on it)
    rows = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
    plain = {}
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            near = [row[j] for j in (c - 1, c + 1) if 0 <= j < len(row)]
            for o in (r - 1, r + 1):
                if 0 <= o < len(rows):
                    near += [rows[o][j] for j in (c - 1, c, c + 1) if 0 <= j < len(rows[o])]
            plain[ch] = "".join(near)
    assert keyboards.layout_for("en")[1] == plain == perturb.QWERTY_NEIGHBOURS
    text = "Příliš žluťoučký kůň úpěl ďábelské ódy. " * 100
    out = perturb.Perturber(["typos:0.2"], "cs", 3).apply(text, "t:1")
    changed = [(x, y) for x, y in zip(text, out) if x != y]
    assert changed and all(y.lower() in cs[x.lower()] for x, y in changed)
    assert any(x in "říšžýčůúěáé" for x, _ in changed)  # accented letters are typed on keys too
    assert all(c == o for c, o in zip(text, out) if c in "ťďň")  # dead-key letters are not one key: kept


def test_mongolian_typos_use_the_mongolian_cyrillic_keyboard():
    """Mongolian typists make typos on the Mongolian standard keyboard (xkeyboard-config symbols/mn: е щ after 0;
    ф ц у ж э н г ш ү з к ъ / й ы б ө а х р о л д п / я ч ё с м и т ь в ю), which the mn pack now declares."""
    from glotbench.prompts import keyboards

    name, mn = keyboards.layout_for("mn")
    assert "Mongolian Cyrillic" in name
    # hand-read from the chart: the keys around a key (the same grid model as QWERTY)
    assert set(mn["а"]) == set("өхжэнсми")  # home row, under ж э н, over с м и
    assert set(mn["ү"]) == set("шзолд")  # under digits 8-0 (no letters there), over о л д
    assert set(mn["е"]) == set("щзкъ")  # the key after 0: beside щ, over з к ъ
    assert set(mn["я"]) == set("чйы")  # bottom-left corner
    assert set(mn) == set("ещфцужэнгшүзкъйыбөахролдпячёсмитьвю")  # every letter of the alphabet's 35 but none else
    assert "typos" in get_pack("mn").perturbations
    text = "Монгол Улсын нийслэл Улаанбаатар хотод өвөл хүйтэн байдаг. " * 60
    out = perturb.Perturber(["typos:0.2"], "mn", 5).apply(text, "t:1")
    changed = [(x, y) for x, y in zip(text, out) if x != y]
    assert changed and all(y.lower() in mn[x.lower()] for x, y in changed)
    assert any(x in "өү" for x, _ in changed) and any(x.isupper() and y.isupper() for x, y in changed)


def test_russian_typos_use_the_russian_jcuken_keyboard():
    """Russian typists make typos on the ЙЦУКЕН keyboard (GOST 6431-90; xkeyboard-config symbols/ru "basic":
    ё on the key left of 1, then й ц у к е н г ш щ з х ъ / ф ы в а п р о л д ж э / я ч с м и т ь б ю)."""
    from glotbench.prompts import keyboards

    name, ru = keyboards.layout_for("ru")
    assert "Russian" in name
    # hand-read from the chart: the keys around a key (the same grid model as QWERTY)
    assert set(ru["а"]) == set("впукесми")  # home row between в and п, under у к е, over с м и
    assert set(ru["й"]) == set("цёфы")  # top-left letter: ё above it (left of 1), ф ы below
    assert set(ru["ё"]) == set("й")  # left of 1, the only letter key of the digit row
    assert set(ru["э"]) == set("жзхъ")  # end of the home row, under з х ъ; below it only "/" (no letter)
    assert set(ru["ю"]) == set("блдж")  # end of the bottom row
    assert set(ru["я"]) == set("чфы")  # bottom-left corner
    assert set(ru) == set("абвгдеёжзийклмнопрстуфхцчшщъыьэюя")  # the 33 letters of the alphabet, none else
    assert len(ru) == 33 and "typos" in get_pack("ru").perturbations
    text = "Съешь же ещё этих мягких французских булок, да выпей чаю. Ёлка в Москве. " * 60
    out = perturb.Perturber(["typos:0.2"], "ru", 5).apply(text, "t:1")
    changed = [(x, y) for x, y in zip(text, out) if x != y]
    assert changed and all(y.lower() in ru[x.lower()] for x, y in changed)
    assert any(x in "ёъэ" for x, _ in changed) and any(x.isupper() and y.isupper() for x, y in changed)


def test_a_russian_task_is_transliterated_by_iso_9_and_refuses_what_the_ru_pack_does_not_declare(stub_server, tmp_path):
    """A task with `language: ru` finds the ru pack: translit sends ISO 9 Latin, strip_diacritics (not declared:
    it would turn й into и) stops before any request."""
    base = stub_server("--answer", "да", "--log-bodies")
    task = _task(tmp_path, "ru")  # the Czech items, replaced by Russian ones
    (tmp_path / "items.jsonl").write_text(
        "".join(json.dumps({"id": f"i{k}", "q": f"Щука съела ёжика {k}?", "a": "да"}, ensure_ascii=False) + "\n"
                for k in range(3)), encoding="utf-8")
    refused = _run(base, task, tmp_path / "bad", "--perturb", "strip_diacritics")
    assert refused.returncode == 2 and "does not apply to task my.perturbed_ru (language ru)" in refused.stderr
    assert len(_log(base)) == 0
    done = _run(base, task, tmp_path / "run", "--perturb", "translit")
    assert done.returncode == 0, done.stderr
    bodies = [json.dumps(e["body"], ensure_ascii=False) for e in _log(base)]
    assert len(bodies) == 3 and all("Ŝuka sʺela ëžika" in b for b in bodies)
    assert not any(ch in b for b in bodies for ch in "щъёжа")
