"""Reasoning-trace analysis for large reasoning models (OpenHuEval paper, §3.3 and §3.4).

Given responses that carry a thinking trace (``<think>...</think>`` inside the text, or a
separate reasoning field) and each item's outcome (CORRECT / INCORRECT / NOT_ATTEMPTED), report
per outcome:

* mean trace length in tokens (a ``count_tokens`` callable; the default is an APPROXIMATION:
  whitespace-separated words, with every CJK character counted as one token);
* mean number of thoughts, a thought being the stretch of trace between two reflection
  markers ("Wait", "Alternatively", "Várjunk"...) that open a sentence (after Wang et al. 2025);
* the share of segments with Explicit Translation Insertion (ETI: the model quotes the
  Hungarian and reasons about it in English), found by language identification with lingua,
  restricted to the prompt language and the pivot language. A segment is split into spans
  (quoted passages, then sentences); capitalised words inside a span are dropped first (proper
  names would tip an English sentence to Hungarian); spans left with fewer than ``min_letters``
  letters, or that lingua cannot tell apart, are undetermined. A segment is ETI when it has at least one span in
  each language, "pivot only" when every determined span is in the pivot language, and
  undetermined when no span is determined.

The paper also splits traces with a judge model. :func:`render_analysis_template` fills the
benchmark's own templates (``openhueval/prompts/analysis_templates``) and the ``parse_*``
functions read the judge's answers, so the engine can run that mode as ordinary judge calls.
"""

from __future__ import annotations

import ast
import json
import re
import unicodedata
from collections.abc import Callable, Iterable
from functools import lru_cache
from statistics import mean

from glotbench.errors import DataError
from glotbench.extract.thinking import strip_thinking
from glotbench.languages import UnknownLanguageError, get_pack
from glotbench.paths import resolve_data_file

OUTCOMES = ("CORRECT", "INCORRECT", "NOT_ATTEMPTED")

# Used only when glotbench.languages has no pack (or no markers) for the language.
FALLBACK_REFLECTION_MARKERS: dict[str, list[str]] = {
    "en": ["Wait", "But wait", "Alternatively", "Hmm", "On second thought", "Let me reconsider",
           "Let me double-check", "Actually"],
    "hu": ["Várj", "Várjunk", "Várni", "De várj", "Alternatívaként", "Vagy inkább", "Hmm",
           "Mégis", "Másrészt", "Gondoljuk újra", "Ellenőrizzük"],
}


# ---------------------------------------------------------------- traces and tokens

def split_trace(text: str | None, reasoning: str | None = None) -> tuple[str, str]:
    """``(trace, answer)``. A separate ``reasoning`` field wins; else the thinking block(s) of
    ``text`` as :func:`glotbench.extract.thinking.strip_thinking` finds them (a ``</think>``
    with no opening tag, an unclosed ``<think>`` cut off by the length limit...)."""
    answer, trace = strip_thinking(text or "")
    if reasoning:
        return reasoning.strip(), answer.strip()
    return (trace or "").strip(), answer.strip()


def _is_cjk(ch: str) -> bool:
    o = ord(ch)
    return (0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0x20000 <= o <= 0x2A6DF
            or 0xF900 <= o <= 0xFAFF or 0x3040 <= o <= 0x30FF or 0xAC00 <= o <= 0xD7AF)


def approx_token_count(text: str) -> int:
    """APPROXIMATE token count: whitespace-separated words, each CJK character one token.

    Not a model tokenizer; pass ``count_tokens`` to :func:`analyze` for exact counts.
    """
    n = 0
    for word in text.split():
        cjk = sum(1 for ch in word if _is_cjk(ch))
        rest = "".join(" " if _is_cjk(ch) else ch for ch in word).split()
        n += cjk + len(rest)
    return n


# ---------------------------------------------------------------- thoughts

def reflection_markers(lang: str) -> list[str]:
    """The language pack's reflection markers, else :data:`FALLBACK_REFLECTION_MARKERS`."""
    try:
        markers = list(get_pack(lang).reflection_markers or [])
    except UnknownLanguageError:
        markers = []
    return markers or list(FALLBACK_REFLECTION_MARKERS.get(lang, []))


@lru_cache(maxsize=64)
def _marker_regex(markers: tuple[str, ...]) -> re.Pattern:
    alts = "|".join(re.escape(m) for m in sorted(markers, key=len, reverse=True))
    # A marker counts where a sentence opens: at the start, or after . ! ? … or a newline,
    # allowing spaces, emphasis, quotes and brackets in between; whole words only.
    return re.compile(r"(?:^|(?<=[.!?…\n]))[\s*_\"“„(\[]*(?P<m>(?:" + alts + r"))(?!\w)", re.IGNORECASE)


def split_thoughts(trace: str, markers: Iterable[str]) -> list[str]:
    """Cut ``trace`` before every sentence-initial reflection marker; empty pieces are dropped."""
    trace = trace.strip()
    if not trace:
        return []
    markers = tuple(m for m in markers if m)
    if not markers:
        return [trace]
    cuts = sorted({m.start("m") for m in _marker_regex(markers).finditer(trace)} | {0})
    pieces = [trace[a:b].strip() for a, b in zip(cuts, [*cuts[1:], len(trace)])]
    return [p for p in pieces if p]


# ---------------------------------------------------------------- language of segments

@lru_cache(maxsize=16)
def _detector(langs: tuple[str, ...], min_distance: float):
    from glotbench.extras import require

    require("analysis", "language identification (glotbench analyze thinking)")
    import lingua
    IsoCode639_1, Language, LanguageDetectorBuilder = lingua.IsoCode639_1, lingua.Language, lingua.LanguageDetectorBuilder

    try:
        languages = [Language.from_iso_code_639_1(IsoCode639_1.from_str(code)) for code in langs]
    except ValueError as err:
        raise DataError(f"language identification: unknown ISO 639-1 code in {langs}: {err}") from None
    return LanguageDetectorBuilder.from_languages(*languages).with_minimum_relative_distance(min_distance).build()


_QUOTED = re.compile(r"\"[^\"\n]+\"|“[^”\n]+”|„[^”“\n]+[”“]|«[^»\n]+»")
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"”»']?\s+|\n+")
_MARKUP = re.compile(r"#\d+#?|\*\*|__|`")


def text_spans(segment: str) -> list[str]:
    """Quoted passages first, then the sentences of what is left."""
    quoted = [m.group(0)[1:-1] for m in _QUOTED.finditer(segment)]
    rest = _QUOTED.sub("\n", segment)
    return [s for s in (*quoted, *_SENTENCE_END.split(rest)) if s and s.strip()]


def drop_names(span: str) -> str:
    """``span`` without capitalised words that do not open it: proper names ("Kiskőrös",
    "Petőfi") carry letters like ő/á that would make an English sentence look Hungarian."""
    words = span.split()
    return " ".join(w for k, w in enumerate(words) if k == 0 or not _starts_upper(w))


def _starts_upper(word: str) -> bool:
    for ch in word:
        if ch.isalpha():
            return ch.isupper()
    return False


def _letters(s: str) -> int:
    return sum(1 for ch in s if unicodedata.category(ch).startswith("L"))


def span_languages(segment: str, langs: tuple[str, ...], min_letters: int = 15, min_distance: float = 0.1) -> list[str | None]:
    """ISO code per span of ``segment`` (``None``: too short or undecided)."""
    det = _detector(tuple(langs), min_distance)
    out: list[str | None] = []
    for span in text_spans(segment):
        clean = drop_names(_MARKUP.sub(" ", span))
        if _letters(clean) < min_letters:
            out.append(None)
            continue
        lang = det.detect_language_of(clean)
        out.append(lang.iso_code_639_1.name.lower() if lang is not None else None)
    return out


def classify_segment(segment: str, prompt_lang: str, pivot_lang: str = "en", min_letters: int = 15,
                     min_distance: float = 0.1) -> str:
    """``"eti"``, ``"pivot_only"``, ``"prompt_only"`` or ``"undetermined"``."""
    found = {c for c in span_languages(segment, (prompt_lang, pivot_lang), min_letters, min_distance) if c}
    if not found:
        return "undetermined"
    if found == {prompt_lang, pivot_lang}:
        return "eti"
    return "pivot_only" if found == {pivot_lang} else "prompt_only"


# ---------------------------------------------------------------- the report

def analyze(
    records: Iterable[dict],
    prompt_lang: str = "hu",
    markers: Iterable[str] | None = None,
    count_tokens: Callable[[str], int] | None = None,
    pivot_lang: str = "en",
    min_letters: int = 15,
    detect_language: bool = True,
) -> dict[str, dict]:
    """Per-outcome statistics (plus ``"ALL"``) over records with fields ``outcome`` (one of
    :data:`OUTCOMES`), ``response`` (text, may hold ``<think>``), optional ``reasoning`` (a
    separate trace) and optional ``segments`` (a judge's split of the trace, used instead of
    splitting at markers). Markers default to the prompt language's plus the pivot language's.
    Records without a trace are counted in ``n_without_trace`` and left out of the means.
    """
    count = count_tokens or approx_token_count
    if markers is None:
        markers = list(dict.fromkeys(reflection_markers(prompt_lang) + reflection_markers(pivot_lang)))
    markers = list(markers)
    eti_applies = detect_language and prompt_lang != pivot_lang
    rows: dict[str, list[dict]] = {o: [] for o in OUTCOMES}
    without: dict[str, int] = {o: 0 for o in OUTCOMES}
    for k, rec in enumerate(records):
        outcome = rec.get("outcome")
        if outcome not in rows:
            raise DataError(f"thinking record {rec.get('id', k)}: field 'outcome' must be one of {', '.join(OUTCOMES)}, not {outcome!r}")
        trace, _ = split_trace(rec.get("response"), rec.get("reasoning"))
        if not trace:
            without[outcome] += 1
            continue
        segments = rec.get("segments") or split_thoughts(trace, markers)
        kinds = [classify_segment(s, prompt_lang, pivot_lang, min_letters) for s in segments] if eti_applies else []
        rows[outcome].append({"tokens": count(trace), "thoughts": len(segments), "kinds": kinds})
    report = {o: _stats(rows[o], without[o], eti_applies) for o in OUTCOMES}
    report["ALL"] = _stats([r for o in OUTCOMES for r in rows[o]], sum(without.values()), eti_applies)
    return report


def _stats(rows: list[dict], n_without: int, eti_applies: bool) -> dict:
    kinds = [k for r in rows for k in r["kinds"]]
    determined = [k for k in kinds if k != "undetermined"]
    out = {
        "n_responses": len(rows),
        "n_without_trace": n_without,
        "mean_tokens": mean(r["tokens"] for r in rows) if rows else None,
        "mean_thoughts": mean(r["thoughts"] for r in rows) if rows else None,
        "n_segments": sum(r["thoughts"] for r in rows),
    }
    if eti_applies:
        out.update({
            "n_eti": kinds.count("eti"),
            "n_pivot_only": kinds.count("pivot_only"),
            "n_prompt_only": kinds.count("prompt_only"),
            "n_undetermined": kinds.count("undetermined"),
            "eti_share": kinds.count("eti") / len(determined) if determined else None,
            "undetermined_share": kinds.count("undetermined") / len(kinds) if kinds else None,
        })
    return out


# ---------------------------------------------------------------- judge-based splitting

ANALYSIS_DIR = "openhueval/prompts/analysis_templates"
# name -> (file, placeholders it takes)
TEMPLATES: dict[str, tuple[str, tuple[str, ...]]] = {
    "fib_response_split": ("HuMatchingFIB__template_DeepSeek_R1_QwQ_response_split.txt", ("{Raw_COT}",)),
    "fib_segments_classification": ("HuMatchingFIB__template_DeepSeek_R1_QwQ_segments_classification.txt", ("{Raw_Seg}",)),
    "simpleqa_shift_expression": ("HuSimpleQA__shift_expression.txt", ("<question>", "<answer>")),
    "simpleqa_confirm_shift": ("HuSimpleQA__confirm_shift_postion.txt", ("<input_text>",)),
    "simpleqa_access_thought": ("HuSimpleQA__access_thought.txt", ("<problem>", "<split_solutions>", "<expected_answer>")),
}


def render_analysis_template(name: str, values: dict[str, str]) -> str:
    """Fill one of :data:`TEMPLATES`; ``values`` maps each placeholder (as written in the file,
    e.g. ``"{Raw_COT}"`` or ``"<question>"``) to its text. Plain substitution."""
    if name not in TEMPLATES:
        raise DataError(f"unknown analysis template {name!r}; known: {', '.join(TEMPLATES)}")
    fname, placeholders = TEMPLATES[name]
    path = resolve_data_file(f"{ANALYSIS_DIR}/{fname}")
    if not path.is_file():
        raise DataError(f"{path}: analysis template not found")
    missing = [p for p in placeholders if p not in values]
    if missing:
        raise DataError(f"analysis template {name}: no value for placeholder {missing[0]}")
    text = path.read_text(encoding="utf-8")
    for p in placeholders:
        text = text.replace(p, values[p])
    return text


def build_fib_split_request(trace: str) -> str:
    """Judge request splitting a HuMatchingFIB trace into Introduction/Reasoning/Review/Summary."""
    return render_analysis_template("fib_response_split", {"{Raw_COT}": trace})


def build_fib_classification_request(options: list[str], std_ans: list[str], model_ans: list[str], segments: list[dict]) -> str:
    """Judge request tagging each Reasoning segment on the paper's four dimensions."""
    raw = json.dumps({"options": options, "std_ans": std_ans, "model_ans": model_ans, "segments": segments},
                     ensure_ascii=False, indent=2)
    return render_analysis_template("fib_segments_classification", {"{Raw_Seg}": raw})


def _loose_object(text: str):
    """The judge's JSON-like answer: fenced or bare, JSON or a Python-literal dict (single quotes)."""
    text = re.sub(r"```(?:json|python)?", "", text or "")
    start = text.find("{")
    if start < 0:
        return None
    dec = json.JSONDecoder()
    try:
        return dec.raw_decode(text, start)[0]
    except json.JSONDecodeError:
        pass
    end = text.rfind("}")
    if end > start:
        try:
            return ast.literal_eval(text[start:end + 1])
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    return None


_SEG_PAIR = re.compile(
    r"[\"']text[\"']\s*:\s*\"((?:[^\"\\]|\\.)*)\"\s*,*\s*[\"']categor(?:y|ty)[\"']\s*:\s*[\"']([A-Za-z_ ]+)[\"']", re.DOTALL)


def parse_segments(judge_output: str) -> list[dict]:
    """Segments (``{"text", "category", ...}``) from a split or classification answer.

    Accepts the template's own misspelt key ``categoty``; falls back to pairing ``text`` and
    ``category`` entries with a pattern when the answer is not valid JSON or Python.
    """
    obj = _loose_object(judge_output)
    segs = None
    if isinstance(obj, dict):
        segs = obj.get("segment") or obj.get("segments")
    if isinstance(segs, list):
        out = []
        for s in segs:
            if isinstance(s, dict) and "text" in s:
                s = dict(s)
                if "categoty" in s and "category" not in s:
                    s["category"] = s.pop("categoty")
                out.append(s)
        return out
    out = []
    for m in _SEG_PAIR.finditer(judge_output or ""):
        try:
            txt = json.loads('"' + m.group(1) + '"')
        except json.JSONDecodeError:
            txt = m.group(1)
        out.append({"text": txt, "category": m.group(2)})
    return out


def build_shift_expression_request(question: str, trace: str) -> str:
    """HuSimpleQA step 1/2: ask for the contrastive expressions that may start a new thought."""
    return render_analysis_template(
        "simpleqa_shift_expression", {"<question>": json.dumps(question, ensure_ascii=False),
                                      "<answer>": json.dumps(trace, ensure_ascii=False)})


def parse_shift_expressions(judge_output: str) -> tuple[str | None, list[str]]:
    obj = _loose_object(judge_output)
    if not isinstance(obj, dict):
        return None, []
    exprs = obj.get("shift_expression") or []
    return obj.get("language"), [e for e in exprs if isinstance(e, str) and e.strip()]


def mark_shift_candidates(trace: str, expressions: Iterable[str]) -> tuple[str, list[int]]:
    """Wrap every sentence-initial occurrence of the expressions as
    ``<shift_word_X>expr<shift_word_X>`` (X = 1, 2, ... in order); returns the marked text and
    the character offset in ``trace`` of each candidate X (index X-1)."""
    exprs = tuple(e.strip() for e in expressions if e and e.strip())
    if not exprs:
        return trace, []
    hits = [(m.start("m"), m.end("m")) for m in _marker_regex(exprs).finditer(trace)]
    parts, last = [], 0
    for x, (a, b) in enumerate(hits, 1):
        parts += [trace[last:a], f"<shift_word_{x}>{trace[a:b]}<shift_word_{x}>"]
        last = b
    parts.append(trace[last:])
    return "".join(parts), [a for a, _ in hits]


def build_confirm_shift_request(marked_trace: str) -> str:
    """HuSimpleQA step 2/2: ask which marked candidates really shift the thought."""
    return render_analysis_template("simpleqa_confirm_shift", {"<input_text>": marked_trace})


def parse_confirmed_shift_ids(judge_output: str) -> list[int]:
    obj = _loose_object(judge_output)
    ids = obj.get("shift_word_ids") if isinstance(obj, dict) else None
    out = []
    for i in ids or []:
        try:
            out.append(int(i))
        except (TypeError, ValueError):
            continue
    return sorted(set(out))


def split_at_shifts(trace: str, offsets: list[int], confirmed_ids: Iterable[int]) -> list[str]:
    """Thoughts: ``trace`` cut before each confirmed candidate (1-based ids into ``offsets``)."""
    cuts = sorted({offsets[i - 1] for i in confirmed_ids if 1 <= i <= len(offsets)} | {0})
    pieces = [trace[a:b].strip() for a, b in zip(cuts, [*cuts[1:], len(trace)])]
    return [p for p in pieces if p]


def build_thought_assessment_request(problem: str, thought: str, expected_answer: str) -> str:
    """Ask the judge whether a thought leads to the correct answer (confidence out of 2)."""
    return render_analysis_template(
        "simpleqa_access_thought",
        {"<problem>": problem, "<split_solutions>": thought, "<expected_answer>": expected_answer})


def parse_thought_assessment(judge_output: str) -> int | None:
    """The judge's confidence score (0-2); the paper counts 2 as a correct thought."""
    obj = _loose_object(judge_output)
    val = obj.get("confident_score") if isinstance(obj, dict) else None
    if val is None:
        m = re.search(r"confident_score[\"']?\s*:\s*[\"']?(\d)", judge_output or "")
        val = m.group(1) if m else None
    try:
        score = int(str(val).strip())
    except (TypeError, ValueError):
        return None
    return score if 0 <= score <= 2 else None
