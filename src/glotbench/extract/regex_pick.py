"""The ``regex`` extractor: one match of a task's regular expression, picked as lm-eval's ``regex``
filter picks it (lm_eval/filters/extraction.py ``RegexFilter``): every match in the text (``findall``),
the one at ``group_select`` (0 the first, -1 the last); a pattern with several groups gives the first
group that matched something; the pick is stripped. No match, an index past the matches, or a pattern
that runs past the time bound (extract/bounded_regex.py) gives None: no parseable answer.
"""

from __future__ import annotations

from glotbench.errors import TaskSpecError
from glotbench.extract import bounded_regex


def _as_findall(match, groups: int):
    """What ``re.findall`` lists for ``match``: the whole match, its one group, or a tuple of all."""
    if groups == 0:
        return match.group(0)
    if groups == 1:
        return match.group(1) or ""
    return tuple(g or "" for g in match.groups())


def regex_pick(text: str, pattern: str, group_select: int = 0) -> str | None:
    try:
        compiled = bounded_regex.compile(pattern)
    except Exception as err:  # noqa: BLE001 - a task file's pattern: one line
        raise TaskSpecError(f"extractor 'regex': pattern {pattern!r} is not a regular expression: {err}") from None
    try:
        found = [_as_findall(m, compiled.groups) for m in bounded_regex.finditer(compiled, text or "")]
    except bounded_regex.RegexTimeout:
        return None
    if not -len(found) <= int(group_select) < len(found):
        return None
    pick = found[int(group_select)]
    if isinstance(pick, tuple):
        pick = next((g for g in pick if g), None)
        if pick is None:
            return None
    return pick.strip()
