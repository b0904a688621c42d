"""One kind of name registry for extractors, scorers, metrics, task classes and model backends.

* This module imports nothing of glotbench but :mod:`glotbench.closest` (the "did you mean"
  helper). The catalog (:mod:`glotbench.catalog`), built once by
  the composition roots (the CLI, ``glotbench.evaluate``, a shard worker), fills the registries and
  then hands them its module loader (:func:`catalog_built`); a lookup before that raises
  :class:`CatalogNotBuilt`, so no lookup depends on which module a caller happened to import first.
* An entry is either an object or a lazy ``"module:attr"`` reference, loaded on first use by the
  catalog's loader (entry-point style), so listing task classes imports no benchmark code.
* A name can be registered once. Registering a different object under a taken name raises
  :class:`RegistryError`; registering the same object again is a no-op (module reloads).
* :meth:`Registry.resolve` takes a registered name or a ``"module:attr"`` reference to user code
  and raises a one-line error of the registry's ``error`` class (the task-file error, for the
  registries task files name) naming ``where`` (file and field) and the known names when it cannot.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Callable, Generic, Iterator, TypeVar

T = TypeVar("T")


class RegistryError(ValueError):
    """A name registered twice with different objects."""


class LookupFailed(ValueError):
    """A name or ``"module:attr"`` reference that resolves to nothing (the default ``error`` class)."""


class CatalogNotBuilt(RuntimeError):
    """A registry looked up before the composition root built the catalog."""


_LOADER: list[Callable[[str], ModuleType]] = []


def catalog_built(loader: Callable[[str], ModuleType]) -> None:
    """Called once by :func:`glotbench.catalog.build`, after it filled every registry."""
    _LOADER[:] = [loader]


def require_catalog() -> Callable[[str], ModuleType]:
    """The catalog's module loader; :class:`CatalogNotBuilt` (one line) when it is not built yet."""
    if not _LOADER:
        raise CatalogNotBuilt("glotbench's catalog is not built: call glotbench.catalog.build() first (the CLI, "
                              "glotbench.evaluate and shard workers do; tests build it in tests/conftest.py)")
    return _LOADER[0]


def import_ref(ref: str, *, where: str = "", error: type[Exception] = LookupFailed) -> Any:
    """The object a ``"module:attr"`` (or ``"module:Outer.attr"``) reference names."""
    mod_name, sep, attr = ref.partition(":")
    prefix = f"{where}: " if where else ""
    if not sep or not mod_name or not attr:
        raise error(f"{prefix}{ref!r} is not a 'module:attr' reference")
    load = require_catalog()
    try:
        obj: Any = load(mod_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as err:
        raise error(f"{prefix}cannot import {ref!r}: {err}") from None
    return obj


def ref_of(obj: Any) -> str | None:
    """``"module:qualname"`` of a top-level function or class, or None when it cannot be re-imported."""
    mod, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not mod or not qual or "<locals>" in qual or "<lambda>" in qual:
        return None
    return f"{mod}:{qual}"


class Registry(Generic[T]):
    """Names -> objects of one kind (``kind`` is the word used in messages: "scorer")."""

    def __init__(self, kind: str, *, coerce: Callable[[Any, str, str], T] | None = None, same: Callable[[T, T], bool] | None = None,
                 error: type[Exception] = LookupFailed):
        self.kind = kind
        self.error = error
        self._items: dict[str, T] = {}
        self._lazy: dict[str, str] = {}
        self._order: list[str] = []  # registration order (hooks run in it)
        self._coerce = coerce  # (obj, name, where) -> T, or raises self.error
        self._same = same or (lambda a, b: a is b)

    # ------------------------------------------------------------------ registering
    def register(self, name: str, obj: T) -> T:
        if name in self._lazy:
            raise RegistryError(f"{self.kind} {name!r} is already registered (as {self._lazy[name]})")
        old = self._items.get(name)
        if old is not None and not self._same(old, obj):
            raise RegistryError(f"{self.kind} {name!r} is already registered; pick another name")
        if name not in self._order:
            self._order.append(name)
        self._items[name] = obj
        return obj

    def register_lazy(self, name: str, ref: str) -> None:
        """Register ``"module:attr"``, imported the first time ``name`` is looked up."""
        if name in self._items or (name in self._lazy and self._lazy[name] != ref):
            raise RegistryError(f"{self.kind} {name!r} is already registered; pick another name")
        self._lazy[name] = ref
        if name not in self._order:
            self._order.append(name)

    def pop(self, name: str, default: Any = None) -> Any:
        """Remove ``name`` (tests that register a throw-away entry clean up with this)."""
        self._lazy.pop(name, None)
        return self._items.pop(name, default)

    # ------------------------------------------------------------------ looking up
    def names(self) -> list[str]:
        require_catalog()
        return sorted({*self._items, *self._lazy})

    def in_order(self) -> list[str]:
        """Names in registration order."""
        require_catalog()
        return [n for n in self._order if n in self._items or n in self._lazy]

    def refs(self) -> dict[str, str]:
        """Each name's ``"module:attr"`` reference (lazy or resolved; entries that cannot be re-imported left out)."""
        require_catalog()
        out = dict(self._lazy)
        for name, obj in list(self._items.items()):
            ref = ref_of(obj)
            if ref:
                out.setdefault(name, ref)
        return out

    def __contains__(self, name: object) -> bool:
        require_catalog()
        return name in self._items or name in self._lazy

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def get(self, name: str, *, where: str = "") -> T:
        """The object registered as ``name``; TaskSpecError (one line, naming ``where``) otherwise."""
        require_catalog()
        if name in self._items:
            return self._items[name]
        ref = self._lazy.get(name)  # threads may resolve one lazy name at once (the leaderboard's workers):
        if ref is not None:         # each imports it, the first stored wins, none fails on the other's pop
            obj = import_ref(ref, where=where or f"{self.kind} {name!r}", error=self.error)
            obj = self._coerce(obj, name, where) if self._coerce else obj
            obj = self._items.setdefault(name, obj)
            self._lazy.pop(name, None)
            return obj
        if name in self._items:  # resolved by another thread between the two looks above
            return self._items[name]
        prefix = f"{where}: " if where else ""
        from glotbench.closest import known_hint

        raise self.error(f"{prefix}unknown {self.kind} {name!r} ({known_hint(name, self.names())}; "
                         "or 'module:attr' for your own)")

    def resolve(self, ref: str, *, where: str = "") -> T:
        """A registered name, or a ``"module:attr"`` reference to user code."""
        if ":" in ref and ref not in self._items and ref not in self._lazy:
            obj = import_ref(ref, where=where, error=self.error)
            return self._coerce(obj, ref, where) if self._coerce else obj
        return self.get(ref, where=where)
