"""The CPU monitor of seed compare: the tree's CPU and the root process's own, apart."""

import os
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


def test_foreign_load_is_machine_busy_less_the_tree_over_machine_time(monkeypatch):
    # Hand-made counters: over the interval the machine spent 10 CPU-s, 6 of them busy, of
    # which the tree used 2.5: foreign = (6 - 2.5) / 10.
    from seed.bench import procmon
    machine = iter([(100.0, 400.0), (106.0, 410.0), (107.0, 420.0)])
    tree = iter([50.0, 52.5, 60.0])
    monkeypatch.setattr(procmon, "_machine_cpu", lambda: next(machine))
    monkeypatch.setattr(procmon.TreeCPU, "read", lambda self: next(tree))
    load = procmon.ForeignLoad(os.getpid())
    assert load.sample() == pytest.approx(0.35)
    assert load.sample() == 0.0  # the tree used more than the machine's busy time: clamped


def test_foreign_load_counts_a_process_outside_the_tree():
    # The tree is a sleeping process; a burner beside it (not its child) is foreign load.
    from seed.bench.procmon import ForeignLoad
    root = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        load = ForeignLoad(root.pid)
        t0 = time.monotonic()
        burner = subprocess.Popen([sys.executable, "-c", BUSY.format(s=1.0)])
        burner.wait(30)
        foreign = load.sample()
        wall = time.monotonic() - t0
    finally:
        root.kill()
        root.wait()
    # ~1 CPU-s of the machine's (wall x cores), other load on the machine only adds to it
    assert foreign is not None
    assert foreign >= 0.8 / (wall * os.cpu_count())
