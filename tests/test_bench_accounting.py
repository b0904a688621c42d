"""bench/cpu_accounting.py: a tool's start-up (lm-eval's TaskManager indexing its task folders)
stays out of its per-item CPU, and the ratio to the bare client is of per-item figures."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "bench" / "cpu_accounting.py"
_spec = importlib.util.spec_from_file_location("cpu_accounting", _PATH)
acc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(acc)


def test_startup_is_outside_the_per_item_cpu():
    # the reading: 6.7 CPU-s of TaskManager, then 0.48 CPU-s for 1,500 items
    got = acc.pass_cpu(start=10.0, ready=16.7, done=17.18, n=1500)
    assert got["startup_cpu_s"] == pytest.approx(6.7)
    assert got["items_cpu_s"] == pytest.approx(0.48)
    assert got["cpu_ms_per_item"] == pytest.approx(0.32)


def test_a_tool_without_startup_counts_everything():
    got = acc.pass_cpu(start=2.0, ready=2.0, done=3.0, n=1000)
    assert got == {"startup_cpu_s": 0.0, "items_cpu_s": 1.0, "cpu_ms_per_item": 1.0}


@pytest.mark.parametrize("readings", [(1.0, 0.5, 2.0), (1.0, 2.0, 1.5)])
def test_readings_out_of_order_are_refused(readings):
    with pytest.raises(ValueError, match="out of order"):
        acc.pass_cpu(*readings, n=10)


def test_no_items_and_ratio():
    with pytest.raises(ValueError):
        acc.pass_cpu(0.0, 0.0, 1.0, n=0)
    assert acc.cpu_ratio(0.48, 0.12) == pytest.approx(4.0)
    with pytest.raises(ValueError):
        acc.cpu_ratio(0.48, 0.0)


def test_cpu_split_by_value():
    # run 0.29 ms = own work 0.115 + exchange 0.175 (the bare client: 0.09 for the same exchange)
    lines = acc.cpu_split(0.29, 0.115, 0.09)
    assert "own work 0.115 ms" in lines[0] and "inside the run 0.175 ms" in lines[0] and "(1.94x)" in lines[0]
    assert "allows 0.180 ms" in lines[1] and "+0.005 ms left" in lines[1] and "0.090 ms at the bare" in lines[1]
    with pytest.raises(ValueError):
        acc.cpu_split(0.29, 0.0, 0.09)
