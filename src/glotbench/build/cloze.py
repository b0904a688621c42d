"""MM-Eval §3.5 (semantics): blank one noun/pronoun or adjective/adverb of a sentence; three
distractors of the same group (nouns and pronouns for each other, adjectives and adverbs for each
other) from the vocabulary; four options.

As the paper: split by spaces, match tokens against the vocabulary, discard sentences without a
match, pick one matched word at random. glotbench's additions (named): a token's edge punctuation
is kept around the blank ("_," as in the released data) and the word inside is matched (as
written, else lower-cased); a
distractor is never the answer (nor, for Czech, a form of the answer's lemma), never repeats, and
is capitalised when the blank opens the sentence (a capitalised answer would otherwise stand out).
"""

from __future__ import annotations

import hashlib
import random

from glotbench.build.pos import split_token
from glotbench.build.provenance import add_step
from glotbench.build.sentences import Sentence

BLANK = "_"
LABELS = ["A", "B", "C", "D"]


def item_rng(seed: int, step: str, text: str) -> random.Random:
    """One generator per sentence: an item does not change when other sentences are added or removed."""
    return random.Random(f"{seed}\x00{step}\x00{text}")


def item_id(step: str, text: str) -> str:
    return f"{step}-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:12]}"


def _cased(word: str, like: str) -> str:
    return word[:1].upper() + word[1:] if like[:1].isupper() and not word[:1].isupper() else word


def make_cloze(s: Sentence, pos, pool: dict[str, list[str]], seed: int, n_options: int = 4,
               agree: bool = False) -> tuple[dict | None, str]:
    """(item, "") or (None, reason). ``agree``: distractors also share a form with the answer
    (:meth:`glotbench.build.pos.CzechPos.agrees`), glotbench's variant for inflected languages."""
    tokens = s.text.split()
    matched = [(i, split_token(t)) for i, t in enumerate(tokens)]
    matched = [(i, parts) for i, parts in matched if parts[1] and pos.group(parts[1])]
    if not matched:
        return None, "no noun, pronoun, adjective or adverb of the vocabulary"
    rng = item_rng(seed, "cloze", s.text)
    i, (lead, word, trail) = rng.choice(matched)
    group = pos.group(word)
    candidates = [w for w in pool.get(group, []) if not pos.same(w, word) and (not agree or pos.agrees(w, word))]
    cased: dict[str, str] = {}
    for w in candidates:
        c = _cased(w, word) if i == 0 else w
        if c.casefold() != word.casefold():
            cased.setdefault(c.casefold(), c)
    candidates = list(cased.values())
    if len(candidates) < n_options - 1:
        return None, f"fewer than {n_options - 1} {group} distractors{' of the same form' if agree else ''} in the vocabulary"
    distractors = rng.sample(candidates, n_options - 1)
    options = [word, *distractors]
    rng.shuffle(options)
    labels = LABELS[:n_options]
    question = " ".join(tokens[:i] + [lead + BLANK + trail] + tokens[i + 1:])
    item = {"id": item_id("cloze", s.text), "question": question,
            "choices": [{"label": lb, "text": t} for lb, t in zip(labels, options)],
            "answerKey": labels[options.index(word)], "answer": word, "pos": group}
    add_step(item, "cloze", source=s.source, sentence=s.text, seed=seed, pos_from=pos.name,
             distractors="same group and form" if agree else None)
    return item, ""
