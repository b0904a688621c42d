"""The evaluated model's prompt, read from the benchmark's own prompt file (shipped with glotbench in
the package's files/ folder, as no upstream file holds it; licences in its NOTICE.md): HuSimpleQA's ``INSTRUCTIONS[lang]``, Chinese SimpleQA's ``ANSWER_WITH_CONFIDENCE_PROMPT_TEMPLATE``.

Two fill styles, as the sources use them: ``format`` is Python ``str.format`` (Chinese SimpleQA
escapes its JSON braces as ``{{ }}``); ``substitute`` replaces each ``{name}`` once, in one pass
(OpenHuEval templates hold literal JSON braces, so ``str.format`` would break on them).
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from glotbench.errors import DataError
from glotbench.benchmarks.factuality.options import PromptFile
from glotbench.tasks.judging.prompts import read_prompt_json
from glotbench.paths import benchmark_file


@dataclass(frozen=True)
class FileTemplate:
    text: str
    style: str
    source: str  # "path#key", for errors and results.json

    def placeholders(self) -> list[str]:
        if self.style == "format":
            return [f for _, f, _, _ in string.Formatter().parse(self.text) if f]
        return re.findall(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", self.text)

    def fill(self, values: dict[str, Any], where: str) -> str:
        missing = [p for p in self.placeholders() if p not in values]
        if missing:
            raise DataError(f"{where}: prompt {self.source} needs field(s) {', '.join(missing)} that the task does not map")
        if self.style == "format":
            return self.text.format(**{k: "" if v is None else str(v) for k, v in values.items()})
        names = sorted(set(self.placeholders()), key=len, reverse=True)
        pattern = re.compile("|".join(re.escape("{" + n + "}") for n in names)) if names else None
        if pattern is None:
            return self.text
        return pattern.sub(lambda m: str(values[m.group(0)[1:-1]]), self.text)


@cache
def _read(path: Path) -> dict:
    return read_prompt_json(path, "prompt file")


def load_template(pf: PromptFile, prompt_lang: str | None, where: str) -> FileTemplate:
    """The template named by ``pf`` for ``prompt_lang`` (``pf.default_lang`` when None)."""
    lang = prompt_lang or pf.default_lang
    if "{lang}" in pf.key and not lang:
        raise DataError(f"{where}: options.prompt_file.key {pf.key!r} needs --prompt-lang (no default_lang)")
    key = pf.key.replace("{lang}", lang or "")
    path = benchmark_file(pf.path)
    cur: Any = _read(path)
    parts = key.split(".")
    for depth, k in enumerate(parts):
        if not isinstance(cur, dict) or k not in cur:
            have = ", ".join(sorted(cur)) if isinstance(cur, dict) else type(cur).__name__
            what = f"no prompt variant {lang!r}" if "{lang}" in pf.key and depth == pf.key.split(".").index("{lang}") else f"no key {k!r}"
            raise DataError(f"{path}: {what} under {'.'.join(parts[:depth]) or '(top level)'} (have: {have}) [{where}]")
        cur = cur[k]
    if not isinstance(cur, str):
        raise DataError(f"{path}: key {key!r} is not a string [{where}]")
    return FileTemplate(text=cur, style=pf.style, source=f"{pf.path}#{key}")
