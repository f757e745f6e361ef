"""Pong learns with the committed settings: the guard against a change that breaks learning.

Slow (about half an hour per architecture on 2 cores): ``pytest -m slow tests/test_pong_learning.py``.
The frame budget comes from the committed reference curve of the same config: the frames at
which its 100-episode mean return first reached -15, times 1.5. A run that has not left random
play by then (-20.2 is random play) has lost what the reference run had.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from seed import results as R

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "experiments" / "atari_pong_vtrace.yaml"
REFERENCE = ROOT / "results" / "atari_pong_vtrace" / "seed" / "he-adam-20261203"
TARGET, WINDOW, MARGIN = -15.0, 100, 1.5
RUN_TIMEOUT_S = 4 * 3600


def reference_frames() -> int:
    episodes = R.read_episodes(REFERENCE / "episodes.csv")
    reached = R.first_reaching(R.training_episodes(episodes), TARGET, WINDOW)
    assert reached is not None, f"the reference run {REFERENCE} never reached {TARGET}"
    return int(reached["env_frames"] * MARGIN)


def test_the_reference_curve_is_committed_and_reaches_the_target():
    assert reference_frames() > 0


@pytest.mark.slow
@pytest.mark.timeout(RUN_TIMEOUT_S + 300)  # the suite's 600 s default would end it at 10 min
@pytest.mark.parametrize("arch", ["seed", "impala"])
def test_pong_leaves_random_play_within_the_reference_budget(tmp_path, arch):
    budget = reference_frames()
    run_dir = tmp_path / arch
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    log_path = tmp_path / f"{arch}.log"
    with open(log_path, "wb") as log:  # a file, not a pipe: readable while it runs
        rc = subprocess.run([sys.executable, "-m", "seed.cli", "train", "--config", str(CONFIG),
                             "--arch", arch, "--frames", str(budget), "--logdir", str(run_dir),
                             "--no-progress"], cwd=ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT, timeout=RUN_TIMEOUT_S).returncode
    tail = log_path.read_text(errors="replace").splitlines()[-5:]
    assert rc == 0, f"seed train exited {rc}; the end of {log_path}:\n" + "\n".join(tail)
    episodes = R.training_episodes(R.read_episodes(run_dir / "episodes.csv"))
    reached = R.first_reaching(episodes, TARGET, WINDOW)
    summary = json.loads((run_dir / "summary.json").read_text())
    print(f"\n{arch}: 100-episode mean reached {TARGET} at {reached}; budget {budget} frames; "
          f"final {summary['mean_return_last_100']}")
    assert reached is not None, (
        f"Pong under {arch} did not reach a 100-episode mean of {TARGET} within {budget} "
        f"frames (the reference did by {budget / MARGIN:.0f}); last 100: "
        f"{summary['mean_return_last_100']}. Check metrics.csv's diagnostics in {run_dir}")
