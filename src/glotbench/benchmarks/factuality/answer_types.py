"""A heuristic answer type for short-answer items (Chinese SimpleQA App. D: dates and numbers are
harder than persons, places and organizations).

Chinese SimpleQA ships no answer-type field; English SimpleQA's CSV carries one in its metadata
(``answer_type``), used as it is when present. Otherwise the type is guessed from the answer's
shape (a date, a number) and the question's wording (谁 / who -> person, 哪里 / where -> place, ...).
It is a HEURISTIC, labelled as such wherever it is shown: ``other`` when nothing matches.
"""

from __future__ import annotations

import re

TYPES = ("date", "number", "person", "place", "organization", "other")

_DATE_ANSWER = re.compile(r"\d{1,4}\s*年|\d{1,2}\s*月|\d{1,2}\s*[日号]|世纪|年代|\b\d{4}-\d{2}-\d{2}\b")
_YEAR_ONLY = re.compile(r"^(公元前?)?\d{3,4}$")
_YEAR_QUESTION = re.compile(r"年|year|when", re.I)
_EN_MONTH = re.compile(r"\b(January|February|March|April|May|June|July|August|September|October|November|December)\b", re.I)
_NUMBER_ANSWER = re.compile(r"^[约大概]*[-+]?(\d[\d.,，]*|[一二三四五六七八九十百千万亿两零〇]+)\s*"
                            r"(%|万|亿|千|百|个|人|种|次|位|名|座|条|岁|米|千米|公里|平方千米|吨|克|千克|元|美元|度|倍|部|本|章|集|届)?$")
_Q = [
    ("date", re.compile(r"哪一年|哪年|何时|什么时候|哪个朝代|哪一天|哪个世纪|\bwhen\b|what year|which year|what date", re.I)),
    ("number", re.compile(r"多少|几[个位次种年岁名座条]|\bhow (many|much|long|tall|old)\b", re.I)),
    ("person", re.compile(r"谁|哪位|哪个人|\bwho\b|\bwhom\b", re.I)),
    ("place", re.compile(r"哪里|何处|哪个(国家|城市|省|地区|地方|州|县)|位于|\bwhere\b|which (country|city|state|province)", re.I)),
    ("organization", re.compile(r"(公司|机构|组织|大学|学院|学校|协会|部门|企业|团体|球队)|which (company|organization|university|team)", re.I)),
]


def answer_type(question: str, answer: str, given: str | None = None) -> str:
    """``given`` (a dataset's own answer type, lower-cased) wins; else the heuristic."""
    if given:
        return str(given).strip().lower()
    a = (answer or "").strip()
    if _EN_MONTH.search(a) or (_DATE_ANSWER.search(a) and len(a) <= 16) or (_YEAR_ONLY.match(a) and _YEAR_QUESTION.search(question or "")):
        return "date"
    if _NUMBER_ANSWER.match(a):
        return "number"
    for name, rx in _Q:
        if rx.search(question or ""):
            return name
    return "other"
