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
    """A request failed in a way worth retrying: timeout, connection error, HTTP 429 or 5xx, or a
    malformed answer. ``retry_after``: seconds the server asked us to wait (``Retry-After``);
    ``connection``: the server could not be reached at all (counts toward the circuit breaker)."""

    def __init__(self, message: str, *, retry_after: float | None = None, connection: bool = False):
        super().__init__(message)
        self.retry_after = retry_after
        self.connection = connection


class PermanentModelError(ModelError):
    """A request failed in a way retrying will not fix (HTTP 4xx other than 429, bad request)."""


class AuthModelError(PermanentModelError):
    """HTTP 401/403: every further request would fail the same way, so the run stops at once."""


class RunStopped(GlotbenchError):
    """The circuit breaker stopped the run early (server unreachable, auth refused, disk full).
    Nothing answered is lost: rerunning the same command resumes."""


class JournalCorrupt(GlotbenchError):
    """The run journal cannot be read; ``glotbench doctor RUN`` salvages what is readable."""


_SAID: set[str] = set()


def set_aside(message: str) -> None:
    """Say once per process, on stderr, that something a user did not necessarily write (a task file,
    a benchmark package) was set aside and why: one line, and every other command and task goes on."""
    message = " ".join(message.split())  # one line, whatever the package's exception said
    if len(message) > 600:
        message = message[:600] + " ..."
    if message in _SAID:
        return
    _SAID.add(message)
    import sys

    print(f"warning: set aside: {message}", file=sys.stderr, flush=True)
