"""RunStats: a train metric is logged as its mean over the interval, a max_* one as its max."""

import pytest

from seed.runtime.stats import RunStats


def test_means_and_maxima_over_an_interval():
    stats = RunStats()
    stats.add_train_step({"loss": 1.0, "max_abs_log_rho": 0.2, "env_steps_trained": 80})
    stats.add_train_step({"loss": 3.0, "max_abs_log_rho": 0.7, "env_steps_trained": 80})
    stats.add_train_step({"loss": 5.0, "max_abs_log_rho": 0.1, "update_ratio": 0.5,
                          "env_steps_trained": 80})
    train = stats.take_interval()["train"]
    assert train["loss"] == pytest.approx(3.0)
    assert train["max_abs_log_rho"] == 0.7  # the worst step, not the mean 0.33
    assert train["update_ratio"] == 0.5  # one sampled step: its mean is itself
    assert stats.env_steps_trained == 240 and stats.learner_steps == 3
    assert stats.take_interval()["train"] == {}  # drained
    stats.add_train_step({"max_abs_log_rho": 0.05})
    assert stats.take_interval()["train"] == {"max_abs_log_rho": 0.05}
