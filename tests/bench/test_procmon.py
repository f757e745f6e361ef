"""The CPU monitor of seed compare: the tree's CPU and the root process's own, apart."""

import subprocess
import sys
import time

import pytest

from seed.bench.procmon import TreeCPUMonitor

BUSY = "import time\nt = time.process_time()\nwhile time.process_time() - t < {s}: pass\n"


def test_root_only_counts_the_root_and_not_its_children():
    # The root burns ~0.3 CPU-s itself, its child ~1.2 CPU-s: the two shares must differ.
    code = (f"import subprocess, sys\n"
            f"child = subprocess.Popen([sys.executable, '-c', {BUSY.format(s=1.2)!r}])\n"
            + BUSY.format(s=0.3) + "child.wait()\n")
    proc = subprocess.Popen([sys.executable, "-c", code])
    monitor = TreeCPUMonitor(proc.pid, interval_s=0.05).start()
    proc.wait(30)
    time.sleep(0.1)
    monitor.stop()
    tree = monitor.utilisation(cores=1)
    root = monitor.utilisation(cores=1, root_only=True)
    assert tree is not None and root is not None
    wall = monitor.samples[-1][0] - monitor.samples[0][0]
    assert root * wall == pytest.approx(0.3, abs=0.15)
    assert tree * wall > root * wall + 0.8  # the child's ~1.2 CPU-s count in the tree only
