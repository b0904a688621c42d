"""Answer extraction: turning a raw model output into the answer a scorer compares.

Every extractor has one signature, so a task YAML can name it (``extractor: {name: choice}``)::

    fn(text: str, *, sample: dict, pack: LanguagePack, **options) -> Any | None

* ``text``: the raw model output (thinking blocks included; each extractor strips them).
* ``sample``: the task sample. Multiple-choice extractors read ``sample["labels"]`` (the option
  labels as shown in the prompt, e.g. ``["A", "B", "C", "D"]`` or ``["А", "Б", "В", "Г"]``) and
  ``sample.get("choices")`` (the option texts, same order; optional). Others ignore it.
* ``pack``: the task language's :class:`~glotbench.languages.LanguagePack` (a code also works).
* ``options``: the extractor's own settings from the task YAML (see each one below).
* Returns the answer, or **None when the output cannot be parsed**. An extractor may carry an
  ``explain`` attribute, a twin with the same signature returning an
  :class:`~glotbench.extract.result.Extraction` (value + the rule that decided); the engine
  records that rule in samples.jsonl (``extraction_rule``). ``choice`` and ``number`` have one; the engine counts those per
  task. No extractor raises on model output; they raise DataError on a bad ``sample`` and
  TaskSpecError on unknown options (both one line; the caller adds the file and record).

Registered extractors:

``choice``
    One of ``sample["labels"]`` (see :mod:`glotbench.extract.choice`).
``number``
    The final answer as a float (see :mod:`glotbench.extract.number`).
``json``
    The first JSON object as a dict (see :mod:`glotbench.extract.jsonobj`). Option
    ``required_keys: [..]``: None unless the object has all of them.
``text``
    The answer text with thinking blocks removed and whitespace stripped; None if empty.
    Option ``first_line: true`` keeps only the first non-empty line.
``regex``
    One match of ``pattern`` (thinking blocks removed), picked as lm-eval's ``regex`` filter picks it:
    option ``group_select`` (0 the first match, -1 the last); a pattern with several groups gives the
    first group that matched (see :mod:`glotbench.extract.regex_pick`). None when nothing matches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from glotbench.errors import DataError, TaskSpecError
from glotbench.extract.choice import explain_choice, extract_choice
from glotbench.extract.confidence import StatedConfidence, read_confidence
from glotbench.extract.jsonobj import first_json_object
from glotbench.extract.number import explain_number, extract_number, numbers_match, parse_number
from glotbench.extract.refusal import is_refusal
from glotbench.extract.regex_pick import regex_pick
from glotbench.extract.result import Extraction, explain, explainer
from glotbench.extract.thinking import reflection_counts, strip_thinking
from glotbench.languages import LanguagePack, get_pack
from glotbench.registry import Registry

Extractor = Callable[..., Any]

__all__ = [
    "EXTRACTORS",
    "Extraction",
    "Extractor",
    "StatedConfidence",
    "explain",
    "explain_choice",
    "explain_number",
    "explainer",
    "extract_choice",
    "extract_number",
    "first_json_object",
    "get_extractor",
    "is_refusal",
    "numbers_match",
    "parse_number",
    "read_confidence",
    "reflection_counts",
    "register_extractor",
    "strip_thinking",
]


def _choice(text: str, *, sample: dict, pack: LanguagePack | str, **options: Any) -> str | None:
    if options:
        raise TaskSpecError(f"extractor 'choice': unknown options {sorted(options)}")
    labels = sample.get("labels")
    if not labels:
        raise DataError("extractor 'choice': the sample has no 'labels' field")
    return extract_choice(text, labels, sample.get("choices"), get_pack(pack))


def _explain_choice(text: str, *, sample: dict, pack: LanguagePack | str, **options: Any) -> Extraction:
    if options:
        raise TaskSpecError(f"extractor 'choice': unknown options {sorted(options)}")
    labels = sample.get("labels")
    if not labels:
        raise DataError("extractor 'choice': the sample has no 'labels' field")
    return explain_choice(text, labels, sample.get("choices"), get_pack(pack))


def _number(text: str, *, sample: dict, pack: LanguagePack | str, **options: Any) -> float | None:
    if options:
        raise TaskSpecError(f"extractor 'number': unknown options {sorted(options)}")
    return extract_number(text, get_pack(pack))


def _explain_number(text: str, *, sample: dict, pack: LanguagePack | str, **options: Any) -> Extraction:
    if options:
        raise TaskSpecError(f"extractor 'number': unknown options {sorted(options)}")
    return explain_number(text, get_pack(pack))


# Each built-in extractor's twin that also says which rule decided (glotbench.extract.result).
_choice.explain = _explain_choice  # type: ignore[attr-defined]
_number.explain = _explain_number  # type: ignore[attr-defined]


def _json(text: str, *, sample: dict, pack: LanguagePack | str, required_keys: list[str] | None = None, **options: Any):
    if options:
        raise TaskSpecError(f"extractor 'json': unknown options {sorted(options)}")
    answer, _trace = strip_thinking(text or "")
    obj = first_json_object(answer)
    if obj is not None and required_keys and any(k not in obj for k in required_keys):
        return None
    return obj


def _text(text: str, *, sample: dict, pack: LanguagePack | str, first_line: bool = False, **options: Any) -> str | None:
    if options:
        raise TaskSpecError(f"extractor 'text': unknown options {sorted(options)}")
    answer, _trace = strip_thinking(text or "")
    if first_line:
        answer = next((line.strip() for line in answer.splitlines() if line.strip()), "")
    return answer or None


def _regex(text: str, *, sample: dict, pack: LanguagePack | str, pattern: str | None = None, group_select: int = 0,
           **options: Any) -> str | None:
    if options or not isinstance(pattern, str) or not isinstance(group_select, int):
        raise TaskSpecError("extractor 'regex': options are pattern (a text, required) and group_select (an integer)"
                            + (f"; unknown options {sorted(options)}" if options else ""))
    answer, _trace = strip_thinking(text or "")
    return regex_pick(answer, pattern, group_select)


def _coerce_extractor(obj: Any, name: str, where: str) -> Extractor:
    if callable(obj):
        return obj
    prefix = f"{where}: " if where else ""
    raise TaskSpecError(f"{prefix}{name!r} is not an extractor function")


EXTRACTORS: Registry[Extractor] = Registry("extractor", coerce=_coerce_extractor, error=TaskSpecError)
for _name, _fn in (("choice", _choice), ("number", _number), ("json", _json), ("text", _text),
                   ("regex", _regex)):
    EXTRACTORS.register(_name, _fn)


def register_extractor(name: str, fn: Extractor) -> Extractor:
    """Add an extractor under ``name`` (a task's Python escape hatch). Returns ``fn``; a taken
    name raises :class:`~glotbench.registry.RegistryError`."""
    EXTRACTORS.register(name, fn)
    return fn


def get_extractor(name: str, *, where: str = "") -> Extractor:
    """The extractor registered as ``name`` (or a ``"module:attr"`` function); TaskSpecError
    naming ``where`` and the known ones otherwise."""
    return EXTRACTORS.resolve(name, where=where)
