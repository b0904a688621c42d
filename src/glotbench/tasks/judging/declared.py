"""A judge declaration put to work: the judge's messages for one answer, its reply read into a grade
or a number, the unreadable rule applied, and the per-item values the declared metrics average.

Per-item values (``Scored.values``): ``judge_score`` (the grade's score, or the number; None when an
unreadable reply is excluded), ``judge_unreadable`` (1 or 0), and with grades ``judge_share_<GRADE>``
(1 or 0 per grade; None when excluded). Metrics: ``judge_score``, ``mean:judge_share_<GRADE>``,
``judge_unreadable_rate`` (registered in :mod:`glotbench.scoring.judge_metrics`).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from glotbench.extract import bounded_regex
from glotbench.extract.thinking import strip_thinking
from glotbench.tasks.judging.declaration import ExplicitGrade, ExplicitScore, JudgeDecl, fingerprint_exclude, three_way_map
from glotbench.prompts.render import render
from glotbench.extract.jsonobj import first_json_object

SCORE_KEY = "judge_score"
UNREADABLE_KEY = "judge_unreadable"
SHARE_PREFIX = "judge_share_"
THREE_WAY_PREFIX = "judge_"  # judge_correct / judge_incorrect / judge_not_attempted (scoring.judge_metrics)
THREE_WAY_METRICS = ("judge_co", "judge_na", "judge_in", "judge_cga", "judge_f")


def metric_names(decl: JudgeDecl) -> list[str]:
    """The metric names the declaration's ``metrics`` stand for, in its order."""
    out: list[str] = []
    for kind in decl.metrics:
        if kind == "score":
            out.append("judge_score")
        elif kind == "shares":
            out.extend(f"mean:{SHARE_PREFIX}{g}" for g in decl.grades or {})
            if three_way_map(decl) is not None:  # grades that map to correct / incorrect / not attempted
                out.extend(THREE_WAY_METRICS)
        else:
            out.append("judge_unreadable_rate")
    return out


@dataclass(frozen=True)
class DeclaredJudge:
    decl: JudgeDecl

    @cached_property
    def version(self) -> str:
        """Short hash of the whole declaration (stored with each verdict)."""
        return hashlib.sha256(json.dumps(self.decl.model_dump(mode="json", exclude=fingerprint_exclude(self.decl)),
                                         sort_keys=True,
                                         ensure_ascii=False).encode()).hexdigest()[:12]

    @cached_property
    def _pattern(self):
        r = self.decl.reply
        return bounded_regex.compile(r.regex, r.ignore_case) if r.regex is not None else None

    @cached_property
    def _fallback(self):
        r = self.decl.reply
        return bounded_regex.compile(r.fallback_regex, r.ignore_case) if r.fallback_regex else None

    @cached_property
    def _labels(self) -> dict[str, str]:
        """What a reply may say (case-folded when ``ignore_case``) -> grade label."""
        fold = (lambda s: s.casefold()) if self.decl.reply.ignore_case else (lambda s: s)
        table = {fold(g): g for g in self.decl.grades or {}}
        table.update({fold(said): g for said, g in self.decl.aliases.items()})
        return table

    def prompt_language(self, asked: str | None, task_language: str) -> str | None:
        """The prompt's language: the run's --prompt-lang when declared, else the declaration's
        ``language``, else the task's, else the first given (None with a ``prompt_file``)."""
        if self.decl.prompt is None:
            return None
        for lang in (asked, self.decl.language, task_language):
            if lang and lang in self.decl.prompt:
                return lang
        return next(iter(self.decl.prompt))

    # ------------------------------------------------------------------ the request
    def messages(self, variables: dict[str, Any], lang: str | None, *, task: str) -> list[dict[str, str]]:
        """The judge's chat: ``variables`` hold question, reference, answer, prompt and the fields."""
        if self.decl.prompt_file is not None:
            from glotbench.tasks.judging.prompts import _load_file_prompt, placeholder_variables

            grader = _load_file_prompt(self.decl)
            msgs = [{"role": "system", "content": grader.spec.system}] if grader.spec.system else []
            msgs.append({"role": "user", "content": grader.fill(tuple(variables[v] for v in placeholder_variables(self.decl)))})
            return msgs
        turns = self.decl.prompt[lang]
        msgs = []
        if turns.system is not None:
            msgs.append({"role": "system", "content": render(turns.system, variables, task=task,
                                                             field=f"judge.prompt.{lang}.system")})
        msgs.append({"role": "user", "content": render(turns.user, variables, task=task, field=f"judge.prompt.{lang}.user")})
        return msgs

    # ------------------------------------------------------------------ the reply
    def _found(self, body: str) -> list[Any]:
        r = self.decl.reply
        if self._pattern is not None:
            return [m.group(1) for m in bounded_regex.finditer(self._pattern, body) if m.group(1) is not None]
        if r.json_key is not None:
            cur: Any = first_json_object(body)
            for k in r.json_key.split("."):
                if not isinstance(cur, dict) or k not in cur:
                    return []
                cur = cur[k]
            return [] if cur is None else [cur]
        from glotbench.tasks.judging.parse import parse_judge_output

        v = parse_judge_output(r.rule, body)
        return [] if v.grade.value == "JUDGE_ERROR" else [v.grade.value]

    def _value(self, found: Any) -> tuple[str | None, float | None, str]:
        """(grade, score, why not) for one value read from the reply."""
        if self.decl.scale is not None:
            try:
                x = float(str(found).strip()) if not isinstance(found, (int, float)) or isinstance(found, bool) else float(found)
            except (ValueError, OverflowError):
                return None, None, f"not a number: {str(found)[:40]!r}"
            lo, hi = self.decl.scale.min, self.decl.scale.max
            if not math.isfinite(x) or not lo <= x <= hi:
                return None, None, f"{x:g} is outside the scale {lo:g}-{hi:g}"
            return None, x, ""
        said = str(found).strip()
        key = said.casefold() if self.decl.reply.ignore_case else said
        grade = self._labels.get(key)
        if grade is None:
            return None, None, f"unknown grade {said[:40]!r}"
        return grade, float(self.decl.grades[grade]), ""

    def read(self, text: str | None, *, fallback: bool = True) -> dict[str, Any]:
        """The verdict on one reply: ``grade`` / ``score`` as counted (after the unreadable rule),
        ``unreadable``, ``reason``, ``raw``. ``fallback=False``: ``reply.fallback_regex`` is not tried."""
        raw = text if isinstance(text, str) else ""
        body = strip_thinking(raw)[0] if self.decl.reply.strip_thinking else raw
        timed_out = ""
        try:
            found = self._found(body)
        except bounded_regex.RegexTimeout as err:  # the reply is model output: a hostile one is unreadable
            found, timed_out = [], f"reply.regex: {err}"
        if self._fallback is not None and fallback and (not found or self._value(found[0])[2].startswith("not a number")):
            try:
                m = bounded_regex.search(self._fallback, body)
            except bounded_regex.RegexTimeout as err:
                m, timed_out = None, timed_out or f"reply.fallback_regex: {err}"
            found = [m.group(1)] if m and m.group(1) is not None else found
        grade, score, why = None, None, ""
        if not found and timed_out:
            why = timed_out
        elif not found:
            why = "the reply holds no " + ("match of reply.regex" if self.decl.reply.regex is not None else
                                           f"JSON key {self.decl.reply.json_key!r}" if self.decl.reply.json_key
                                           else f"verdict under rule {self.decl.reply.rule!r}")
        else:
            readings = [self._value(f) for f in found]
            if self.decl.reply.match == "only" and len({(g, s) for g, s, _ in readings}) > 1:
                why = f"several different verdicts ({', '.join(str(f)[:20] for f in dict.fromkeys(map(str, found)))})"
            else:
                grade, score, why = readings[0]
        verdict: dict[str, Any] = {"grade": grade, "score": score, "unreadable": bool(why), "reason": why or "read",
                                   "raw": raw, "judge": self.decl.name, "judge_version": self.version}
        if why:
            u = self.decl.unreadable
            if isinstance(u, ExplicitGrade):
                verdict.update(grade=u.grade, score=float(self.decl.grades[u.grade]), counted_as=f"grade {u.grade}")
            elif isinstance(u, ExplicitScore):
                verdict.update(score=float(u.score), counted_as=f"score {u.score:g}")
            else:
                verdict["counted_as"] = "excluded"
        return verdict

    def values(self, verdict: dict[str, Any]) -> dict[str, float | None]:
        """The per-item values of one verdict (see the module docstring)."""
        excluded = verdict.get("unreadable") and verdict.get("counted_as") == "excluded"
        out: dict[str, float | None] = {SCORE_KEY: None if excluded else verdict.get("score"),
                                        UNREADABLE_KEY: 1.0 if verdict.get("unreadable") else 0.0}
        for g in self.decl.grades or {}:
            out[SHARE_PREFIX + g] = None if excluded else float(verdict.get("grade") == g)
        three = self.three_way
        if three is not None:
            mapped = None if excluded else three.get(verdict.get("grade"))
            for name in ("CORRECT", "INCORRECT", "NOT_ATTEMPTED"):
                out[THREE_WAY_PREFIX + name.lower()] = None if mapped is None else float(mapped == name)
        return out

    @cached_property
    def three_way(self) -> dict[str, str] | None:
        return three_way_map(self.decl)

    def verdict_from_grade(self, grade: str | None, source: str) -> dict[str, Any]:
        """The verdict for a grade recorded elsewhere (CORRECT / INCORRECT / NOT_ATTEMPTED, e.g. a released
        grade file): the declared grade that maps to it (or carries its name); none is unreadable."""
        label = None
        if grade is not None:
            three = self.three_way or {}
            label = next((g for g, m in three.items() if m == grade), None)
            if label is None:
                label = self._labels.get(grade.casefold() if self.decl.reply.ignore_case else grade)
        if label is None:
            why = "no grade in the file" if grade is None else f"recorded grade {grade!r} is no grade of {self.decl.name}"
            verdict = {"grade": None, "score": None, "unreadable": True, "reason": why, "raw": grade or "",
                       "judge": source, "judge_version": self.version, "source": "recorded", "counted_as": "excluded"}
            return verdict
        return {"grade": label, "score": float(self.decl.grades[label]), "unreadable": False, "reason": "grade from file",
                "raw": grade, "judge": source, "judge_version": self.version, "source": "recorded"}
