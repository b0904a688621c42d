"""The run's garbage-collector settings: raised for the run, restored after it, whatever happens."""

from __future__ import annotations

import gc

import pytest

from glotbench.engine.gc_pace import YOUNG_THRESHOLD, fewer_collections


def test_threshold_raised_and_startup_objects_frozen_inside_then_restored():
    before = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    with fewer_collections():
        assert gc.get_threshold() == (max(YOUNG_THRESHOLD, before[0]), *before[1:])
        assert gc.get_freeze_count() > 0  # what was alive when the run started is not walked again
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_restored_when_the_run_fails():
    before = gc.get_threshold()
    with pytest.raises(RuntimeError):
        with fewer_collections():
            raise RuntimeError("boom")
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_a_freeze_made_by_the_process_is_left_alone():
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with fewer_collections():
            pass
        assert gc.get_freeze_count() > frozen // 2  # not unfrozen by the run (a few frozen objects may be freed)
    finally:
        gc.unfreeze()


def test_cycles_made_during_the_run_are_still_collected():
    class Node:
        pass

    import weakref

    with fewer_collections():
        a, b = Node(), Node()
        a.other, b.other = b, a
        ref = weakref.ref(a)
        del a, b
        gc.collect()
        assert ref() is None
