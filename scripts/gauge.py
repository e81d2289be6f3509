"""The machine's speed just now, for quoting a benchmark's figures beside it.

These machines' speed drifts by as much as 1.7 times within minutes (other work
on the same host), so a figure means little without the speed it was measured at.
"""

from __future__ import annotations

import time


def machine_gauge() -> float:
    """Milliseconds of CPU for a fixed pure-Python loop (ten million additions): less is
    faster."""
    started = time.process_time()
    total = 0
    for i in range(10_000_000):
        total += i
    return (time.process_time() - started) * 1000


def speed_line(gauge: float) -> str:
    """The line a benchmark prints beside its figures: ``gauge`` (``machine_gauge``)."""
    return f"this machine's speed: {gauge:.0f} ms for the reference loop (less: faster)"


if __name__ == "__main__":
    print(speed_line(machine_gauge()))
