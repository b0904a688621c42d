"""Read a YAML mapping into a pydantic model, turning every problem into one line that names the
file, and the line or the field (task files, run configs and language packs all go through it)."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from glotbench.errors import GlotbenchError

M = TypeVar("M", bound=BaseModel)


# libyaml's parser when PyYAML was built with it (about 10x faster: every run reads all task files);
# the constructors, and so what a file means, are the same Python code either way
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _UniqueKeyLoader(_SafeLoader):
    """SafeLoader that refuses a mapping key given twice (plain YAML keeps the last silently)."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    loader.flatten_mapping(node)
    seen: dict = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            hash(key)
        except TypeError:
            continue  # the base constructor reports unhashable keys itself
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (first at line {seen[key] + 1})", key_node.start_mark)
        seen[key] = key_node.start_mark.line
    return _SafeLoader.construct_mapping(loader, node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


# YAML aliases share one object, so a 1 KB file of nested aliases ("billion laughs") loads at once and
# then stands for 10^9 values: whatever walks it next (validation, hashing, JSON) never ends. A file
# is refused when its values, aliases expanded, number more than this, or an alias holds itself.
MAX_EXPANDED_NODES = 1_000_000


class AliasBomb(yaml.YAMLError):
    """A YAML file whose aliases expand past :data:`MAX_EXPANDED_NODES` (or into themselves)."""

    def __init__(self, problem: str):
        super().__init__(problem)
        self.problem = problem


def expanded_size(value, limit: int = MAX_EXPANDED_NODES) -> int:
    """How many values ``value`` stands for with every alias expanded (each shared container counted
    once per place it appears), computed once per distinct container; :class:`AliasBomb` past
    ``limit`` or on a container inside itself."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[object, bool]] = [(value, False)]
    while stack:
        cur, done = stack.pop()
        if not isinstance(cur, (dict, list)):
            continue
        key = id(cur)
        children = [*cur.keys(), *cur.values()] if isinstance(cur, dict) else cur
        if done:
            on_path.discard(key)
            total = 1 + sum(sizes.get(id(c), 1) if isinstance(c, (dict, list)) else 1 for c in children)
            if total > limit:
                raise AliasBomb(f"its aliases expand to over {limit:,} values (an alias bomb?)")
            sizes[key] = total
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise AliasBomb("an alias refers to a value that holds it (a recursive alias)")
        on_path.add(key)
        stack.append((cur, True))
        for c in children:
            if isinstance(c, (dict, list)):
                if id(c) in on_path:
                    raise AliasBomb("an alias refers to a value that holds it (a recursive alias)")
                stack.append((c, False))
    return sizes.get(id(value), 1)


def load_yaml(text: str):
    """``yaml.safe_load`` that raises on duplicate keys, and on aliases that expand past
    :data:`MAX_EXPANDED_NODES` values (:class:`AliasBomb`, a ``yaml.YAMLError``)."""
    data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    if "*" in text:  # no alias, nothing shared: nothing to count
        expanded_size(data)
    return data


def read_mapping(path: Path, what: str, error: type[GlotbenchError], *, empty_ok: bool = False) -> dict:
    """The YAML file's top-level mapping; ``what`` names the kind of file in messages."""
    try:
        raw = load_yaml(Path(path).read_text(encoding="utf-8"))
    except UnicodeDecodeError as err:
        raise error(f"{path}: cannot read {what}: not UTF-8 (byte {err.start})") from None
    except RecursionError:
        raise error(f"{path}: cannot read {what}: nested too deeply") from None
    except OSError as err:
        raise error(f"{path}: cannot read {what}: {err.strerror or err}") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise error(f"{path}: invalid YAML{where}: {problem}") from None
    if raw is None and empty_ok:
        return {}
    if not isinstance(raw, dict):
        raise error(f"{path}: a {what} must be a YAML mapping, got {type(raw).__name__}")
    return raw


def validate(model: type[M], raw: dict, path: Path, error: type[GlotbenchError]) -> M:
    """``model.model_validate(raw)``; the first problem (and how many more) on one line."""
    try:
        return model.model_validate(raw)
    except ValidationError as err:
        problems = err.errors()
        first = problems[0]
        loc = ".".join(str(p) for p in first["loc"]) or "(top level)"
        msg = "unknown field" if first["type"] == "extra_forbidden" else first["msg"]
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        raise error(f"{path}: field '{loc}': {msg}{more}") from None
