"""Issue 54, contamination: `glotbench analyze contamination TASK --corpus FILE` flags exactly the items
planted in a crafted corpus (13-grams as lm-eval; the length-aware variant finds a short planted item
13-grams miss), agrees with a plain set-of-tuples re-statement, and refuses a gzip or missing corpus
with one line. Fresh subprocesses; the pure functions are also checked in process."""

from __future__ import annotations

import gzip
import json
import os
import random
import string
import subprocess
import sys
from pathlib import Path

import pytest

from glotbench.report.analysis import contamination as C
from value_oracles import ascii_norm, plain_ngram_overlap as _oracle, unicode_norm

SRC = str(Path(__file__).resolve().parents[1] / "src")
ENV = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}

TASK = """\
name: demo.contam
version: "1"
language: cs
dataset:
  format: jsonl
  splits: {test: DATA}
fields:
  question: q
  choices: "opts[*]"
  target: gold
output_type: multiple_choice
fewshot: {split: test, n: 0, seed: 7}
prompt:
  user: "{{ question }}\\n{{ choices_block }}"
extractor: {name: choice}
"""

WORDS = ("řeka most hrad les pole kniha okno stůl dveře město vesnice cesta auto vlak slunce měsíc hvězda moře "
         "hora údolí škola učitel žák pero papír tužka lampa strom květ tráva pes kočka kůň ptáček ryba").split()


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _items(rng: random.Random) -> list[str]:
    long = [f"Otázka {i}: " + _sentence(rng, 18) + "?" for i in range(10)]
    short = [f"Krátká {i} " + _sentence(rng, 8) for i in range(3)]  # 9 tokens: no 13-gram
    return long + short


@pytest.fixture
def crafted(tmp_path: Path):
    rng = random.Random(54)
    items = _items(rng)
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "q": t, "opts": ["ano", "ne"], "gold": "A"}, ensure_ascii=False) + "\n"
                            for i, t in enumerate(items)), encoding="utf-8")
    spec = tmp_path / "demo.contam.yaml"
    spec.write_text(TASK.replace("DATA", str(data)), encoding="utf-8")
    # a few KB of filler from another vocabulary, with three long items and one short item planted
    filler = [" ".join(rng.choice(string.ascii_lowercase) * rng.randint(2, 6) for _ in range(12)) for _ in range(300)]
    planted = {1: items[1], 2: ", ".join(items[2].split()).replace(":", "").replace("?", "..."),  # punctuation changed
               4: items[4].upper().replace(":", " ;").replace("?", "!!"),  # upper-cased Czech and punctuation changed
               7: items[7], 11: items[11]}
    lines = filler[:]
    for k, (i, text) in enumerate(sorted(planted.items())):
        words = text.split()  # item 7 is wrapped over two lines: n-grams cross line breaks
        lines.insert(40 * (k + 1), " ".join(words[:6]) + "\n" + " ".join(words[6:]) if i == 7 else text)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return spec, items, corpus, planted


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "glotbench", "analyze", "contamination", *args],
                          env=ENV, capture_output=True, text=True, timeout=180, cwd=cwd)


def _read(path: Path) -> tuple[list[dict], dict]:
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert rows[-1]["summary"] is True
    return rows[:-1], rows[-1]


def test_flags_exactly_the_planted_items_and_agrees_with_a_plain_restatement(crafted, tmp_path):
    spec, items, corpus, planted = crafted
    out = tmp_path / "flags.jsonl"
    done = _cli(str(spec), "--corpus", str(corpus), "--text-field", "question", "-o", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    rows, head = _read(out)
    assert [r["item"] for r in rows] == [str(i) for i in range(len(items))]  # the record number: no id field mapped
    H, V = "lm_eval_13gram", "length_aware"
    # lm-eval's normalisation lowercases ASCII only: the upper-cased Czech copy (4) is missed, and the short
    # item (11) has no 13-gram; the variant finds both, and nothing else
    assert {i for i, r in enumerate(rows) if r[H]["contaminated"]} == {1, 2, 7}
    assert {i for i, r in enumerate(rows) if r[V]["contaminated"]} == {1, 2, 4, 7, 11} == set(planted)
    assert head["items"] == 13 and head[H]["flagged"] == 3 and head[H]["checked"] == 13
    assert head[H]["share"] == pytest.approx(3 / 13)
    assert head[V]["flagged"] == 5 and head[V]["checked"] == 13 and head[V]["share"] == pytest.approx(5 / 13)
    assert rows[1][H]["first_match"]["file"] == str(corpus) and len(rows[1][H]["first_match"]["ngram"].split()) == 13
    assert rows[11]["n_tokens"] == 10 and rows[11][V]["ngram_n"] == 10 and rows[11][H]["first_match"] is None
    text = corpus.read_text(encoding="utf-8")
    assert [r[H]["matched_ngrams"] for r in rows] == _oracle(items, text, lambda k: C.NGRAM_N, ascii_norm)
    assert [r[V]["matched_ngrams"] for r in rows] == _oracle(items, text, C.length_aware_n, unicode_norm)
    assert rows[2][H]["matched_ngrams"] == rows[2][H]["ngrams"] > 0  # changed punctuation: every 13-gram still found
    assert rows[4][V]["matched_ngrams"] == rows[4][V]["ngrams"] > 0
    assert "3 contaminated" in done.stdout


def test_default_text_is_the_rendered_prompt(crafted, tmp_path):
    spec, items, corpus, planted = crafted
    out = tmp_path / "flags.jsonl"
    done = _cli(str(spec), "--corpus", str(corpus), "-o", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    rows, _ = _read(out)
    # the prompt adds the choices block: the question's own 13-grams still match, the ones into the options do not
    assert {i for i, r in enumerate(rows) if r["lm_eval_13gram"]["contaminated"]} == {1, 2, 7}
    assert all(0 < rows[i]["lm_eval_13gram"]["matched_ngrams"] < rows[i]["lm_eval_13gram"]["ngrams"] for i in (1, 2, 7))


@pytest.mark.parametrize("bad", ["gzip", "missing", "field"])
def test_a_gzip_or_missing_corpus_or_unknown_field_gets_one_line(crafted, tmp_path, bad):
    spec, items, corpus, planted = crafted
    args = ["--corpus", str(corpus)]
    if bad == "gzip":
        gz = tmp_path / "corpus.txt.gz"
        gz.write_bytes(gzip.compress(corpus.read_bytes()))
        args, words = ["--corpus", str(corpus), "--corpus", str(gz)], (str(gz), "gzip")
    elif bad == "missing":
        args, words = ["--corpus", str(tmp_path / "nope.txt")], ("nope.txt", "not found")
    else:
        args, words = [*args, "--text-field", "qq"], ("'qq'", "record 0", "--text-field")
    out = tmp_path / "flags.jsonl"
    done = _cli(str(spec), *args, "-o", str(out), cwd=tmp_path)
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-1500:]
    assert len(lines) == 1 and all(w in lines[0] for w in words), lines
    assert not out.exists()


def test_windows_cross_block_boundaries(tmp_path):
    """A tiny block size cuts tokens and n-grams across blocks: same flags as one block."""
    rng = random.Random(3)
    items = _items(rng)
    corpus = tmp_path / "c.txt"
    corpus.write_text("aa bb\n" + items[2] + "\ncc " + items[10] + "\n", encoding="utf-8")
    got = []
    for block in (7, 64, C.BLOCK_CHARS):
        indexes = [C.ItemIndex([(str(i), t) for i, t in enumerate(items)], check) for check in (C.HEADLINE, C.VARIANT)]
        C.scan(indexes, [corpus], block_chars=block)
        got.append([(len(a.matched), len(b.matched), a.first) for a, b in zip(indexes[0].results, indexes[1].results)])
    assert got[0] == got[1] == got[2]
    assert got[0][2][0] == 8 and got[0][10][1] == 1 and got[0][2][2]["token"] == 2


def test_normalisation_is_lm_evals_janitor():
    janitor = pytest.importorskip("lm_eval.decontamination.janitor")
    text = "Příliš ŽLUŤOUČKÝ kůň, úpěl: \"ďábelské\" ódy! HELLO-World (x)."
    assert C.normalize(text) == janitor.Janitor().normalize_string(text)
    assert C.ngrams(C.tokens("a b c d"), 3) == [tuple(g.split()) for g in janitor.word_ngrams("a b c d", 3)]
