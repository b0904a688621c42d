"""MM-Eval §3.4 (syntax): a sentence of three or more words, split by spaces, word order shuffled
to make three incorrect options; the original and the three shuffles are the four options.

Checked here: every shuffle differs from the original (as a word sequence and as text) and from
the other shuffles. The paper's own check, that each shuffle is a syntactic error, was manual:
that is `glotbench build review` (each item says so in its provenance).
"""

from __future__ import annotations

from glotbench.build.cloze import LABELS, item_id, item_rng
from glotbench.build.provenance import add_step
from glotbench.build.sentences import Sentence

MAX_TRIES = 200


def make_word_order(s: Sentence, seed: int, n_options: int = 4) -> tuple[dict | None, str]:
    tokens = s.text.split()
    rng = item_rng(seed, "word-order", s.text)
    seen = {s.text}
    shuffles: list[str] = []
    for _ in range(MAX_TRIES):
        if len(shuffles) == n_options - 1:
            break
        perm = tokens[:]
        rng.shuffle(perm)
        text = " ".join(perm)
        if perm != tokens and text not in seen:
            seen.add(text)
            shuffles.append(text)
    if len(shuffles) < n_options - 1:
        return None, f"fewer than {n_options - 1} distinct shuffles differ from the original"
    options = [s.text, *shuffles]
    rng.shuffle(options)
    labels = LABELS[:n_options]
    item = {"id": item_id("word-order", s.text), "choices": [{"label": lb, "text": t} for lb, t in zip(labels, options)],
            "answerKey": labels[options.index(s.text)], "answer": s.text}
    add_step(item, "word-order", source=s.source, sentence=s.text, seed=seed,
             check="shuffles differ from the original; ungrammaticality is checked by review (MM-Eval: manual)")
    return item, ""
