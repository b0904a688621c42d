"""Final-answer number extraction from free-text solutions, with per-language number formats.

Where the answer is taken from, first match wins:

1. after the last ``####`` (GSM8K / Czech-Bench style);
2. the last ``\\boxed{…}`` (``\\frac{a}{b}`` inside is read as a/b);
3. the last answer phrase of the pack (or English) followed by a number: "Válasz: 18",
   "答案是18", "Хариулт: 18". If the same line then says "= N", the last N wins
   ("Answer: 2 × 9 = 18" → 18). For Chinese, a Chinese numeral is read there too ("答案是十八");
4. otherwise the last number in the text.

How a number is read (``parse_number``), given the pack's ``decimal_separator`` and
``thousands_separators``:

* Full-width digits and signs (１２３, －５) count; "−" (U+2212) is a minus. A minus sign counts
  only when no letter or digit stands right before it ("16-3" is 16 and 3).
* Spaces (ASCII, no-break U+00A0, narrow no-break U+202F, thin U+2009) group thousands only in
  packs that list them, and only between groups of exactly three digits: hu "1 234,5" = 1234.5.
* A token with both "." and ",": the one that comes last is the decimal mark ("1.234,5" and
  "1,234.5" are both 1234.5), whatever the pack.
* A token with only the pack's decimal mark, once: decimal ("3,5" in hu = 3.5; "3.5" in en).
* A token with only the other mark: thousands grouping if every group after the first has exactly
  three digits and the pack lists that mark as a thousands separator ("1.234" in hu = 1234,
  "1,234" in en = 1234). Otherwise, in a decimal-comma pack a single "." is still read as a
  decimal point ("3.5" in hu = 3.5: models write decimal points in every language), while in a
  decimal-point pack "3,5" is ambiguous.
* Anything else ("1,2,3", "2024.05.16") is ambiguous. If the chosen answer number is ambiguous,
  extraction returns None rather than guess.
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any

from glotbench.errors import DataError
from glotbench.extract.text import WORD_CHARS, cut_continuation, fold_width, words_alternation
from glotbench.extract.result import Extraction
from glotbench.extract.thinking import strip_thinking
from glotbench.languages import LanguagePack, get_pack

_SPACES = (" ", "\u00a0", "\u202f", "\u2009")

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000}
_CN_BIG = {"万": 10_000, "亿": 100_000_000}
_CN_RUN = re.compile(r"负?[零〇一二两三四五六七八九十百千万亿]+")

_AMBIGUOUS = object()

_VULGAR = "¼½¾⅐⅑⅒⅓⅔⅕⅖⅗⅘⅙⅚⅛⅜⅝⅞"
_MAGNITUDE = {"百": 100, "千": 1000, "万": 10_000, "亿": 100_000_000}
# Digits the token did not take, right before or after it: "1 234,5" in English is not "1".
_LOOSE_AFTER = re.compile(
    r"[ \u00a0\u202f\u2009]?\d|[/⁄]\d|[百千万亿][0-9零〇一二两三四五六七八九十]"
    r"|[eE][-+]?\d"  # 1e3: scientific notation is not read
    r"|[ \t]*(?:[^\W\d_]+[ \t]*){1,2}[-+]?\d"  # 2 hours 30 minutes, 2小时30分钟: a compound quantity
    r"|[ \t]+(?:and a half|a půl|és fél|хагас)\b|个?半"  # 3 and a half, 3个半
)
_LOOSE_BEFORE = re.compile(r"\d[ \u00a0\u202f\u2009]$|\d[/⁄]$|\d[ \t]*(?:[^\W\d_]+[ \t]*){1,2}$")
_LATEX_FRAC = re.compile(r"\\[dt]?frac\s*\{\s*(-?\d+)\s*\}\s*\{\s*(\d+)\s*\}")


class _Grammar:
    def __init__(self, pack: LanguagePack) -> None:
        spaces = "".join(s for s in pack.thousands_separators if s in _SPACES)
        space_group = f"|[{re.escape(spaces)}]\\d{{3}}(?!\\d)" if spaces else ""
        lead = f"(?<![{WORD_CHARS}.,/⁄])"
        body = f"\\d+(?:[.,]\\d+{space_group})*"
        self.token = re.compile(
            f"(?:{lead}(?P<sign>[-+]))?{lead}"
            f"(?:(?P<mixed>\\d+)[ \\u00a0]+(?P<mnum>\\d+)[/⁄](?P<mden>\\d+)(?![\\d/⁄.,])"  # 1 1/2
            f"|(?P<body>{body})(?:[ \\u00a0]?(?P<vfrac>[{_VULGAR}]))?(?:[ \\t]*[/⁄][ \\t]*(?P<den>\\d+)(?![\\d/⁄]|[.,]\\d))?"
            f"|(?P<vonly>[{_VULGAR}]))"
            f"(?:[ \\t]*(?P<mag>[百千万亿]+)(?![零〇一二两三四五六七八九十百千万亿0-9]))?"
        )
        answers = list(pack.answer_words) + (list(get_pack("en").answer_words) if pack.code != "en" else [])
        conn = words_alternation(list(pack.connectors) + list(get_pack("en").connectors))
        gap = f"(?:[\\s:：=>*_\"'“”„«»(\\[【（$€£¥₮~≈]|{conn}){{0,16}}"
        self.answer = re.compile(f"{words_alternation(answers)}{gap}")
        self.equals = re.compile(r"[=＝]\s*")


def _grammar(pack: LanguagePack) -> _Grammar:
    g = _GRAMMARS.get(pack.code)
    if g is None:
        g = _GRAMMARS[pack.code] = _Grammar(pack)
    return g


_GRAMMARS: dict[str, _Grammar] = {}


def _read_body(body: str, pack: LanguagePack):
    """The value of one unsigned number token, or _AMBIGUOUS."""
    for sp in _SPACES:
        body = body.replace(sp, "")  # the token regex only admits 3-digit groups after a space
    dots, commas = body.count("."), body.count(",")
    if not dots and not commas:
        return float(int(body))
    if dots and commas:
        dec = "." if body.rfind(".") > body.rfind(",") else ","
        grp = "," if dec == "." else "."
        if body.count(dec) != 1:
            return _AMBIGUOUS
        whole, frac = body.split(dec)
        groups = whole.split(grp)
        if not (1 <= len(groups[0]) <= 3 and all(len(g) == 3 for g in groups[1:])):
            return _AMBIGUOUS
        return float(f"{''.join(groups)}.{frac}")
    mark = "." if dots else ","
    parts = body.split(mark)
    grouped = 1 <= len(parts[0]) <= 3 and all(len(p) == 3 for p in parts[1:])
    if mark == pack.decimal_separator:
        return float(f"{parts[0]}.{parts[1]}") if len(parts) == 2 else _AMBIGUOUS
    if grouped and mark in pack.thousands_separators:
        return float("".join(parts))
    if mark == "." and len(parts) == 2:
        return float(body)  # a decimal point in a decimal-comma language
    return _AMBIGUOUS


def _value(match: re.Match[str], pack: LanguagePack):
    """The value of a number token (fractions, vulgar fractions and 万/亿 included), or _AMBIGUOUS."""
    text = match.string
    if _LOOSE_AFTER.match(text, match.end()) or _LOOSE_BEFORE.search(text, max(0, match.start() - 40), match.start()):
        return _AMBIGUOUS
    if match.group("mixed") is not None:
        num, den = int(match.group("mnum")), int(match.group("mden"))
        if den == 0 or num >= den:
            return _AMBIGUOUS
        v = int(match.group("mixed")) + num / den
    elif match.group("vonly") is not None:
        v = unicodedata.numeric(match.group("vonly"))
    else:
        if sum(ch.isdigit() for ch in match.group(0)) > 15:
            return _AMBIGUOUS  # a runaway string of digits (cut by the token limit), beyond float precision
        v = _read_body(match.group("body"), pack)
        if v is _AMBIGUOUS:
            return v
        if match.group("vfrac"):
            if v != int(v):
                return _AMBIGUOUS
            v += unicodedata.numeric(match.group("vfrac"))
        elif match.group("den") is not None:
            den = int(match.group("den"))
            if den == 0 or v != int(v):
                return _AMBIGUOUS
            v = v / den
    if match.group("mag"):
        for ch in match.group("mag"):
            v *= _MAGNITUDE[ch]
    return -v if match.group("sign") == "-" else v


def chinese_numeral(text: str) -> int | None:
    """Read a Chinese numeral such as 十八, 三百零五, 两千, 一万二千, 负三; None if ``text`` is not one."""
    s = text.strip()
    neg = s.startswith("负")
    s = s[1:] if neg else s
    if not s or any(c not in _CN_DIGITS and c not in _CN_UNITS and c not in _CN_BIG for c in s):
        return None
    if all(c in _CN_DIGITS for c in s) and len(s) > 1:
        value = int("".join(str(_CN_DIGITS[c]) for c in s))  # digit-by-digit, e.g. 二〇二四
        return -value if neg else value
    total, section, digit, last_unit, last_big = 0, 0, None, 10_000, 10**12
    for c in s:
        if c in _CN_DIGITS:
            if digit:  # two non-zero digits in a row without a unit between them
                return None
            digit = _CN_DIGITS[c]
        elif c in _CN_UNITS:
            if _CN_UNITS[c] >= last_unit:  # units must fall within a section: 五十五十 is not a number
                return None
            section += (1 if digit is None else digit) * _CN_UNITS[c]
            digit, last_unit = None, _CN_UNITS[c]
        else:
            if _CN_BIG[c] >= last_big:
                return None
            section += digit or 0
            total += section * _CN_BIG[c]
            section, digit, last_unit, last_big = 0, None, 10_000, _CN_BIG[c]
    value = total + section + (digit or 0)
    return -value if neg else value


def _first_number(text: str, pack: LanguagePack):
    g = _grammar(pack)
    m = g.token.search(text)
    if not m:
        return None
    line_end = text.find("\n", m.start())
    line = text[m.start() : line_end if line_end >= 0 else len(text)]
    after_eq = None
    for eq in g.equals.finditer(line):
        nm = g.token.match(line, eq.end())
        if nm:
            after_eq = nm
    return _value(after_eq or m, pack)


def _answer_line(rest: str) -> str:
    """The rest of the answer phrase's line, or the next non-blank line when that is empty."""
    first, _, more = rest.partition("\n")
    if first.strip():
        return first
    for line in more.split("\n"):
        if line.strip():
            return line
    return ""


def _boxed_contents(text: str) -> list[str]:
    out = []
    for m in re.finditer(r"\\(?:boxed|fbox)\s*\{", text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if depth == 0:
            out.append(text[m.end() : i - 1])
    return out


def _read_boxed(content: str, pack: LanguagePack):
    frac = re.fullmatch(r"\s*(-?)\s*\\[dt]?frac\s*\{\s*(-?\d+)\s*\}\s*\{\s*(-?\d+)\s*\}\s*", content)
    if frac:
        num, den = int(frac.group(2)), int(frac.group(3))
        if den == 0:
            return None
        return (-1 if frac.group(1) else 1) * num / den
    content = re.sub(r"\\(?:text|mathrm|textbf)\s*\{([^{}]*)\}", r"\1", content)
    content = content.replace("{,}", ",").replace("\\,", " ").replace("\\!", "")
    return _first_number(content, pack)


_FINAL_CHARS = set(".!?。！？…)）]】*_\"'»”“%$€£¥₮`")


def _ends_near(text: str, pos: int) -> bool:
    """The last number closes the output: at most one short line (12 words / 24 CJK characters)
    follows, ending like a sentence (a final mark, a closing bracket or a currency/percent sign)
    unless it is a single word (a unit: "1,000 доллар", "1200 Ft").
    A restated question cut off by the token limit ("… 2 боолт цэнхэр … утас.\n\nНэ") has none."""
    rest = text[pos:].strip()
    if "\n" in rest:
        return False
    last_line = text.rstrip().rsplit("\n", 1)[-1]
    if "\n" in text.strip() and len(last_line.split()) > 4 and text.rstrip()[-1:] not in _FINAL_CHARS:
        return False  # reasoning cut off mid-line by the token limit: "… is $80,000 - $50,000 = $15,000"
    cjk = sum(1 for c in rest if "\u3400" <= c <= "\u9fff")
    if rest and rest[-1] not in _FINAL_CHARS and (len(rest.split()) > 1 or cjk > 3):
        return False  # cut mid-sentence by the token limit: "… 80,000 доллар за"; a unit alone is fine
    return len(rest.split()) <= 12 and cjk <= 24


def explain_number(text: str, pack: LanguagePack | str) -> Extraction:
    """:func:`extract_number` with the rule that decided (``number:<rule>``; docs/extraction.md)."""
    pack = get_pack(pack)
    answer, _trace = strip_thinking(text or "")
    answer = fold_width(answer)
    if not answer.strip():
        return Extraction(None, "number:empty")
    answer = cut_continuation(answer)
    answer = _LATEX_FRAC.sub(lambda m: f"{m.group(1)}/{m.group(2)}", answer)
    found: Any = None
    rule = "none"
    if "####" in answer:
        found, rule = _first_number(answer.rsplit("####", 1)[1], pack), "hashes"
    elif boxes := _boxed_contents(answer):
        found, rule = _read_boxed(boxes[-1], pack), "boxed"
    else:
        g = _grammar(pack)
        for hit in reversed(list(g.answer.finditer(answer))):
            line = _answer_line(answer[hit.end() :])
            if g.token.search(line):
                found, rule = _first_number(line, pack), "answer_phrase"
                break
            if "chinese" in pack.numeral_systems:
                cn = _CN_RUN.match(line.strip())
                if cn and (value := chinese_numeral(cn.group(0))) is not None:
                    found, rule = float(value), "answer_phrase_chinese_numeral"
                    break
        else:
            tokens = list(g.token.finditer(answer))
            if tokens and _ends_near(answer, tokens[-1].end()):
                found, rule = _value(tokens[-1], pack), "last_number"
            elif tokens:
                found, rule = _AMBIGUOUS, "last_number_not_at_end"
            elif "chinese" in pack.numeral_systems and (cn := _CN_RUN.fullmatch(answer.strip(" 。.\n"))):
                value = chinese_numeral(cn.group(0))
                found, rule = (float(value) if value is not None else None), "chinese_numeral"
    if found is _AMBIGUOUS:
        return Extraction(None, f"number:ambiguous:{rule}")
    if found is None:
        return Extraction(None, f"number:none" if rule == "none" else f"number:unreadable:{rule}")
    return Extraction(float(found), f"number:{rule}")


def extract_number(text: str, pack: LanguagePack | str) -> float | None:
    """The final answer number in ``text``; None when there is none or it is ambiguous."""
    return explain_number(text, pack).value


def parse_number(text: str, pack: LanguagePack | str = "en") -> float | None:
    """``text`` read as exactly one number in the pack's format (gold answers, JSON fields); else None."""
    pack = get_pack(pack)
    s = fold_width(str(text)).strip()
    m = _grammar(pack).token.fullmatch(s)
    if not m:
        return None
    v = _value(m, pack)
    return None if v is _AMBIGUOUS else float(v)


def numbers_match(pred: Any, gold: Any, rel_tol: float = 1e-6, abs_tol: float = 1e-9, pack: LanguagePack | str = "en") -> bool:
    """Whether ``pred`` equals ``gold`` within tolerance. None or unreadable ``pred`` never matches.

    A string ``gold`` is read with :func:`parse_number` in the pack's format (English by default,
    which is how datasets store numbers); an unreadable gold raises DataError.
    """
    if pred is None:
        return False
    if isinstance(pred, str):
        pred = parse_number(pred, pack)
        if pred is None:
            return False
    if isinstance(gold, str):
        parsed = parse_number(gold, pack)
        if parsed is None:
            raise DataError(f"numbers_match: gold answer {gold!r} is not a number")
        gold = parsed
    try:
        return math.isclose(float(pred), float(gold), rel_tol=rel_tol, abs_tol=abs_tol)
    except (TypeError, ValueError):
        return False
