"""A bench script is a composition root, like the CLI: it builds glotbench's catalog before its first
lookup (glotbench.catalog.build). A checkout from before the catalog (``--baseline-src``) has none and
fills its registries on first lookup."""

from __future__ import annotations


def build_catalog() -> None:
    try:
        from glotbench.catalog import build
    except ImportError:  # a baseline checkout from before the catalog
        return
    build()
