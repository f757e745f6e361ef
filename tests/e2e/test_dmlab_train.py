"""`seed train` on real DeepMind Lab under both architectures: an IMPALA actor runs the engine
beside its TensorFlow model, SEED's learner probes the env's spec in its TensorFlow process.
A small network and 2-second episodes keep each run under half a minute."""

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.dmlab_engine import needs_dmlab

ROOT = Path(__file__).resolve().parents[2]


@needs_dmlab
@pytest.mark.parametrize("arch", ["seed", "impala"])
def test_train_runs_dmlab_and_records_the_engine_build(arch, tmp_path):
    run_dir = tmp_path / arch
    proc = subprocess.run(
        [sys.executable, "-m", "seed.cli", "train", "--env", "dmlab:seekavoid_arena_01",
         "--network", "dmlab", "--arch", arch, "--actors", "1", "--envs-per-actor", "2",
         "--frames", "2400", "--unroll-length", "10", "--batch-size", "2", "--no-progress",
         "--set", 'network_kwargs={"lstm_size": 16, "channels": [4, 8, 8], "fc_size": 32}',
         "--set", 'env_kwargs={"config": {"episodeLengthSeconds": 2}}',
         "--set", "log_interval_s=1", "--logdir", str(run_dir)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["env_frames"] >= 2400 and summary["learner_steps"] > 0
    episodes = list(csv.DictReader((run_dir / "episodes.csv").open()))
    # 2 s at 60 fps, 4 frames a step: every episode is 30 steps.
    assert len(episodes) >= 4 and {e["episode_length"] for e in episodes} == {"30"}
    engine = json.loads((run_dir / "config.json").read_text())["env_engine"]
    assert engine["commit"] == "b1db91af5b4d2f3a24466f4632a3e5e1b0829cca"
    assert engine["complete"] == (not engine["absent"])
    assert engine["level_absent_assets"] == []  # the arena names no absent file
