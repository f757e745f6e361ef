import os
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@pytest.fixture(scope="session")
def trained_catch(tmp_path_factory) -> Path:
    """A toy:catch run that ``seed train`` trained for 3,000 frames under SEED (about 20 s,
    once per session): config.json, metrics.csv, episodes.csv, summary.json, checkpoint.npz
    in ``.../toy_catch/seed/run``. Shared by the tests that play it: copy it to change it."""
    run = tmp_path_factory.mktemp("trained") / "toy_catch" / "seed" / "run"
    p = subprocess.run([sys.executable, "-m", "seed.cli", "train", "--env", "toy:catch",
                        "--arch", "seed", "--actors", "1", "--envs-per-actor", "2",
                        "--frames", "3000", "--no-progress", "--logdir", str(run)],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert (run / "checkpoint.npz").exists()
    return run
