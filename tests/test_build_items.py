"""glotbench build cloze / word-order on hand-made sentences and a vocabulary file (no shared data):
MM-Eval §3.4/§3.5 rules, drops with reasons, seeds, distractors that can never be the answer, the
task YAML loading with names resolved, --dry-run, bad input, and the CLI in a fresh subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from glotbench.build.cloze import BLANK, make_cloze
from glotbench.build.items import build_items
from glotbench.build.pos import MODIFIER, NOMINAL, VocabPos
from glotbench.build.provenance import read_items
from glotbench.build.sentences import Sentence, prepare, read_sentences, split_sentences
from glotbench.build.word_order import make_word_order
from glotbench.errors import DataError

FIX = Path(__file__).parent / "fixtures" / "build"
SRC = str(Path(__file__).resolve().parents[1] / "src")


def _cli(*args, cwd):
    env = {**os.environ, "OPENAI_API_KEY": "x",
           "PYTHONPATH": os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH", "")) if p)}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], env=env, capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def test_prepare_dedups_and_drops_short_with_reasons():
    sents = read_sentences(FIX / "sentences.txt")
    kept, dropped = prepare(sents, min_words=3)
    assert [s.text for s in kept][0] == "Kniha leží na stole u okna."
    by = {d["removed_by"]: d for d in dropped}
    assert by["dedup"]["reason"] == "duplicate of sentences.txt:1"
    assert by["dedup"]["provenance"][0]["source"] == "sentences.txt:2"
    assert by["min_words"]["reason"] == "1 words < 3"
    assert len(kept) == 6 and len(dropped) == 2


def test_split_sentences_keeps_dates_whole():
    text = "Ostrava 19. října (ČTK) - V huti začali. To je „Dobře“ řečeno! konec věty. Další věta."
    assert split_sentences(text) == ["Ostrava 19. října (ČTK) - V huti začali.", "To je „Dobře“ řečeno! konec věty.",
                                      "Další věta."]


def test_cloze_follows_mm_eval_groups_and_keeps_punctuation():
    pos = VocabPos(FIX / "vocab.tsv")
    pool = pos.pool([])
    assert pos.group("běžet") is None  # verbs are not used (MM-Eval §3.5)
    item, why = make_cloze(Sentence("Malý pes běží rychle přes město.", "s:1"), pos, pool, seed=7)
    assert why == ""
    answer = item["answer"]
    group = pos.group(answer)
    assert group in (NOMINAL, MODIFIER)
    texts = [c["text"] for c in item["choices"]]
    assert len(texts) == 4 and len(set(texts)) == 4
    assert [c["label"] for c in item["choices"]] == ["A", "B", "C", "D"]
    assert texts[["A", "B", "C", "D"].index(item["answerKey"])] == answer
    for t in texts:  # nouns with pronouns, adjectives with adverbs
        assert pos.group(t) == group
    assert item["question"].count(BLANK) == 1
    if answer == "město":
        assert item["question"].endswith("_.")
    assert item["provenance"] == [{"step": "cloze", "source": "s:1", "sentence": "Malý pes běží rychle přes město.",
                                   "seed": 7, "pos_from": "vocabulary"}]


def test_cloze_distractor_never_equals_answer_over_many_seeds():
    # the vocabulary holds "Kniha" and "kniha": neither may be a distractor for the other
    pos = VocabPos(FIX / "vocab.tsv")
    pool = pos.pool([])
    for seed in range(300):
        item, _ = make_cloze(Sentence("Kniha leží na stole.", "s:1"), pos, pool, seed=seed)
        texts = [c["text"].casefold() for c in item["choices"]]
        assert texts.count(item["answer"].casefold()) == 1, (seed, texts)
        assert len(set(texts)) == 4


def test_cloze_drops_without_match_or_distractors(tmp_path):
    pos = VocabPos(FIX / "vocab.tsv")
    item, why = make_cloze(Sentence("Dnes prší a fouká vítr.", "s:1"), pos, pos.pool([]), seed=1)
    assert item is None and "no noun" in why
    small = tmp_path / "v.tsv"
    small.write_text("velký\tadj\nmalý\tadj\nkniha\tnoun\n", encoding="utf-8")
    p2 = VocabPos(small)
    item, why = make_cloze(Sentence("Velký dům stojí.", "s:1"), p2, p2.pool([]), seed=1)
    assert item is None and why == "fewer than 3 adjective/adverb distractors in the vocabulary"


def test_word_order_shuffles_differ_and_are_seeded():
    s = Sentence("On čte velký román.", "s:1")
    item, _ = make_word_order(s, seed=3)
    texts = [c["text"] for c in item["choices"]]
    assert len(set(texts)) == 4 and texts.count(s.text) == 1
    assert item["answer"] == s.text
    for t in texts:
        assert sorted(t.split()) == sorted(s.text.split())
    assert make_word_order(s, seed=3) == (item, "")
    assert make_word_order(s, seed=4)[0] != item
    assert make_word_order(Sentence("a a a", "s:2"), seed=1) == (
        None, "fewer than 3 distinct shuffles differ from the original")
    three, _ = make_word_order(Sentence("jdu domů teď", "s:3"), seed=1)  # 5 other orders exist
    assert len({c["text"] for c in three["choices"]}) == 4


def test_build_writes_dataset_dropped_and_loadable_yaml(tmp_path):
    from glotbench.tasks.registry import resolve

    out = tmp_path / "cloze.jsonl"
    rep = build_items("cloze", FIX / "sentences.txt", out, lang="cs", seed=1, vocab=FIX / "vocab.tsv")
    items = read_items(out)
    dropped = read_items(tmp_path / "cloze.dropped.jsonl")
    assert rep.read == 8 and rep.kept == len(items) == 4
    assert sorted(d["removed_by"] for d in dropped) == ["cloze", "cloze", "dedup", "min_words"]
    task = resolve([str(tmp_path / "cloze.yaml")])[0]
    assert task.spec.name == "build.cloze" and task.spec.language == "cs"
    again = build_items("cloze", FIX / "sentences.txt", tmp_path / "b.jsonl", lang="cs", seed=1, vocab=FIX / "vocab.tsv")
    assert again.kept == 4
    assert read_items(tmp_path / "b.jsonl") == items  # same seed, same items
    other = build_items("cloze", FIX / "sentences.txt", tmp_path / "c.jsonl", lang="cs", seed=2, vocab=FIX / "vocab.tsv")
    assert other.kept == 4 and read_items(tmp_path / "c.jsonl") != items


def test_dry_run_counts_and_writes_nothing(tmp_path):
    out = tmp_path / "wo.jsonl"
    rep = build_items("word-order", FIX / "sentences.txt", out, lang="cs", seed=1, dry_run=True)
    assert (rep.read, rep.kept) == (8, 5)
    assert dict(rep.dropped) == {"dedup": 1, "min_words": 1, "word-order: fewer than 3 distinct shuffles differ "
                                                             "from the original": 1}
    assert not out.exists() and not list(tmp_path.iterdir())


def test_agree_needs_morphology(tmp_path):
    from glotbench.errors import GlotbenchError

    with pytest.raises(GlotbenchError, match="--agree needs morphology"):
        build_items("cloze", FIX / "sentences.txt", tmp_path / "c.jsonl", lang="cs", seed=1, vocab=FIX / "vocab.tsv",
                    agree=True)


def test_bad_vocabulary_line_names_file_and_line(tmp_path):
    bad = tmp_path / "v.tsv"
    bad.write_text("kniha\tnoun\nstůl noun\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"v\.tsv:2: expected word<TAB>pos"):
        VocabPos(bad)


def test_jsonl_field_paths_and_bad_records(tmp_path):
    src = tmp_path / "p.jsonl"
    src.write_text(json.dumps({"evidence": [["První věta je tady. Druhá věta je tam."], ["Třetí věta."]]}) + "\n"
                   + json.dumps({"other": 1}) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"p\.jsonl:2: field 'evidence': not in the record"):
        read_sentences(src, field="evidence", split=True)
    src.write_text(json.dumps({"evidence": [["První věta je tady. Druhá věta je tam."], ["Třetí věta."]]}) + "\n",
                   encoding="utf-8")
    got = read_sentences(src, field="evidence", split=True)
    assert [s.text for s in got] == ["První věta je tady.", "Druhá věta je tam.", "Třetí věta."]
    assert {s.source for s in got} == {"p.jsonl:1"}


def test_cli_fresh_process_dry_run_and_bad_input(tmp_path):
    done = _cli("build", "cloze", str(FIX / "sentences.txt"), "--vocab", str(FIX / "vocab.tsv"), "--lang", "cs",
                "-o", str(tmp_path / "c.jsonl"), "--dry-run", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:3] == ["cloze (dry run): 8 sentences read, 4 items kept, 4 dropped",
                                            "  dropped by cloze: no noun, pronoun, adjective or adverb of the "
                                            "vocabulary: 2", "  dropped by dedup: 1"]
    assert not (tmp_path / "c.jsonl").exists()
    bad = tmp_path / "v.tsv"
    bad.write_text("kniha noun\n", encoding="utf-8")
    done = _cli("build", "cloze", str(FIX / "sentences.txt"), "--vocab", str(bad), "--lang", "cs",
                "-o", str(tmp_path / "c.jsonl"), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"error: {bad}:1: expected word<TAB>pos, got 'kniha noun'"]


def test_cloze_candidates_against_the_papers_plain_rule():
    """MM-Eval §3.5 restated plainly: split by spaces, keep tokens found in the vocabulary (nouns,
    pronouns, adjectives, adverbs). glotbench's candidates are exactly those, plus tokens that
    match once their edge punctuation is set aside or (sentence-initial) once lower-cased: the
    two named additions, nothing else."""
    pos = VocabPos(FIX / "vocab.tsv")
    groups = {}
    for line in (FIX / "vocab.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        word, p = line.split("\t")
        if p in ("noun", "pronoun", "adjective", "adverb"):
            groups[word] = p
    from glotbench.build.pos import split_token

    for s in read_sentences(FIX / "sentences.txt"):
        paper = [t for t in s.text.split() if t in groups]
        ours = [t for t in s.text.split() if pos.group(split_token(t)[1])]
        assert set(paper) <= set(ours)
        for t in set(ours) - set(paper):
            core = split_token(t)[1]
            assert core != t or core.lower() in groups, t
        # the restated rule's answer pool and ours agree on each word's group (noun+pronoun, adj+adv)
        for t in paper:
            assert pos.group(t) == (NOMINAL if groups[t] in ("noun", "pronoun") else MODIFIER)
