"""A model's description for comparisons (``run --model-meta size=7B,open=yes,reasoning=no`` or
``--model-meta-file FILE``): stored in results.json ``model_meta`` and read by ``compare --by
size|open|reasoning`` (docs/trust-a-number.md). It changes no request, so it is in no fingerprint.

Known keys are checked before any request: ``size`` is a parameter count (``7B``, ``1.5b``,
``135M``, ``1.2T``, or a bare number of billions), ``open`` and ``reasoning`` are yes/no. Any other
key (``family=qwen``) is kept as text."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from glotbench.errors import GlotbenchError

KEYS = ("size", "open", "reasoning")
_UNITS = {"k": 1e-6, "m": 1e-3, "b": 1.0, "g": 1.0, "t": 1e3}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmbgt]?)\s*$", re.IGNORECASE)
_YES = {"yes", "true", "y", "1", "open"}
_NO = {"no", "false", "n", "0", "closed"}


def parse_size(value: Any, where: str) -> float:
    """Billions of parameters of ``7B`` / ``135M`` / ``1.2T`` / ``7`` (billions)."""
    if isinstance(value, bool):
        value = str(value)
    if isinstance(value, (int, float)) and math.isfinite(value) and value > 0:
        return float(value)
    m = _SIZE.match(str(value))
    if not m or float(m.group(1)) <= 0:
        raise GlotbenchError(f"{where}: size {value!r}: a parameter count like 7B, 1.5B, 135M or 1.2T (or a number "
                             f"of billions)")
    return float(m.group(1)) * _UNITS[(m.group(2) or "b").lower()]


def parse_flag(key: str, value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _YES:
        return True
    if text in _NO:
        return False
    raise GlotbenchError(f"{where}: {key} {value!r}: give yes or no")


@dataclass(frozen=True)
class ModelMeta:
    """``size`` as given, ``size_b`` in billions, ``open``/``reasoning`` (None: not given), ``extra``."""

    size: str | None = None
    size_b: float | None = None
    open: bool | None = None
    reasoning: bool | None = None
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return self.size is None and self.open is None and self.reasoning is None and not self.extra

    def group(self, key: str) -> str | None:
        """The group a model falls in for ``compare --by key`` (None: not given)."""
        if key == "size":
            return None if self.size_b is None else f"{self.size_b:g}B"
        if key == "open":
            return None if self.open is None else ("open" if self.open else "closed")
        if key == "reasoning":
            return None if self.reasoning is None else ("reasoning" if self.reasoning else "non-reasoning")
        value = self.extra.get(key)
        return None if value is None else str(value)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.size is not None:
            out.update(size=self.size, size_b=self.size_b)
        for k in ("open", "reasoning"):
            if getattr(self, k) is not None:
                out[k] = getattr(self, k)
        return {**out, **self.extra}

    @classmethod
    def from_values(cls, values: dict[str, Any], where: str) -> "ModelMeta":
        """Checked values (one line naming ``where`` and the key for a bad one)."""
        kw: dict[str, Any] = {}
        extra: dict[str, str] = {}
        for key, value in values.items():
            key = str(key).strip()
            if key == "size":
                kw["size_b"] = parse_size(value, where)
                kw["size"] = str(value)
            elif key == "size_b":  # results.json's own form, read back
                kw.setdefault("size_b", parse_size(value, where))
            elif key in ("open", "reasoning"):
                kw[key] = parse_flag(key, value, where)
            elif value is None or isinstance(value, (dict, list)):
                raise GlotbenchError(f"{where}: {key}: give one value (text or a number)")
            else:
                extra[key] = str(value)
        if "size_b" in kw and "size" not in kw:
            kw["size"] = f"{kw['size_b']:g}B"
        return cls(**kw, extra=extra)

    @classmethod
    def from_json(cls, raw: Any) -> "ModelMeta":
        """results.json's block (absent in runs written before it: empty)."""
        if not isinstance(raw, dict) or not raw:
            return cls()
        try:
            return cls.from_values(raw, "results.json: field 'model_meta'")
        except GlotbenchError:
            return cls()


def read_meta_file(path: str | Path) -> dict[str, Any]:
    """A ``--model-meta-file``: a YAML mapping (read as every YAML file is: duplicate keys and alias
    bombs refused, glotbench.yamlfile) or a JSON one, of the same keys."""
    from glotbench.yamlfile import read_mapping

    p = Path(path)
    if not p.is_file():
        raise GlotbenchError(f"--model-meta-file {p}: no such file")
    if p.suffix != ".json":
        return read_mapping(p, "--model-meta-file", GlotbenchError)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise GlotbenchError(f"--model-meta-file {p}: not a readable JSON mapping ({str(err).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise GlotbenchError(f"--model-meta-file {p}: expected a mapping like size: 7B, open: yes, reasoning: no")
    return data


def model_meta(values: dict[str, Any] | None, file: str | None) -> ModelMeta:
    """The run's metadata: the file's keys, then the flag's over them."""
    merged: dict[str, Any] = {}
    if file:
        merged.update(read_meta_file(file))
        where = f"--model-meta-file {file}"
    if values:
        merged.update(values)
        where = "--model-meta"
    return ModelMeta.from_values(merged, where) if merged else ModelMeta()
