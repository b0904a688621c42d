"""Multiple-choice answer extraction for any label set and any language pack.

``extract_choice(text, labels, options, pack)`` returns one of ``labels`` or None. Its stages (the
first that decides wins) and the rules that trade recall for precision, each with its corpus
case, are in docs/extraction.md.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from glotbench.errors import DataError
from glotbench.extract.text import (
    cut_continuation,
    NOT_AFTER,
    NOT_BEFORE,
    WORD,
    contains_phrase,
    count_phrase,
    fold_width,
    has_cjk,
    normalize,
    words_alternation,
)
from glotbench.extract.result import Extraction
from glotbench.extract.thinking import strip_thinking
from glotbench.languages import LanguagePack, get_pack

# Cyrillic letter -> Latin look-alike (upper case).
_CYR_TO_LAT = {
    "А": "A", "В": "B", "С": "C", "Е": "E", "Н": "H", "К": "K", "М": "M",
    "О": "O", "Р": "P", "Т": "T", "Х": "X", "У": "Y", "І": "I", "Ј": "J", "Ѕ": "S",
}  # fmt: skip
_LAT_TO_CYR = {v: k for k, v in _CYR_TO_LAT.items()}

MAX_CONTAIN_WORDS = 40
MAX_CONTAIN_CJK_CHARS = 80

_OPEN = r"[\s*_`\"'“”„«»‹›(\[{【（「]*"
_CLOSE = r"[*_`\"'“”»›)\]}】）」]*"
_GAP_CHARS = r"[\s:：=\-–—>*_`\"'“”„«»(\[【（「]"
_AMBIGUOUS = object()


def _variants(label: str) -> set[str]:
    out = {label}
    if label in _CYR_TO_LAT:
        out.add(_CYR_TO_LAT[label])
    if label in _LAT_TO_CYR:
        out.add(_LAT_TO_CYR[label])
    return out


@dataclass(frozen=True)
class _Matcher:
    variant_to_label: dict[str, str]
    label: str  # regex with a named group "label"
    other_label: str  # regex with a named group "other"
    forward: re.Pattern[str]
    reverse: re.Pattern[str]
    boxed: re.Pattern[str]
    leading: re.Pattern[str]
    label_line: re.Pattern[str]
    echo_line: re.Pattern[str]
    tail: re.Pattern[str]
    ambiguity: re.Pattern[str]
    negation: re.Pattern[str]
    negation_before: re.Pattern[str]
    ambiguity_before: re.Pattern[str]
    article_before: re.Pattern[str]
    contrast: tuple[re.Pattern[str], ...]
    correction: re.Pattern[str]
    correction_word: re.Pattern[str]
    verdict: re.Pattern[str]
    lower: frozenset[str]
    label_words: frozenset[str]
    option_words: re.Pattern[str]
    connector: re.Pattern[str]
    label_re: re.Pattern[str]  # ``label`` compiled
    label_start: re.Pattern[str]  # a character that a variant in ``label`` starts with (see _has_label)
    final_bare: re.Pattern[str]  # _final_bare_label's pattern
    # The clean answers ("A", "B.", "(c)", "**D**"): the full reading of each, filled on first sight
    # (None until then; _NOT_CLEAN when it may depend on the option texts). See _clean_forms.
    clean: dict[str, object] = field(default_factory=dict)


def _merged(pack: LanguagePack, field: str) -> list[str]:
    words = list(getattr(pack, field))
    if pack.code != "en":
        words += list(getattr(get_pack("en"), field))
    return words


@lru_cache(maxsize=256)
def _matcher(pack_code: str, labels: tuple[str, ...]) -> _Matcher:
    pack = get_pack(pack_code)
    counts: dict[str, int] = {}
    for lab in labels:
        for v in _variants(lab):
            counts[v] = counts.get(v, 0) + 1
    variant_to_label: dict[str, str] = {}
    for lab in labels:
        variant_to_label[lab] = lab  # a label always maps to itself
    for lab in labels:
        for v in _variants(lab):
            if counts[v] == 1 and v not in variant_to_label:
                variant_to_label[v] = lab
    # Lower-case forms of letter labels ("(c)", "答案是c"): read only where nothing but punctuation
    # follows, so "the answer is a bird" keeps its article.
    lower: dict[str, str] = {}
    for v, lab in list(variant_to_label.items()):
        lv = v.lower()
        if lv != v and lv not in variant_to_label:
            lower[lv] = lab if lower.get(lv, lab) == lab else ""
    lower = {k: v for k, v in lower.items() if v}
    variant_to_label.update(lower)
    alts = "|".join(re.escape(v) for v in sorted(set(variant_to_label) - set(lower), key=len, reverse=True))
    label = f"{NOT_BEFORE}(?P<label>{alts}){NOT_AFTER}"
    other = f"{NOT_BEFORE}(?P<other>{alts}){NOT_AFTER}"
    if lower:
        lalts = "|".join(re.escape(v) for v in sorted(lower, key=len, reverse=True))
        low_end = f"(?={_CLOSE}[ \t]*(?:$|\n|[.。!！,，;；:：)\\]）】]))"
        either = f"(?:{label}|{NOT_BEFORE}(?P<low>{lalts}){NOT_AFTER}{low_end})"
    else:
        either = label

    answer = words_alternation(_merged(pack, "answer_words"))
    conn = words_alternation(_merged(pack, "connectors"))
    optw = words_alternation(_merged(pack, "option_words"))
    correct = words_alternation(_merged(pack, "correct_words"))
    conj = words_alternation(_merged(pack, "list_conjunctions"))
    neg = words_alternation(_merged(pack, "negation_words"))
    wrong = words_alternation(_merged(pack, "wrong_words"))
    contrast_w = words_alternation(_merged(pack, "contrast_words"))
    yes = words_alternation(_merged(pack, "yes_words") + _merged(pack, "correct_words"))
    no = words_alternation(_merged(pack, "no_words") + _merged(pack, "wrong_words") + _merged(pack, "negation_words"))

    gap = f"(?:{_GAP_CHARS}|{conn}|{optw}){{0,16}}"
    rgap = f"(?:[\\s:：\\-–—*_]|{conn}|{optw}){{0,8}}"
    answer_start = _starts(_merged(pack, "answer_words"))
    forward = re.compile(f"{answer_start}{answer}{gap}{_OPEN}{either}")
    reverse = re.compile(f"{_OPEN}{label}{_CLOSE}(?P<rgap>{rgap})(?:{correct}|{answer})")
    boxed = re.compile(rf"\\boxed\s*\{{\s*(?:\\text(?:bf)?\s*\{{\s*)?{either}")
    leading = re.compile(f"(?:[\\s#>*_\\-•]|{conn}|{optw})*?{_OPEN}{label}")
    label_line = re.compile(
        f"(?m)^[ \\t#>*_\\-•]*(?:(?:{optw}|{conn})[ \\t]*)*{_OPEN}{label}{_CLOSE}[ \\t.:：。)）]*{_CLOSE}[ \\t]*$"
    )
    echo_line = re.compile(f"(?m)^[ \\t*_#>\\-•]*[(\\[]?{label}[*_]*[ \\t]*[.)\\]:：]")
    tail = re.compile(f"{answer_start}{answer}(?:{_GAP_CHARS}|{conn}){{0,16}}")
    ambiguity = re.compile(
        f"^{_CLOSE}[\\s)）]*(?:[,/|&+;，、]|{conj})\\s*(?:(?:{conj}|{conn}|{optw})\\s*){{0,3}}{_OPEN}{other}"
    )
    # "B not", "B is incorrect", "A je špatně", "A是错误的", "В биш", "A: no": not the answer.
    negation = re.compile(f"^{_CLOSE}[ \\t)）:：]*(?:(?:{conn}|{optw})[ \\t]*){{0,2}}(?:{neg}|{wrong})")
    # "B és C is helyes", "A or B is correct": another label joined on before.
    ambiguity_before = re.compile(
        f"{other}{_CLOSE}[\\s)）]*(?:[,/|&+;，、]|{conj})\\s*(?:(?:{conj}|{conn}|{optw})\\s*){{0,3}}{_OPEN}$"
    )
    # "Az E helyes": a label-like word right after an article-like connector is a label.
    article_before = re.compile(f"(?:^|[ \\t]){conn}[ \\t]+$")
    # "not A", "není to A", "不是A", "nem A": not the answer either.
    negation_before = re.compile(f"(?:{neg})(?:[ \\t:：]|{conn}|{optw}|{_OPEN[:-1]}){{0,6}}$")
    pre = f"(?:[ \\t:：]|{conn}|{optw}|{_OPEN[:-1]})*?"
    link = f"{_CLOSE}[ \\t,，、;；.。]*(?:{conn}[ \\t]*)?"
    contrast = (
        # "not A but C", "Není to A, ale D", "不是A，而是D", "nem A, hanem C"
        re.compile(f"{_starts(_merged(pack, 'negation_words'))}{neg}{pre}{_OPEN}{label}{link}{contrast_w}{pre}{_OPEN}{other}"),
        # "А биш, харин Б", "A is wrong, rather C"
        re.compile(f"{_OPEN}{label}{_CLOSE}[ \\t]*(?:{conn}[ \\t]*)?(?:{neg}|{wrong}){link}{contrast_w}{pre}{_OPEN}{other}"),
    )
    fix = words_alternation(_merged(pack, "correction_words"))
    correction = re.compile(
        f"{_starts(_merged(pack, 'correction_words'))}{fix}[\\s,，:：!！.。…\\-–—]*(?:(?:{conn}|{optw}|{answer}|{neg}|{contrast_w})[\\s,，:：]*){{0,4}}{_OPEN}{label}"
    )
    verdict = re.compile(
        f"(?m)(?:^|[ \\t.;；。,，]){_OPEN}{label}{_CLOSE}[ \\t]*[:：=)）\\-–—][ \\t]*[*_]*(?:(?P<no>{no})|(?P<yes>{yes}))"
    )
    return _Matcher(
        clean=_clean_forms(variant_to_label),
        variant_to_label=variant_to_label,
        label=label,
        other_label=other,
        forward=forward,
        reverse=reverse,
        boxed=boxed,
        leading=leading,
        label_line=label_line,
        echo_line=echo_line,
        tail=tail,
        ambiguity=ambiguity,
        negation=negation,
        negation_before=negation_before,
        ambiguity_before=ambiguity_before,
        article_before=article_before,
        contrast=contrast,
        correction=correction,
        correction_word=re.compile(fix),
        verdict=verdict,
        lower=frozenset(lower),
        label_words=frozenset(_merged(pack, "label_words")),
        option_words=re.compile(f"^\\s*{optw}"),
        connector=re.compile(conn),
        label_re=re.compile(label),
        label_start=re.compile(f"[{''.join(sorted({re.escape(v[0]) for v in variant_to_label if v not in lower}))}]"),
        final_bare=re.compile(f"(?<!\\d)[;；.。!！?？\\n][ \\t*_]*{_OPEN}{label}{_CLOSE}[ \\t.。!！]*$"),
    )


def _starts(words: list[str]) -> str:
    """A look-ahead for a pattern that starts with ``words_alternation(words)``: the next character is
    one a word starts with (case-insensitively, as the words are matched). Every match passes it (a
    word's boundary look-behind takes no character), so the matches are the same; the scan tries
    the whole word list only where a word can start, which made these patterns ~40% faster
    (tests/test_extract_fast_paths.py compares the matches with and without it)."""
    first = sorted({w.strip()[0] for w in words if w and w.strip()})
    return f"(?=(?i:[{''.join(re.escape(c) for c in first)}]))" if first else ""


def _span(hit: re.Match[str]) -> tuple[int, int]:
    """The span of the label a hit found (upper-case group ``label`` or lower-case ``low``)."""
    if "low" in hit.re.groupindex and hit.group("low") is not None:
        return hit.span("low")
    return hit.span("label")


_REST_MAX = 400  # only compared with option texts: a longer rest of line cannot equal one


def _line_rest(text: str, pos: int) -> str:
    end = text.find("\n", pos, pos + _REST_MAX + 1)
    return text[pos : (end if end >= 0 else min(len(text), pos + _REST_MAX))]


# compiled once (``re.sub(pattern_string, ...)`` per call looked the pattern up in re's cache each time)
_REST_PREFIX = re.compile(rf"^{_CLOSE}[\s.:：)）\-–—]*")
_DECIMAL_AFTER = re.compile(r"[.,:]\d")
_WORD_AFTER = re.compile(rf"[ \t]+{WORD}")


def _judge(
    m: _Matcher,
    text: str,
    start: int,
    end: int,
    options_norm: list[str] | None,
    labels: Sequence[str],
    pack: LanguagePack,
    *,
    reverse: bool = False,
    rgap: str = "",
):
    """Check one label occurrence at ``text[start:end]``: a label, _AMBIGUOUS, or None (not an answer)."""
    raw = text[start:end]
    lab = m.variant_to_label[raw]
    after = text[end:]
    amb = m.ambiguity.match(after)
    if amb and m.variant_to_label[amb.group("other")] != lab:
        return _AMBIGUOUS
    amb = m.ambiguity_before.search(text, max(0, start - 60), start)
    if amb and m.variant_to_label[amb.group("other")] != lab:
        return _AMBIGUOUS
    own_text = False
    option_rest = None  # the rest of the line after the label and its closing marks, normalised
    if options_norm and not reverse:
        option_rest = normalize(_REST_PREFIX.sub("", _line_rest(text, end)), pack)
        own_text = bool(option_rest) and option_rest == options_norm[labels.index(lab)]
    if m.negation.match(after) and not own_text:  # "B) False" is option B's text "False", not a negation
        return None
    if m.negation_before.search(text, max(0, start - 60), start):
        return None
    if _DECIMAL_AFTER.match(after):
        return None  # a decimal number or a time, not a label
    if raw in m.label_words or (raw in m.lower and raw.upper() in m.label_words):
        if reverse:
            # "A is correct" is an answer, "A correct answer…" / "A helyes válasz…" is an article;
            # "Az E helyes" (an article before it) is a label again.
            if not m.connector.search(rgap) and not m.article_before.search(text, max(0, start - 20), start):
                return None
        elif _WORD_AFTER.match(after) and not m.option_words.match(after):
            own = options_norm[labels.index(lab)] if options_norm else None
            rest = normalize(_line_rest(text, end), pack)
            if not own or not (rest == own or rest.startswith(own + " ")):
                return None
    if option_rest:
        same = [i for i, o in enumerate(options_norm) if o == option_rest]
        if same and labels.index(lab) not in same:
            return _AMBIGUOUS
    return lab


def _explicit(m: _Matcher, text: str, options_norm, labels, pack, labelled: bool = True):
    """The last explicit statement: (verdict, rule) or (None, None). ``labelled`` False: the text holds
    no label in upper case (_has_label), so only the answer-phrase and boxed rules, which also read a
    lower-case label, can find one."""
    found: list[tuple[int, object, str]] = []
    for pat, rule in ((m.forward, "answer_phrase"), (m.boxed, "boxed")):
        for hit in pat.finditer(text):
            s, e = _span(hit)
            found.append((s, _judge(m, text, s, e, options_norm, labels, pack), rule))
    if labelled:
        for hit in m.reverse.finditer(text):
            s, e = hit.span("label")
            verdict = _judge(m, text, s, e, options_norm, labels, pack, reverse=True, rgap=hit.group("rgap"))
            if verdict is not _AMBIGUOUS:
                tail_neg = m.negation.match(text[hit.end() :])
                verdict = None if tail_neg else verdict
            found.append((s, verdict, "correct_phrase"))
        for hit in m.correction.finditer(text):
            s, e = hit.span("label")
            found.append((s, _judge(m, text, s, e, options_norm, labels, pack), "self_correction"))
        for pat in m.contrast:
            for hit in pat.finditer(text):
                s, e = hit.span("other")
                lab = m.variant_to_label[text[s:e]]
                amb = m.ambiguity.match(text[e:])
                verdict = _AMBIGUOUS if amb and m.variant_to_label[amb.group("other")] != lab else lab
                found.append((s, verdict, "contrast"))
    found = [f for f in found if f[1] is not None]
    if not found:
        return None, None
    found.sort(key=lambda f: f[0])
    return found[-1][1], found[-1][2]


def _verdict_list(m: _Matcher, text: str):
    """"A: no. B: no. C: yes." -> C, when at least two labels get a yes/no and exactly one a yes."""
    verdicts: dict[str, set[str]] = {}
    for hit in m.verdict.finditer(text):
        lab = m.variant_to_label[hit.group("label")]
        verdicts.setdefault(lab, set()).add("no" if hit.group("no") else "yes")
    if len(verdicts) < 2 or any(len(v) > 1 for v in verdicts.values()):
        return None
    yes = [lab for lab, v in verdicts.items() if v == {"yes"}]
    if len(yes) > 1:
        return _AMBIGUOUS  # "A: yes. B: yes."
    return yes[0] if yes else None


def _is_echo(m: _Matcher, text: str) -> bool:
    seen = {m.variant_to_label[h.group("label")] for h in m.echo_line.finditer(text)}
    return len(seen) >= 2


def _leading(m: _Matcher, text: str, options_norm, labels, pack):
    pos = 0
    for _ in range(4):
        hit = m.leading.match(text, pos)
        if not hit:
            return None
        s, e = hit.span("label")
        verdict = _judge(m, text, s, e, options_norm, labels, pack)
        if verdict is not None or text[s:e] not in m.label_words:
            return verdict
        pos = e  # the label-like word was an article ("A B.", Hungarian): look at what follows
    return None


def _after_option_line(m: _Matcher, text: str, pos: int) -> bool:
    head = text[:pos]
    head = head[:-1] if head.endswith("\n") else head
    before = head.rsplit("\n", 1)[-1]  # the line just before, with no blank line between
    hit = m.echo_line.match(before)
    return bool(hit) and bool(before[hit.end():].strip())


def _label_lines(m: _Matcher, text: str, echo: bool = False):
    """The label standing alone on its lines when all such lines agree; _AMBIGUOUS when they don't."""
    hits = list(m.label_line.finditer(text))
    # A label line right after an option line ("A) 2\nB" at the end) is the echo cut short.
    hits = [h for h in hits if not _after_option_line(m, text, text.rfind("\n", 0, h.start("label")) + 1)]
    if echo:
        # In an output that echoes the option list, "B." alone on a line is the echo cut short by
        # the token limit, not an answer; a bare "B" still counts.
        hits = [h for h in hits if not m.echo_line.match(h.group(0))]
    seen = {m.variant_to_label[h.group("label")] for h in hits}
    if len(seen) > 1:
        return _AMBIGUOUS
    return seen.pop() if seen else None


def _final_bare_label(m: _Matcher, text: str, options_norm, labels, pack):
    """"B is incorrect; C." -> C: the output ends with a bare label after a full stop or semicolon."""
    hit = m.final_bare.search(text)
    if not hit:
        return None
    s, e = hit.span("label")
    return _judge(m, text, s, e, options_norm, labels, pack)


def _short_enough(norm: str) -> bool:
    if has_cjk(norm):
        return len(norm) <= MAX_CONTAIN_CJK_CHARS
    return len(norm.split()) <= MAX_CONTAIN_WORDS


def _wordy(option_norm: str) -> bool:
    letters = sum(ch.isalpha() for ch in option_norm)
    return letters >= 3 or (has_cjk(option_norm) and letters >= 2)


_WORDY: dict[str, bool] = {}  # normalised option text -> _wordy
_WORDY_MAX = 50_000


def _contains_option(candidate: str, option_norm: str) -> bool:
    """``_wordy(option_norm) and contains_phrase(candidate, option_norm)``, with ``_wordy`` (its
    character counts) kept per option: an item's options are tried against every answer."""
    wordy = _WORDY.get(option_norm)
    if wordy is None:
        if len(_WORDY) >= _WORDY_MAX:
            _WORDY.clear()
        wordy = _WORDY[option_norm] = _wordy(option_norm)
    return wordy and contains_phrase(candidate, option_norm)


def _match_option_text(candidate: str, options_norm: list[str]) -> int | None | object:
    """Index of the single option ``candidate`` equals or contains; None if none; _AMBIGUOUS if several."""
    if not candidate:
        return None
    equal = [i for i, o in enumerate(options_norm) if o and o == candidate]
    if len(equal) == 1:
        return equal[0]
    if len(equal) > 1:
        return _AMBIGUOUS
    if not _short_enough(candidate):
        return None
    # Containment only for options with words in them: a numeric option ("2") found inside a
    # restated question ("číslic 1, 2 a 3") says nothing; such options are read only when equal.
    inside = [i for i, o in enumerate(options_norm) if o and _contains_option(candidate, o)]
    # Drop an option found only as part of a longer option that is also present ("доллар" in "багамын доллар").
    keep = []
    for i in inside:
        shadowed = any(
            j != i
            and len(options_norm[j]) > len(options_norm[i])
            and contains_phrase(options_norm[j], options_norm[i])
            and count_phrase(candidate, options_norm[i])
            <= count_phrase(candidate, options_norm[j]) * count_phrase(options_norm[j], options_norm[i])
            for j in inside
        )
        if not shadowed:
            keep.append(i)
    if len(keep) == 1:
        return keep[0]
    return _AMBIGUOUS if keep else None


def _names_label(m: _Matcher, text: str) -> bool:
    for hit in m.label_re.finditer(text):
        raw = hit.group("label")
        if raw in m.label_words and _WORD_AFTER.match(text[hit.end():]):
            continue  # an article or a pronoun ("A bird", "I think")
        return True
    return False


def _by_option_text(m: _Matcher, text: str, options_norm: list[str], pack: LanguagePack, whole_text: bool = True):
    tails = list(m.tail.finditer(text))
    candidates = []
    if tails:
        candidates.append(normalize(_line_rest(text, tails[-1].end()), pack))
    if whole_text and not _names_label(m, text):
        # Not in an echoed option list (it holds every option's text), and not when the output
        # talks in labels: "B is false." (options True/False) is about label B, which the label
        # rules could not read.
        candidates.append(normalize(text, pack))
    for cand in candidates:
        found = _match_option_text(cand, options_norm)
        if found is _AMBIGUOUS:
            return _AMBIGUOUS
        if found is not None:
            return found
    return None


def _without(text: str, options: Sequence[str] | None) -> str:
    """``text`` with the option texts blanked (a correction word inside an option is no correction)."""
    if not _option_in(text, options):
        return text  # none occurs: nothing is blanked (a blank can only make a later option occur)
    for o in sorted((str(o) for o in options or () if str(o).strip()), key=len, reverse=True):
        text = text.replace(o, " ")
    return text


def explain_choice(
    text: str,
    labels: Sequence[str],
    options: Sequence[str] | None,
    pack: LanguagePack | str,
) -> Extraction:
    """:func:`extract_choice` with the rule that decided (``choice:<rule>``; docs/extraction.md)."""
    labels = [str(lab) for lab in labels]
    if not labels:
        raise DataError("extract_choice: field 'labels' is empty")
    if len(set(labels)) != len(labels):
        raise DataError(f"extract_choice: field 'labels' repeats a label: {labels}")
    if options is not None and len(options) != len(labels):
        raise DataError(f"extract_choice: field 'choices' has {len(options)} options for {len(labels)} labels")
    pack = get_pack(pack)
    answer, _trace = strip_thinking(text or "")
    answer = fold_width(answer)
    if not answer:
        return Extraction(None, "choice:empty")
    answer = cut_continuation(answer)
    m = _matcher(pack.code, tuple(labels))
    clean = m.clean.get(answer, _NOT_CLEAN)
    if clean is not _NOT_CLEAN and not _option_in(answer, options):
        if clean is None:  # this clean answer's first sight: read it in full, once
            clean = m.clean[answer] = _clean_reading(m, answer, labels, pack)
        if clean is not _NOT_CLEAN:
            return clean
    return _read(m, answer, labels, options, pack)


# A model's clean answer is one label, maybe with a full stop, a bracket or bold around it: "A",
# "B.", "(c)", "**D**". Its reading cannot depend on the option texts (the proof is in
# _clean_forms), so the full reading of each is computed once per label set and pack and looked up
# after (docs/performance.md; tests/test_extract_fast_paths.py compares it with the full reading).
_CLEAN_FORMS = (("", ""), ("", "."), ("", ")"), ("(", ")"), ("**", "**"), ("[", "]"))
_NOT_CLEAN = object()


def _clean_forms(variant_to_label: dict[str, str]) -> dict[str, object]:
    """The clean answers of a label set, each mapped to None (not read yet).

    Proof that their reading does not depend on the options (when no option text occurs in the
    answer: explain_choice checks that): the option texts are read in three places only.
    1. ``_judge``, for a label found at ``text[start:end]``: the rest of its line with the closing
       marks cut (``option_rest``), and the rest of the line when a word follows the label. In a
       clean answer the only label found is the one variant, once (no other variant occurs in the
       text), so its rest of line is the form's suffix: required below to be all closing marks (cut
       to "", which normalises to "": no option compared) and not to start with a word.
    2. ``_by_option_text``: only when no rule decided; _clean_reading keeps only decided readings.
    3. ``_without`` (the correction check): it blanks option texts that occur in the answer; none does.
    """
    out: dict[str, object] = {}
    variants = list(variant_to_label)
    for v in variants:
        if len(v) != 1:
            continue
        for pre, suf in _CLEAN_FORMS:
            text = f"{pre}{v}{suf}"
            if (
                text.count(v) == 1
                and not any(w != v and w in text for w in variants)
                and _REST_PREFIX.sub("", suf) == ""
                and not _WORD_AFTER.match(suf)
            ):
                out[text] = None
    return out


def _option_in(answer: str, options: Sequence[str] | None) -> bool:
    """Whether an option text that ``_without`` would blank occurs in ``answer``."""
    for o in options or ():
        o = str(o)
        if o.strip() and o in answer:
            return True
    return False


def _clean_reading(m: _Matcher, answer: str, labels: list[str], pack: LanguagePack):
    """A clean answer's full reading, read with no options (the same with any, _clean_forms); _NOT_CLEAN
    when no rule decided it (the option texts would then be tried)."""
    found = _read(m, answer, labels, None, pack)
    return found if found.value is not None and normalize("", pack) == "" else _NOT_CLEAN


def _has_label(m: _Matcher, answer: str) -> bool:
    """Whether ``answer`` holds a character that a label variant in upper case (``m.label``: as
    given, or a look-alike) starts with. When not, no pattern built on ``m.label`` (reverse,
    correction, contrast, verdict, echo, label line, leading, final label) can match: each needs
    one such variant (no pattern is case-insensitive outside its word lists)."""
    return m.label_start.search(answer) is not None


def _read(m: _Matcher, answer: str, labels: list[str], options: Sequence[str] | None, pack: LanguagePack) -> Extraction:
    """The stages of explain_choice on a non-empty ``answer`` (thinking cut, widths folded)."""
    options_norm = [normalize(str(o), pack) for o in options] if options is not None else None
    # Without a label in upper case, every pattern that needs one finds nothing: skipped (_has_label)
    labelled = _has_label(m, answer)

    echo = labelled and _is_echo(m, answer)
    verdict, rule = _explicit(m, answer, options_norm, labels, pack, labelled)
    if verdict is None:
        verdict, rule = (_verdict_list(m, answer) if labelled else None), "verdict_list"
    lines = _label_lines(m, answer, echo) if labelled else None
    if verdict is None and lines is _AMBIGUOUS:
        verdict, rule = _AMBIGUOUS, "label_line"  # "A\nB\nC": several labels on lines of their own
    if verdict is None and not echo:
        verdict, rule = (_leading(m, answer, options_norm, labels, pack) if labelled else None), "leading_label"
        if verdict is not None and verdict is not _AMBIGUOUS and m.correction_word.search(_without(answer, options)):
            verdict = None  # "B. Actually no, A.": a leading label taken back later is not the answer
    if verdict is None:
        verdict, rule = lines, "label_line"
    if verdict is None and not echo:
        verdict, rule = (_final_bare_label(m, answer, options_norm, labels, pack) if labelled else None), "final_label"
    if verdict is None and options_norm:
        idx = _by_option_text(m, answer, options_norm, pack, whole_text=not echo)
        verdict, rule = (_AMBIGUOUS if idx is _AMBIGUOUS else (labels[idx] if idx is not None else None)), "option_text"
    if verdict is _AMBIGUOUS:
        return Extraction(None, f"choice:ambiguous:{rule}")
    if verdict is None:
        return Extraction(None, "choice:echo" if echo else "choice:none")
    return Extraction(verdict, f"choice:{rule}")


def extract_choice(
    text: str,
    labels: Sequence[str],
    options: Sequence[str] | None,
    pack: LanguagePack | str,
) -> str | None:
    """The option label the output chose, exactly as spelled in ``labels``; None if unclear."""
    return explain_choice(text, labels, options, pack).value
