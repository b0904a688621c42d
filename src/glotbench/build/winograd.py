"""Winograd schemas to NLI pairs, GLUE's WNLI construction (Wang et al., 2018), which HuLU §3.1 uses for
HuWNLI: the ambiguous pronoun is replaced by each candidate referent in turn; the schema's sentence is
the premise, the sentence with the candidate in the pronoun's place the hypothesis, labelled ``1``
(entailed) for the correct referent and ``0`` for every other.

Two ways to find the pronoun's place:

* ``pronoun``: the schema names the pronoun (a field holding its text, and optionally which occurrence,
  0-based); the hypothesis is the sentence with that occurrence replaced (a candidate at the start of
  the sentence gets a capital letter).
* ``question``: the schema asks for the referent with a wh-question whose first word stands for it
  (pro-drop languages have no pronoun to replace, e.g. "Kik kerülték az erőszakot?"); the hypothesis is
  the question with that word replaced by the candidate and its question mark made a full stop. The
  replaced word is recorded (``replaced``): a wh-word in another case than the candidate's (Hungarian
  "Kinek") needs the candidate inflected, which this does not do; review those.

Output records carry HuWNLI's fields (``orig_id``, ``sentence1``, ``sentence2``, ``label`` as strings)
plus ``candidate`` and ``replaced``.
"""

from __future__ import annotations

import re

from glotbench.errors import DataError


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


def from_question(question: str, candidate: str) -> tuple[str, str]:
    """(hypothesis, replaced word)."""
    q = question.strip()
    first, _, rest = q.partition(" ")
    body = rest.rstrip()
    if body.endswith("?"):
        body = body[:-1].rstrip() + "."
    elif not body.endswith((".", "!")):
        body += "."
    return f"{_cap(candidate.strip())} {body}", first


def from_pronoun(sentence: str, pronoun: str, candidate: str, occurrence: int = 0) -> tuple[str, str] | None:
    """(hypothesis, pronoun) with the ``occurrence``-th whole-word match of ``pronoun`` replaced, or None."""
    hits = [m for m in re.finditer(r"(?<!\w)" + re.escape(pronoun) + r"(?!\w)", sentence)]
    if occurrence >= len(hits):
        return None
    m = hits[occurrence]
    cand = candidate.strip()
    if m.start() == 0 or sentence[: m.start()].rstrip().endswith((".", "!", "?")):
        cand = _cap(cand)
    return sentence[: m.start()] + cand + sentence[m.end():], m.group(0)


def pairs(schemas: list[tuple[str, dict]], *, id_field: str, sentence_field: str, candidate_fields: list[str],
          correct_field: str, question_field: str | None = None, pronoun_field: str | None = None,
          occurrence_field: str | None = None, source: str = "") -> list[dict]:
    """Every schema's NLI pairs; a schema missing a field, or whose correct answer is none of its
    candidates, is one DataError naming ``source``, the record and the field."""
    if (question_field is None) == (pronoun_field is None):
        raise DataError("build winograd: give exactly one of --question-field or --pronoun-field")
    out = []
    for n, (where, rec) in enumerate(schemas, 1):
        def need(f: str) -> str:
            v = rec.get(f)
            if not isinstance(v, str) or not v.strip():
                raise DataError(f"{source}: {where}: field '{f}': missing or not a text")
            return v

        sid = str(rec.get(id_field, n))
        sentence = need(sentence_field)
        cands = [need(f) for f in candidate_fields]
        correct = need(correct_field)
        if not any(_same(c, correct) for c in cands):
            raise DataError(f"{source}: {where}: field '{correct_field}': {correct!r} is none of the candidates {cands}")
        for k, cand in enumerate(cands):
            if question_field is not None:
                hyp, replaced = from_question(need(question_field), cand)
            else:
                occ = rec.get(occurrence_field, 0) if occurrence_field else 0
                if not isinstance(occ, int) or isinstance(occ, bool) or occ < 0:
                    raise DataError(f"{source}: {where}: field '{occurrence_field}': not an occurrence number (0, 1, ...)")
                got = from_pronoun(sentence, need(pronoun_field), cand, occ)
                if got is None:
                    raise DataError(f"{source}: {where}: field '{pronoun_field}': {rec[pronoun_field]!r} (occurrence {occ}) "
                                    f"is not in the sentence")
                hyp, replaced = got
            out.append({"id": f"{sid}-{k}", "orig_id": sid, "sentence1": sentence, "sentence2": hyp,
                        "label": "1" if _same(cand, correct) else "0", "candidate": cand, "replaced": replaced})
    return out
