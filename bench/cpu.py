"""Where a benchmark's CPU went (Linux /proc): how busy the whole machine was during a run, how much CPU the
calling thread, this whole process (all its threads: the bronze writer, the embedded engine) and its child
processes used, and the rest (the database server or broker, and anything else running). Printed beside
throughput so a reader can tell a run limited by the machine's cores (both busy) from one limited by one thread
(one core busy, the other waiting), and how many CPU microseconds each event costs where."""

from __future__ import annotations

import os
import resource
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


def _cpu_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


@dataclass
class CpuUse:
    machine_busy: float = 0.0    # share of all CPUs' time busy during the run (0..1)
    cpus: int = 0
    thread_seconds: float = 0.0  # CPU seconds of the thread that ran the block
    process_seconds: float = 0.0   # CPU seconds of this process, every thread
    children_seconds: float = 0.0  # CPU seconds of child processes that ended during the block
    machine_seconds: float = 0.0   # busy CPU seconds of the whole machine

    def text(self, seconds: float) -> str:
        thread = f", this thread {self.thread_seconds / seconds:.0%} of one core" if seconds > 0 else ""
        return f"machine {self.machine_busy:.0%} busy ({self.cpus} CPUs){thread}"

    def per_event(self, events: int) -> str:
        """CPU microseconds per event: this process (all threads), its children, and the rest of the machine."""
        if not events:
            return "no events"
        rest = max(0.0, self.machine_seconds - self.process_seconds - self.children_seconds)
        parts = [f"this process {self.process_seconds / events * 1e6:.1f}"]
        if self.children_seconds:
            parts.append(f"child processes {self.children_seconds / events * 1e6:.1f}")
        parts.append(f"rest of the machine {rest / events * 1e6:.1f}")
        return "CPU us/event: " + ", ".join(parts)


@contextmanager
def cpu_use() -> Iterator[CpuUse]:
    """Measures the block: `with cpu_use() as use: ...`, then `use.text(wall_seconds)`."""
    use = CpuUse(cpus=os.cpu_count() or 1)
    busy, total = _machine_ticks()
    thread = time.thread_time()
    process, children = _cpu_seconds(resource.RUSAGE_SELF), _cpu_seconds(resource.RUSAGE_CHILDREN)
    try:
        yield use
    finally:
        busy_after, total_after = _machine_ticks()
        use.machine_busy = (busy_after - busy) / max(1, total_after - total)
        use.thread_seconds = time.thread_time() - thread
        use.process_seconds = _cpu_seconds(resource.RUSAGE_SELF) - process
        use.children_seconds = _cpu_seconds(resource.RUSAGE_CHILDREN) - children
        ticks = os.sysconf("SC_CLK_TCK")
        use.machine_seconds = (busy_after - busy) / ticks
