"""Pong learns with the committed settings: the guard against a change that breaks learning.

Slow (about half an hour per V-trace architecture and an hour for R2D2 on 2 cores):
``pytest -m slow tests/e2e/test_pong_learning.py``. The frame budget comes from the committed
reference curve of the same config: the frames at which its 100-episode mean return (training
envs) first reached -15, times 1.5. A run that has not left random play by then (-20.2 is
random play) has lost what the reference run had. R2D2's replay ratio is held
(``replay_ratio``), so its updates per frame, and with them its budget, do not depend on the
machine.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from seed.config import load
from seed.results import curves, run_dirs

ROOT = Path(__file__).resolve().parents[2]
# benchmark (experiments/<name>.yaml) -> its reference run
REFERENCES = {
    "atari_pong_vtrace": ROOT / "results" / "atari_pong_vtrace" / "seed" / "he-adam-20261203",
    "atari_pong_r2d2": ROOT / "results" / "atari_pong_r2d2" / "seed" / "ratio4-20261205",
}
CASES = [("atari_pong_vtrace", "seed"), ("atari_pong_vtrace", "impala"),
         ("atari_pong_r2d2", "seed")]  # R2D2 runs under SEED only
TARGET, WINDOW, MARGIN = -15.0, 100, 1.5
RUN_TIMEOUT_S = 4 * 3600


def reference_frames(benchmark: str) -> int:
    reference = REFERENCES[benchmark]
    episodes = run_dirs.read_episodes(reference / "episodes.csv")
    reached = curves.first_reaching(run_dirs.training_episodes(episodes), TARGET, WINDOW)
    assert reached is not None, f"the reference run {reference} never reached {TARGET}"
    return int(reached["env_frames"] * MARGIN)


@pytest.mark.parametrize("benchmark", sorted(REFERENCES))
def test_the_reference_curve_is_committed_and_reaches_the_target(benchmark):
    assert reference_frames(benchmark) > 0
    # The reference ran the committed config's learning settings (fields added to Config
    # since it ran keep their old behaviour by default).
    recorded = json.loads(run_dirs.learning_settings(
        run_dirs.load_config(REFERENCES[benchmark])["config"]))
    committed = json.loads(run_dirs.learning_settings(
        load(str(ROOT / "experiments" / f"{benchmark}.yaml")).to_json()))
    differ = {k: (v, committed.get(k)) for k, v in recorded.items() if committed.get(k) != v}
    assert not differ, f"experiments/{benchmark}.yaml is not what its reference ran: {differ}"


@pytest.mark.slow
@pytest.mark.timeout(RUN_TIMEOUT_S + 300)  # the suite's 600 s default would end it at 10 min
@pytest.mark.parametrize("benchmark,arch", CASES, ids=[f"{b}-{a}" for b, a in CASES])
def test_pong_leaves_random_play_within_the_reference_budget(tmp_path, benchmark, arch):
    budget = reference_frames(benchmark)
    run_dir = tmp_path / arch
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    log_path = tmp_path / f"{arch}.log"
    with open(log_path, "wb") as log:  # a file, not a pipe: readable while it runs
        rc = subprocess.run([sys.executable, "-m", "seed.cli", "train", "--config",
                             str(ROOT / "experiments" / f"{benchmark}.yaml"),
                             "--arch", arch, "--frames", str(budget), "--logdir", str(run_dir),
                             "--no-progress"], cwd=ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT, timeout=RUN_TIMEOUT_S).returncode
    tail = log_path.read_text(errors="replace").splitlines()[-5:]
    assert rc == 0, f"seed train exited {rc}; the end of {log_path}:\n" + "\n".join(tail)
    episodes = run_dirs.training_episodes(run_dirs.read_episodes(run_dir / "episodes.csv"))
    reached = curves.first_reaching(episodes, TARGET, WINDOW)
    summary = json.loads((run_dir / "summary.json").read_text())
    print(f"\n{arch}: 100-episode mean reached {TARGET} at {reached}; budget {budget} frames; "
          f"final {summary['mean_return_last_100']}")
    assert reached is not None, (
        f"Pong under {arch} did not reach a 100-episode mean of {TARGET} within {budget} "
        f"frames (the reference {REFERENCES[benchmark].name} did by "
        f"{budget / MARGIN:.0f}); last 100: "
        f"{summary['mean_return_last_100']}. Check metrics.csv's diagnostics in {run_dir}")
