"""CPU time of a process tree and of the whole machine, read with psutil.

:class:`TreeCPU` sums a root process's and all its descendants' CPU seconds;
:class:`ForeignLoad` sets that against the machine's: the share of the machine's CPU time
that processes outside the tree used between two readings (every run records it in each
``metrics.csv`` row, ``foreign_cpu``). :class:`seed.bench.procmon.TreeCPUMonitor` samples a
tree while a compare runs.
"""

from __future__ import annotations

import os

import psutil


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class TreeCPU:
    """Cumulative CPU seconds (user + system) of a root process and all its descendants:
    each :meth:`read` lists the tree and reads every process in it; a process that has
    exited keeps its last reading, so the total never goes back."""

    def __init__(self, pid: int):
        self.root = psutil.Process(pid)
        self._cpu: dict[tuple[int, float], float] = {}
        self.root_cpu = 0.0  # the root process's own CPU seconds at the last read

    def _tree(self):
        try:
            return [self.root] + self.root.children(recursive=True)
        except psutil.Error:
            return []

    def read(self) -> float:
        """The tree's CPU seconds so far."""
        for p in self._tree():
            try:
                key = (p.pid, p.create_time())
                t = p.cpu_times()
                self._cpu[key] = t.user + t.system
                if p.pid == self.root.pid:
                    self.root_cpu = self._cpu[key]
            except psutil.Error:
                continue
        return sum(self._cpu.values())


def _machine_cpu() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine, all cores, as psutil's
    ``cpu_percent`` counts them: total without guest time (already in user and nice), busy
    = total less idle and iowait (steal, the hypervisor's other guests, counts as busy)."""
    t = psutil.cpu_times()
    total = sum(t) - getattr(t, "guest", 0.0) - getattr(t, "guest_nice", 0.0)
    return total - t.idle - getattr(t, "iowait", 0.0), total


class ForeignLoad:
    """The share of the machine's CPU time used outside a process tree, between readings.

    Each :meth:`sample` returns, for the time since the previous one (or since the
    object was made), (machine busy CPU seconds - the tree's CPU seconds) / the machine's
    CPU seconds, in [0, 1]: 0.25 on 2 cores is half a core busy with other work. A
    reading lists the tree and reads each process's counters (about a millisecond for a
    learner and a few actors). The tree's CPU is counted up to each process's last
    reading, so a process that exits between readings leaves its last moments counted as
    foreign; tree CPU above the machine's busy time (counter granularity) reads as 0.
    """

    def __init__(self, pid: int):
        self.tree = TreeCPU(pid)
        self._last = (*_machine_cpu(), self.tree.read())

    def sample(self) -> float | None:
        """The foreign share since the last sample; None when no CPU time passed."""
        busy, total = _machine_cpu()
        tree = self.tree.read()
        busy0, total0, tree0 = self._last
        self._last = (busy, total, tree)
        if total - total0 <= 0:
            return None
        foreign = (busy - busy0) - (tree - tree0)
        return min(max(foreign / (total - total0), 0.0), 1.0)
