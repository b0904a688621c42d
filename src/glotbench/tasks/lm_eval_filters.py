"""lm-eval's answer filters and its ``exact_match``, restated for a converted ``generate_until`` task
(``glotbench tasks import-lm-eval``; docs/adding-a-task.md "From an lm-eval task YAML").

A task's ``filter_list`` is a list of named pipelines; each turns the model's output into the answer
its metrics compare (lm_eval/filters: ``regex``, ``take_first``, ``remove_whitespace``, ``lowercase``,
``uppercase``, ``map``). lm-eval scores every pipeline; so does the converted task: the first one
gives ``exact_match``, the others ``exact_match_<name>``. ``exact_match`` is lm-eval's
(api/metrics.py ``exact_match_hf_evaluate``): ``regexes_to_ignore`` removed from both sides, then
lower-casing, then ASCII punctuation, then digits removed, as the metric's options say; plain
equality otherwise (glotbench's own ``exact_match`` scorer also ignores case and Unicode punctuation).
"""

from __future__ import annotations

import string
from typing import Any

from glotbench.extract import bounded_regex
from glotbench.extract.regex_pick import regex_pick

STEPS = ("regex", "take_first", "remove_whitespace", "lowercase", "uppercase", "map")
STEP_OPTIONS = {"regex": {"regex_pattern", "group_select", "fallback"}, "map": {"mapping_dict", "default_value"}}
EXACT_MATCH_OPTIONS = ("regexes_to_ignore", "ignore_case", "ignore_punctuation", "ignore_numbers")
NO_FILTER = [{"name": "none", "steps": [{"function": "take_first"}]}]  # lm-eval's default for generate_until
REGEX_DEFAULT = r"#### (\-?[0-9\.\,]+)"  # RegexFilter's default pattern


def read_filter_list(filter_list: Any, delegate: Any = None) -> tuple[list[dict], list[str]]:
    """lm-eval's ``filter_list`` -> (the converted task's ``options.filters``, why it cannot run).
    ``delegate`` (``--lm-eval-hooks``): a function turning a ``!function`` into a hook reference; a step
    not restated here is then written ``{"function": NAME, "lm_eval": true, ...}`` (a ``!function``
    filter class as ``ref``, a ``!function`` option as ``{"ref": ...}``) and run by lm-eval's own class."""
    if not isinstance(filter_list, list):
        return [], ["filter_list: not a list"]
    out, why = [], []
    for i, entry in enumerate(filter_list):
        name = entry.get("name") if isinstance(entry, dict) else None
        steps = entry.get("filter") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not isinstance(steps, list) or not steps:
            why.append(f"filter_list[{i}]: not a mapping with a name and a filter list")
            continue
        converted = []
        for k, step in enumerate(steps):
            fn = step.get("function") if isinstance(step, dict) else None
            if delegate is not None and isinstance(fn, str) and fn not in STEPS:  # lm-eval's own class runs it
                out_step: dict[str, Any] = {"function": "lm_eval_class" if fn.startswith("!function ") else fn,
                                            "lm_eval": True}
                if fn.startswith("!function "):
                    out_step["ref"] = delegate(fn)
                for k, v in step.items():
                    if k != "function":
                        out_step[k] = {"ref": delegate(v)} if isinstance(v, str) and v.startswith("!function ") else v
                if converted and converted[-1]["function"] == "take_first":
                    why.append(f"filter_list.{name}: {fn} after take_first not converted")
                    break
                converted.append(out_step)
                continue
            if fn not in STEPS:
                shown = fn if isinstance(fn, str) else repr(step)
                why.append(f"filter_list.{name}: function {shown} not converted "
                           f"(only {', '.join(STEPS)}; --lm-eval-hooks runs it as lm-eval's own filter)")
                break
            if extra := sorted(set(step) - {"function"} - STEP_OPTIONS.get(fn, set())):
                why.append(f"filter_list.{name}: {fn} options {', '.join(extra)} not converted")
                break
            if fn != "take_first" and any(s["function"] == "take_first" for s in converted):
                why.append(f"filter_list.{name}: {fn} after take_first not converted")
                break
            converted.append(dict(step))
        else:
            if converted[-1]["function"] != "take_first":
                why.append(f"filter_list.{name}: does not end with take_first (several answers per item)")
            else:
                out.append({"name": name, "steps": converted})
    return out, why


def _step(step: dict, resp: Any) -> Any:
    fn = step["function"]
    if fn == "regex":
        pick = regex_pick(resp if isinstance(resp, str) else "", step.get("regex_pattern", REGEX_DEFAULT),
                          int(step.get("group_select", 0)))
        return step.get("fallback", "[invalid]") if pick is None else pick
    if fn == "remove_whitespace":
        return resp.strip()
    if fn == "lowercase":
        return resp.lower()
    if fn == "uppercase":
        return resp.upper()
    if fn == "map":
        return (step.get("mapping_dict") or {}).get(resp, step.get("default_value"))
    raise ValueError(fn)


def apply_filter(steps: list[dict], text: str, doc: dict | None = None, lm_eval_filter: Any = None) -> Any:
    """One pipeline on one output, as lm-eval's FilterEnsemble runs it on an item's one response; a
    delegated step (``lm_eval: true``) is ``lm_eval_filter(step)``, an lm-eval Filter, applied to the
    item's responses and its record."""
    resps: Any = [text]
    for step in steps:
        if step.get("lm_eval"):
            resps = list(lm_eval_filter(step).apply([resps], [doc]))[0]
        else:
            resps = resps[0] if step["function"] == "take_first" else [_step(step, r) for r in resps]
    return resps


def exact_match(prediction: Any, references: list[str], options: dict) -> float:
    """lm-eval's ``exact_match`` of one prediction against its references (any one equal: 1)."""
    def norm(x: Any) -> str:
        x = str(x)
        for pattern in options.get("regexes_to_ignore") or []:
            x = bounded_regex.sub(pattern, "", x)
        if options.get("ignore_case"):
            x = x.lower()
        if options.get("ignore_punctuation"):
            x = x.translate(str.maketrans("", "", string.punctuation))
        if options.get("ignore_numbers"):
            x = x.translate(str.maketrans("", "", string.digits))
        return x

    pred = norm(prediction)
    return float(any(pred == norm(r) for r in references))


def metric_keys(filters: list[dict], delegated: list[str] | None = None) -> dict[str, tuple[str, str]]:
    """The converted task's metrics, each with lm-eval's ``(metric, filter name)`` for the same number
    (lm-eval keys it ``<metric>,<filter name>``: gsm8k's ``exact_match,strict-match``), in the task's
    order: the first pipeline gives ``exact_match`` (or each ``mean:<metric>`` of a delegated
    ``process_results``), every other pipeline ``mean:exact_match_<name>`` (``mean:<metric>_<name>``).
    A task without filters (multiple choice) is lm-eval's filter ``none``."""
    names = [f["name"] for f in filters] or ["none"]
    out: dict[str, tuple[str, str]] = {}
    for i, name in enumerate(names):
        for m in delegated if delegated is not None else ["exact_match"]:
            key = (f"mean:{m}" if delegated is not None else m) if i == 0 else f"mean:{m}_{name}"
            out[key] = (m, name)
    return out


def lm_eval_filter_list(filters: list[dict]) -> list[dict]:
    """The task's pipelines as lm-eval's config writes ``filter_list`` (``name`` and ``filter`` steps)."""
    return [{"name": f["name"], "filter": [{k: v for k, v in st.items() if k != "lm_eval"} for st in f["steps"]]}
            for f in filters]
