"""Where a benchmark's CPU went (Linux /proc): how busy the whole machine was during a run, and how much CPU the
calling thread used. Printed beside throughput so a reader can tell a run limited by the machine's cores (both
busy) from one limited by one thread (one core busy, the other waiting)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


def _machine_ticks() -> tuple[int, int]:
    """(busy, total) clock ticks of all CPUs since boot."""
    with open("/proc/stat") as stat:
        fields = [int(v) for v in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]   # idle + iowait
    total = sum(fields[:8])        # guest time is already counted in user
    return total - idle, total


@dataclass
class CpuUse:
    machine_busy: float = 0.0   # share of all CPUs' time busy during the run (0..1)
    cpus: int = 0
    thread_seconds: float = 0.0  # CPU seconds of the thread that ran the block

    def text(self, seconds: float) -> str:
        thread = f", this thread {self.thread_seconds / seconds:.0%} of one core" if seconds > 0 else ""
        return f"machine {self.machine_busy:.0%} busy ({self.cpus} CPUs){thread}"


@contextmanager
def cpu_use() -> Iterator[CpuUse]:
    """Measures the block: `with cpu_use() as use: ...`, then `use.text(wall_seconds)`."""
    use = CpuUse(cpus=os.cpu_count() or 1)
    busy, total = _machine_ticks()
    thread = time.thread_time()
    try:
        yield use
    finally:
        busy_after, total_after = _machine_ticks()
        use.machine_busy = (busy_after - busy) / max(1, total_after - total)
        use.thread_seconds = time.thread_time() - thread
