"""Faults injected on purpose into shard workers, for tests (docs/sharding.md).

``GLOTBENCH_TEST_KILL_SHARD=K:N``: shard K SIGKILLs its own process right after its N-th response
is committed to its journal, on its first attempt only (a marker file in the shard's directory
says the kill happened), so the retried shard shows what a resume does. Unset: nothing happens.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

KILL_ENV = "GLOTBENCH_TEST_KILL_SHARD"
MARKER = "killed-once"


def arm(journal, index: int, shard_dir: Path) -> None:
    spec = os.environ.get(KILL_ENV)
    if not spec:
        return
    shard, _, after = spec.partition(":")
    marker = Path(shard_dir) / MARKER
    if int(shard) != index or marker.exists():
        return
    limit, count = int(after or 1), [0]
    put = journal.put_response

    def put_then_maybe_die(*args, **kwargs):
        put(*args, **kwargs)
        journal.flush()  # committed now, not with the loop's next iteration
        count[0] += 1
        if count[0] >= limit:
            marker.write_text(str(os.getpid()), encoding="utf-8")
            os.kill(os.getpid(), signal.SIGKILL)

    journal.put_response = put_then_maybe_die
