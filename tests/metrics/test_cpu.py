"""The machine's foreign load: its busy CPU time less a process tree's, over its time."""

import os
import subprocess
import sys
import time

import pytest

from seed.metrics import cpu

BUSY = "import time\nt = time.process_time()\nwhile time.process_time() - t < {s}: pass\n"


def test_foreign_load_is_machine_busy_less_the_tree_over_machine_time(monkeypatch):
    # Hand-made counters: over the interval the machine spent 10 CPU-s, 6 of them busy, of
    # which the tree used 2.5: foreign = (6 - 2.5) / 10.
    machine = iter([(100.0, 400.0), (106.0, 410.0), (107.0, 420.0)])
    tree = iter([50.0, 52.5, 60.0])
    monkeypatch.setattr(cpu, "_machine_cpu", lambda: next(machine))
    monkeypatch.setattr(cpu.TreeCPU, "read", lambda self: next(tree))
    load = cpu.ForeignLoad(os.getpid())
    assert load.sample() == pytest.approx(0.35)
    assert load.sample() == 0.0  # the tree used more than the machine's busy time: clamped


def test_foreign_load_counts_a_process_outside_the_tree():
    # The tree is a sleeping process; a burner beside it (not its child) is foreign load.
    root = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        load = cpu.ForeignLoad(root.pid)
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
