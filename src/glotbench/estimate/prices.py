"""The user-editable price table: a YAML file shipped in the package, overridable per model."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from glotbench.errors import DataError
from glotbench.yamlfile import load_yaml

SHIPPED = "prices.yaml"


@dataclass(frozen=True)
class Price:
    model: str
    input: float  # per 1M input tokens
    output: float  # per 1M output tokens
    currency: str
    tokenizer: str | None
    source: str
    taken: str
    file: str

    def cost(self, input_tokens: float, output_tokens: float) -> tuple[float, float]:
        return input_tokens * self.input / 1e6, output_tokens * self.output / 1e6


class PriceTable:
    def __init__(self, prices: dict[str, Price], aliases: dict[str, str]):
        self.prices = prices
        self.aliases = aliases

    def get(self, model: str) -> Price | None:
        """Look a model up by name or alias; a provider prefix ("openai/gpt-4o") is ignored."""
        for name in (model, model.split("/", 1)[-1], model.split(":", 1)[-1]):
            if name in self.prices:
                return self.prices[name]
            if name in self.aliases:
                return self.prices[self.aliases[name]]
        return None

    def names(self) -> list[str]:
        return sorted(self.prices)


def _num(v: Any, file: str, model: str, fld: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
        raise DataError(f"{file}: model {model!r}: field {fld!r} must be a number >= 0, got {v!r}")
    return float(v)


def _parse(doc: Any, file: str) -> tuple[dict[str, Price], dict[str, str]]:
    if not isinstance(doc, dict) or not isinstance(doc.get("models"), dict):
        raise DataError(f"{file}: expected a mapping with a 'models' mapping at the top")
    currency = str(doc.get("currency", "USD"))
    prices: dict[str, Price] = {}
    aliases: dict[str, str] = {}
    for model, spec in doc["models"].items():
        if not isinstance(spec, dict):
            raise DataError(f"{file}: model {model!r}: expected a mapping with 'input' and 'output'")
        for fld in ("input", "output"):
            if fld not in spec:
                raise DataError(f"{file}: model {model!r}: missing field {fld!r}")
        prices[str(model)] = Price(
            model=str(model),
            input=_num(spec["input"], file, model, "input"),
            output=_num(spec["output"], file, model, "output"),
            currency=str(spec.get("currency", currency)),
            tokenizer=spec.get("tokenizer"),
            source=str(spec.get("source", "")),
            taken=str(spec.get("taken", "unknown")),
            file=file,
        )
        for a in spec.get("aliases") or []:
            aliases[str(a)] = str(model)
    return prices, aliases


def _read(path: Path | None) -> tuple[Any, str]:
    if path is None:
        text = resources.files("glotbench.estimate").joinpath(SHIPPED).read_text(encoding="utf-8")
        name = f"glotbench/estimate/{SHIPPED}"
    else:
        if not path.is_file():
            raise DataError(f"{path}: price file not found")
        text, name = path.read_text(encoding="utf-8"), str(path)
    try:
        return load_yaml(text), name  # duplicate keys and alias bombs refused (yamlfile.py)
    except yaml.YAMLError as err:
        line = getattr(getattr(err, "problem_mark", None), "line", None)
        where = f" (line {line + 1})" if line is not None else ""
        raise DataError(f"{name}: not valid YAML{where}") from None


def load_prices(path: str | Path | None = None, replace: bool = False) -> PriceTable:
    """The shipped table, with the models in ``path`` (a ``--prices`` file) laid over it.

    ``replace=True`` uses only ``path``. A user entry replaces the shipped entry of the same
    name (and any shipped alias pointing at it keeps working).
    """
    doc, name = _read(None)
    prices, aliases = _parse(doc, name)
    if path is not None:
        udoc, uname = _read(Path(path))
        uprices, ualiases = _parse(udoc, uname)
        if replace:
            prices, aliases = uprices, ualiases
        else:
            prices.update(uprices)
            for a in [a for a, m in aliases.items() if a in uprices]:
                del aliases[a]  # a user model named like a shipped alias wins
            aliases.update(ualiases)
    return PriceTable(prices, aliases)
