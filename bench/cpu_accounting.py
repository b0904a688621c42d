"""CPU accounting of a timed pass: a tool's start-up is kept out of its per-item CPU.

A pass reads the process's CPU clock three times: at its start, when the tool is ready to take
items (lm-eval's ``TaskManager`` has indexed its task folders, several CPU seconds on its own;
glotbench has nothing to index: its "ready" is its start), and when the last item is done. The
per-item CPU is what the items phase cost, divided by the items; the start-up is reported beside
it. bench/throughput.py uses this; tests/test_bench_accounting.py checks it.
"""

from __future__ import annotations


def pass_cpu(start: float, ready: float, done: float, n: int) -> dict[str, float]:
    """``{"startup_cpu_s", "items_cpu_s", "cpu_ms_per_item"}`` from three CPU-clock readings
    (seconds, e.g. ``time.process_time()``) of a pass over ``n`` items."""
    if n <= 0:
        raise ValueError(f"a pass over {n} items has no per-item CPU")
    if not start <= ready <= done:
        raise ValueError(f"CPU clock readings out of order: start {start}, ready {ready}, done {done}")
    items = done - ready
    return {"startup_cpu_s": ready - start, "items_cpu_s": items, "cpu_ms_per_item": items * 1000 / n}


def cpu_ratio(tool_ms_per_item: float, client_ms_per_item: float) -> float:
    """A harness's per-item CPU as a multiple of the bare client's (the bar: <= 2.0)."""
    if client_ms_per_item <= 0:
        raise ValueError("the bare client's per-item CPU must be positive")
    return tool_ms_per_item / client_ms_per_item


def cpu_split(run_ms: float, engine_ms: float, client_ms: float) -> list[str]:
    """Where a run's CPU per item goes, from three passes over the same items: the run against the
    stub (``run_ms``), the same run with recorded answers as its model (``engine_ms``: everything but
    the HTTP exchange) and the bare client (``client_ms``: the exchange alone). The difference of the
    first two is what the exchange costs inside a run; lines for the bench's summary."""
    if min(run_ms, engine_ms, client_ms) <= 0:
        raise ValueError("every pass's CPU per item must be positive")
    http = run_ms - engine_ms
    budget = 2.0 * client_ms
    return [f"where glotbench's CPU per item goes: its own work {engine_ms:.3f} ms (the same run with recorded "
            f"answers as the model: no HTTP) + the HTTP exchange inside the run {http:.3f} ms, against the bare "
            f"client's {client_ms:.3f} ms for the same exchange in a loop of its own ({http / client_ms:.2f}x)",
            f"the bar (<= 2.0x the client's) allows {budget:.3f} ms per item: {budget - http:+.3f} ms left for "
            f"glotbench's own work with the exchange at its in-run cost, {budget - client_ms:.3f} ms at the bare "
            f"client's; it spends {engine_ms:.3f} ms"]
