"""The recipe's third agent (tests/support/pg_agent.py) learns Catch in a real SEED run."""

import csv

import numpy as np
import pytest

from seed.agents import register_agent, unregister_agent
from seed.config import make_config
from tests.support.pg_agent import PGAgent, PGConfig


@pytest.mark.slow
def test_the_recipes_agent_learns_catch_in_a_real_run(tmp_path):
    """`seed train`'s own run, in this process (where "pg" is registered): a SEED learner,
    two actor processes, Catch, 100k frames (V-trace's learning check in test_train_e2e)."""
    from seed.runtime.run import train
    run_dir = tmp_path / "pg"
    register_agent("pg", PGAgent, PGConfig)
    try:
        summary = train(make_config(env="toy:catch", agent="pg", arch="seed", actors=2,
                                    envs_per_actor=4, frames=100_000, logdir=str(run_dir),
                                    progress=False, log_interval_s=2.0))
    finally:
        unregister_agent("pg")
    returns = [float(r["episode_return"]) for r in csv.DictReader(
        (run_dir / "episodes.csv").open())]
    window = np.convolve(returns, np.ones(100) / 100, "valid")  # over 100 episodes
    reached = int(np.argmax(window >= 0.8)) + 100 if window.max() >= 0.8 else None
    print(f"\npg on Catch: mean return >= 0.8 from episode {reached} of {len(returns)}; "
          f"{summary}")
    assert reached is not None and summary["mean_return_last_100"] >= 0.8, summary
    metrics = list(csv.DictReader((run_dir / "metrics.csv").open()))
    assert any(r["update_ratio"] for r in metrics) and int(metrics[-1]["learner_steps"]) > 0
