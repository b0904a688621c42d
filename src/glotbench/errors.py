"""Error types. Every message is one line naming the file, record, field or URL at fault."""

from __future__ import annotations


class GlotbenchError(Exception):
    """Base class: an error a user can act on. ``str(err)`` is a one-line message."""


class TaskSpecError(GlotbenchError):
    """A task YAML file is broken (bad YAML, unknown or missing field)."""


class UnknownTaskError(GlotbenchError):
    """A task or suite name that is not registered."""


class DataError(GlotbenchError):
    """A dataset file is missing, unreadable, or a record lacks a field."""


class ModelError(GlotbenchError):
    """A model backend cannot be created or used (bad spec, missing file, unreachable server)."""


class TransientModelError(ModelError):
    """A request failed in a way worth retrying: timeout, connection error, HTTP 429 or 5xx."""


class PermanentModelError(ModelError):
    """A request failed in a way retrying will not fix (HTTP 4xx other than 429, bad request)."""
