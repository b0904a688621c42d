"""A lazy registry entry resolved by several threads at once (the leaderboard scores uploads in
worker threads, and its first upload resolves every lazy scorer): each gets the object, none
fails. The old ``get`` raised KeyError in every thread but the first (``del self._lazy[name]``)."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor


def test_a_lazy_entry_resolved_by_parallel_threads_gives_every_thread_the_same_object():
    from glotbench.registry import Registry

    def slow_coerce(obj, name, where):
        time.sleep(0.2)  # every thread is inside get() before the first one finishes
        return obj

    reg = Registry("thing", coerce=slow_coerce)
    reg.register_lazy("dumps", "json:dumps")
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda _: reg.get("dumps"), range(8)))
    import json

    assert got == [json.dumps] * 8
    assert reg.get("dumps") is json.dumps and "dumps" in reg.names()
