"""Translate a task's dataset into another language with any model, the thesis' way (§5.2),
journaled like a run, and write the result plus a task YAML that names the source task as its
``counterpart``.

Each string field named with ``fields`` (dotted paths; ``[*]`` walks a list) goes through
:mod:`glotbench.translate.rules`; what is left is split into sentences (pysbd, English rules, as
the reference used spaCy's English model for both directions) and each sentence is one
request (``raw``: the sentence alone, for a translation model such as NLLB or Marian, which reads no
instruction; else wrapped in :data:`INSTRUCTION`). Requests go through the engine's journal (``journal.sqlite`` in the output folder):
kill the command and run it again and no sentence already answered is sent twice.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from glotbench.engine.caller import CachedCaller
from glotbench.engine.journal import Journal
from glotbench.engine.retry import RetryPolicy
from glotbench.errors import GlotbenchError
from glotbench.models.base import GenRequest, Model
from glotbench.translate import rules

LANG_NAMES = {"cs": "Czech", "en": "English", "hu": "Hungarian", "sk": "Slovak", "de": "German", "pl": "Polish"}


def language_name(code: str) -> str:
    """The English name of a language code for the instruction (``mn`` -> Mongolian, ``zh`` -> Chinese):
    the table above, else Babel's CLDR data; a code neither knows is one line, before any request."""
    if code in LANG_NAMES:
        return LANG_NAMES[code]
    from babel import Locale, UnknownLocaleError

    try:
        return Locale.parse(code.replace("-", "_")).english_name
    except (UnknownLocaleError, ValueError, TypeError):
        raise GlotbenchError(f"translate: {code!r} is not a language code (ISO 639, e.g. cs, mn, zh)") from None
INSTRUCTION = ("Translate the following {src} text into {dst}. Reply with the translation only, "
               "without any comment.\n\n{text}")


@dataclass
class TranslateStats:
    strings: int = 0
    kept_numeric: int = 0
    overrides: int = 0
    sentences: int = 0
    surname_fixes: int = 0
    guard_notes: int = 0
    notes: list[dict] = field(default_factory=list)


def split_sentences(text: str) -> list[str]:
    try:
        import pysbd
    except ImportError:
        raise GlotbenchError("glotbench build translate splits sentences with pysbd: pip install 'glotbench[cs]'") from None

    seg = pysbd.Segmenter(language="en", clean=False)
    return [s.strip() for s in seg.segment(text) if s.strip()]


_PART = re.compile(r"([^.\[\]]+)(\[\*\])?")


def _walk(obj: Any, path: str):
    """Yield (container, key) pairs for every string at ``path`` ("a.b", "choices.text[*]")."""
    parts = path.split(".")

    def go(o, i):
        if i == len(parts):
            return
        m = _PART.fullmatch(parts[i])
        if not m or not isinstance(o, dict) or m.group(1) not in o:
            return
        name, star = m.group(1), m.group(2)
        last = i == len(parts) - 1
        val = o[name]
        if star:
            if isinstance(val, list):
                for k, item in enumerate(val):
                    if last and isinstance(item, str):
                        yield val, k
                    elif not last:
                        yield from go(item, i + 1)
        elif last:
            if isinstance(val, str):
                yield o, name
        else:
            yield from go(val, i + 1)

    yield from go(obj, 0)


class Translator:
    def __init__(self, model: Model, journal: Journal, *, source_lang: str, target_lang: str, max_tokens: int = 256,
                 knobs: dict[str, Any] | None = None, concurrency: int = 4, policy: RetryPolicy | None = None,
                 raw: bool = False):
        self.model, self.src, self.dst, self.raw = model, source_lang, target_lang, raw
        self.caller = CachedCaller(model, journal, role="model", policy=policy or RetryPolicy(), concurrency=concurrency)
        self.max_tokens = max_tokens
        self.knobs = tuple(sorted((knobs or {}).items()))
        self.stats = TranslateStats()

    def request(self, sentence: str) -> GenRequest:
        if self.raw:  # the sentence only, as a plain prompt: a translation model's input
            return GenRequest(prompt=sentence, max_tokens=self.max_tokens, temperature=0.0, extra=self.knobs)
        text = INSTRUCTION.format(src=language_name(self.src), dst=language_name(self.dst), text=sentence)
        return GenRequest(messages=({"role": "user", "content": text},), max_tokens=self.max_tokens, temperature=0.0,
                          extra=self.knobs)

    async def sentence(self, sentence: str, where: str) -> str:
        out = (await self.caller(self.request(sentence), task="translate", sample_id=where)).text.strip()
        out = out.split("\n\n")[0].strip() or sentence  # a chat model's trailing comment is not the translation
        cleaned, note = rules.repetition_guard(sentence, out)
        if note:
            self.stats.guard_notes += 1
            self.stats.notes.append({"where": where, "rule": "repetition_guard", "note": note, "source": sentence, "output": out})
        return cleaned

    async def string(self, text: str, where: str) -> str:
        self.stats.strings += 1
        if rules.untouched(text):
            self.stats.kept_numeric += 1
            return text
        fixed = rules.override(text, self.dst)
        if fixed is not None:
            self.stats.overrides += 1
            return fixed
        text = text.strip()
        if not text:
            return ""
        sentences = split_sentences(text)
        self.stats.sentences += len(sentences)
        parts = await asyncio.gather(*(self.sentence(s, f"{where}#{k}") for k, s in enumerate(sentences)))
        output = " ".join(parts)
        back = rules.surname_fix(text, output, self.dst)
        if back is not None:
            self.stats.surname_fixes += 1
            self.stats.notes.append({"where": where, "rule": "surname_fix", "source": text, "output": output})
            return back
        return output

    async def record(self, rec: dict, fields: list[str], index: int) -> dict:
        out = copy.deepcopy(rec)
        jobs = []
        for path in fields:
            for container, key in _walk(out, path):
                jobs.append((container, key, self.string(container[key], f"{index}:{path}:{key}")))
        results = await asyncio.gather(*(j[2] for j in jobs))
        for (container, key, _), value in zip(jobs, results):
            container[key] = value
        return out


def translate_records(records: list[dict], fields: list[str], model: Model, out_dir: Path, *, source_lang: str,
                      target_lang: str, max_tokens: int = 256, knobs: dict | None = None, concurrency: int = 4,
                      on_record=None, wait: bool = False, on_start=None, raw: bool = False,
                      policy: RetryPolicy | None = None) -> tuple[list[dict], Translator]:
    from glotbench.engine.lock import journal_lock

    out_dir.mkdir(parents=True, exist_ok=True)
    lock = journal_lock(out_dir / "journal.sqlite", wait=wait)  # two translations into one folder would send twice
    try:
        journal = Journal(out_dir / "journal.sqlite")
    except BaseException:
        lock.release()
        raise
    if on_start:  # the lock is held: say what starts
        on_start()
    try:
        tr = Translator(model, journal, source_lang=source_lang, target_lang=target_lang, max_tokens=max_tokens,
                        knobs=knobs, concurrency=concurrency, raw=raw, policy=policy)

        async def go():
            done = []
            try:
                for i, rec in enumerate(records):  # record by record, so a kill loses at most one record's work
                    done.append(await tr.record(rec, fields, i))
                    if on_record:
                        on_record(i)
            finally:
                await model.aclose()
            return done

        return asyncio.run(go()), tr
    finally:
        journal.close()
        lock.release()


def write_outputs(task, translated: list[dict], out_dir: Path, *, target_lang: str, name: str | None,
                  prompt_from=None, model_id: str, fields: list[str]) -> tuple[Path, Path]:
    """The translated records (JSONL) and a task YAML: the source task's definition with the new
    data, language and ``counterpart: <source task>``; the prompt from ``prompt_from`` if given."""
    data = out_dir / "data.jsonl"
    clean = [{k: v for k, v in r.items() if not k.startswith("_")} for r in translated]
    data.write_text("".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in clean), encoding="utf-8")
    spec = task.spec.model_dump(mode="json", exclude_defaults=False)
    new_name = name or f"{task.spec.name}.mt_{target_lang}"
    spec["name"] = new_name
    spec["language"] = target_lang
    spec["suites"] = []
    spec["counterpart"] = task.spec.name
    spec["description"] = (f"{task.spec.name} machine-translated to {target_lang} by {model_id} with `glotbench translate` "
                           f"(fields: {', '.join(fields)}; {len(clean)} records; Czech-Bench §5.2 rules). " + task.spec.description)
    ds = spec["dataset"]
    ds["format"] = "jsonl"
    ds["splits"] = {ds["eval_split"]: str(data.resolve())}
    ds["hf"] = None
    opts = dict(spec.get("options") or {})
    if opts.get("reader") or getattr(task, "reads_through_reader", False):
        opts["reader"] = "jsonl"  # a task that reads its split through a named reader reads the JSONL written here
    opts.pop("subset", None)  # the subset was applied before translating
    opts.pop("hf_splits", None)
    opts.pop("hf_older_layouts", None)
    spec["options"] = opts
    if prompt_from is not None:
        spec["prompt"] = prompt_from.spec.prompt.model_dump(mode="json")
    path = out_dir / "task.yaml"
    path.write_text(yaml.safe_dump(spec, allow_unicode=True, sort_keys=False, width=100000), encoding="utf-8")
    return data, path


def source_records(task, limit: int | None) -> list[dict]:
    try:
        rows = task.raw_records(task.spec.dataset.eval_split)
    except Exception as err:  # DataError and friends: say which task
        raise GlotbenchError(f"translate: task {task.name}: {err}") from None
    return rows[:limit] if limit else rows
