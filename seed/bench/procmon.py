"""CPU use of a process tree (a learner and its actors), sampled while it runs.

Every ``interval_s`` the monitor lists the root process and all its descendants
and reads each one's CPU time (user + system, psutil). The tree's cumulative CPU
seconds are the sum over every process seen so far (a process that has exited
keeps its last reading); the root's own CPU seconds are kept apart (the learner's, where
the root is a learner and the rest its actors). Alongside, it counts the rows of the run's
``metrics.csv``, so CPU use can be cut to the same window as the steady-state
figures: utilisation = delta tree CPU seconds / (delta wall seconds x cores),
which is the sum of the processes' ``cpu_percent`` divided by 100 x cores.

:class:`ForeignLoad` reads the same tree against the whole machine: the share of the
machine's CPU time that processes outside the tree used between two readings (every run
records it in each ``metrics.csv`` row, ``foreign_cpu``).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import psutil


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _count_rows(path: Path) -> int:
    try:
        with open(path, "rb") as f:
            return max(sum(1 for _ in f) - 1, 0)
    except OSError:
        return 0


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


class TreeCPUMonitor:
    def __init__(self, pid: int, metrics_path: str | Path | None = None,
                 interval_s: float = 0.5):
        self.tree = TreeCPU(pid)
        self.root = self.tree.root
        self.metrics_path = Path(metrics_path) if metrics_path else None
        self.interval_s = interval_s
        # (monotonic t, the tree's cpu s, metrics rows, the root process's own cpu s)
        self.samples: list[tuple[float, float, int, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="cpu-monitor", daemon=True)

    def start(self) -> "TreeCPUMonitor":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def sample(self) -> None:
        cpu = self.tree.read()
        rows = _count_rows(self.metrics_path) if self.metrics_path else 0
        self.samples.append((time.monotonic(), cpu, rows, self.tree.root_cpu))

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval_s)

    def utilisation(self, first_row: int | None = None, last_row: int | None = None,
                    cores: int | None = None, root_only: bool = False) -> float | None:
        """Mean CPU use of the tree (or, ``root_only``, of the root process alone) as a
        fraction of all cores.

        With ``first_row``/``last_row`` (1-based counts of metrics rows), over the time
        from the first sample that saw ``first_row`` rows to the first that saw
        ``last_row``; otherwise over the whole run.
        """
        cores = cores or usable_cores()
        s = self.samples
        if len(s) < 2:
            return None
        if first_row is not None and last_row is not None:
            a = next((x for x in s if x[2] >= first_row), None)
            b = next((x for x in s if x[2] >= last_row), None)
            if a is None or b is None or b[0] - a[0] <= 0:
                return None
        else:
            a, b = s[0], s[-1]
        cpu = 3 if root_only else 1
        return (b[cpu] - a[cpu]) / ((b[0] - a[0]) * cores)
