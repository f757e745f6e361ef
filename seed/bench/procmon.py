"""CPU use of a process tree (a learner and its actors), sampled while it runs.

Every ``interval_s`` the monitor lists the root process and all its descendants
and reads each one's CPU time (user + system, psutil). The tree's cumulative CPU
seconds are the sum over every process seen so far (a process that has exited
keeps its last reading); the root's own CPU seconds are kept apart (the learner's, where
the root is a learner and the rest its actors). Alongside, it counts the rows of the run's
``metrics.csv``, so CPU use can be cut to the same window as the steady-state
figures: utilisation = delta tree CPU seconds / (delta wall seconds x cores),
which is the sum of the processes' ``cpu_percent`` divided by 100 x cores.

The tree's CPU is read by :class:`seed.metrics.cpu.TreeCPU`.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from seed.metrics.cpu import TreeCPU, usable_cores


def _count_rows(path: Path) -> int:
    try:
        with open(path, "rb") as f:
            return max(sum(1 for _ in f) - 1, 0)
    except OSError:
        return 0


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
