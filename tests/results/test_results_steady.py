"""seed.results.steady: the steady-state rule seed compare measures by, by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from tests.support.results_tree import write_csv

from seed.results import run_dirs, steady

STEADY_COLS = ["wall_time", "env_steps", "env_frames", "fps", "learner_steps", "learner_fps",
               "inference_batch_size", "action_latency_p50_ms", "action_latency_p99_ms",
               "parameter_pull_ms", "episodes", "episode_return"]


STEADY_ROWS = [
    # wall, steps, frames, fps, lsteps, lfps, batch, p50, p99, pull, episodes, return
    (1.0, 0, 0, 0, 0, 0, None, None, None, None, 0, None),         # start-up
    (2.0, 100, 400, 400, 0, 0, 4, 9.0, 50.0, 5.0, 0, None),         # frames, no training yet
    (3.0, 300, 1200, 800, 1, 100, 4, 8.0, 40.0, 4.0, 1, 0.5),       # warm-up row (train mode)
    (4.0, 700, 2800, 1600, 3, 400, 8, 2.0, 6.0, 1.0, 0, None),      # steady
    (6.0, 1300, 5200, 1200, 6, 300, 2, 4.0, 10.0, 3.0, 2, 1.0),     # steady (2 s interval)
]


def _steady_metrics(rows=STEADY_ROWS) -> pd.DataFrame:
    return pd.DataFrame([[np.nan if v is None else v for v in r] for r in rows],
                        columns=STEADY_COLS)


def test_steady_state_rule_train_mode(tmp_path):
    write_csv(tmp_path / "metrics.csv", STEADY_COLS,
               [dict(zip(STEADY_COLS, r)) for r in STEADY_ROWS])
    metrics = run_dirs.read_metrics(tmp_path / "metrics.csv")
    assert steady.warmup_index(metrics, train=True) == 2
    s = steady.steady_state(metrics, train=True)
    assert s["steady"] and s["steady_rows"] == 2
    assert s["warmup_s"] == 3.0 and s["window_s"] == 3.0
    assert s["fps"] == pytest.approx((5200 - 1200) / 3.0)
    # learner_fps weighted by interval duration: (400 * 1 + 300 * 2) / 3
    assert s["learner_fps"] == pytest.approx(1000 / 3)
    # batches: 400 steps / 8 + 600 steps / 2 = 350 batches for 1000 steps
    assert s["inference_batch_size"] == pytest.approx(1000 / 350)
    # latencies and pulls weighted by env steps (400, 600)
    assert s["action_latency_p50_ms"] == pytest.approx((2.0 * 400 + 4.0 * 600) / 1000)
    assert s["action_latency_p99_ms"] == pytest.approx((6.0 * 400 + 10.0 * 600) / 1000)
    assert s["parameter_pull_ms"] == pytest.approx((1.0 * 400 + 3.0 * 600) / 1000)
    assert s == steady.steady_state(_steady_metrics(), train=True)  # read or built: the same


def test_steady_state_rule_serve_mode_starts_at_first_frames():
    assert steady.warmup_index(_steady_metrics(), train=False) == 1
    s = steady.steady_state(_steady_metrics(), train=False)
    assert s["warmup_s"] == 2.0 and s["steady_rows"] == 3
    assert s["fps"] == pytest.approx((5200 - 400) / 4.0)


def test_steady_state_without_a_window_is_flagged():
    short = _steady_metrics(STEADY_ROWS[:3])
    s = steady.steady_state(short, train=True)  # the warm-up row is the last row
    assert not s["steady"] and s["steady_rows"] == 0
    assert s["fps"] == pytest.approx(1200 / 3.0)  # from the run start, flagged
    assert steady.steady_state(short.iloc[:1], train=False)["fps"] is None
    assert steady.warmup_index(short.iloc[:1], train=False) is None
