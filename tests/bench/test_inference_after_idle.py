"""scripts/inference_after_idle.py: it times the forward pass both ways and says the gap's cost."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "inference_after_idle.py"


def _run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=300, cwd=SCRIPT.parents[1])


def test_prints_both_timings_and_their_difference():
    out = _run("--config", "experiments/toy_catch.yaml", "--batch", "2", "--calls", "10",
               "--gap-ms", "1")
    assert out.returncode == 0, out.stderr
    back = re.search(r"batch 2, back to back\s*: p50 ([\d.]+) ms", out.stdout)
    idle = re.search(r"batch 2, after 1 ms idle\s*: p50 ([\d.]+) ms", out.stdout)
    diff = re.search(r"idle gap costs ([+-][\d.]+) ms per call", out.stdout)
    assert back and idle and diff, out.stdout
    # each figure printed to 0.01 ms
    assert abs(float(diff.group(1)) - (float(idle.group(1)) - float(back.group(1)))) <= 0.011


def test_rejects_bad_arguments():
    out = _run("--calls", "2")
    assert out.returncode == 2
    assert "--calls >= 10" in out.stderr


def test_with_idle_cores_polling_or_a_one_line_refusal_where_it_cannot():
    out = _run("--config", "experiments/toy_catch.yaml", "--batch", "2", "--calls", "10",
               "--gap-ms", "1", "--cpu-idle-poll")
    if os.access("/dev/cpu_dma_latency", os.W_OK):
        assert out.returncode == 0, out.stderr
        assert "ms per call (p50), idle cores polling" in out.stdout
    else:
        assert out.returncode == 2
        assert "cpu_idle_poll: cannot open /dev/cpu_dma_latency" in out.stderr
