"""Learning diagnostics against values worked out by hand or with NumPy."""

import numpy as np
import pytest
import tensorflow as tf

from seed.agents import diagnostics
from seed.networks.mlp import MLPNetwork
from seed.networks.relu_recording import record_relu_output, recording_relu_outputs
from seed.runtime.stats import RunStats


def test_explained_variance_hand_cases():
    t = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    assert float(diagnostics.explained_variance(t, t)) == pytest.approx(1.0)
    # Predicting the mean explains nothing; predicting the mean + noise, less than nothing.
    assert float(diagnostics.explained_variance(t, np.full(4, 2.5))) == pytest.approx(0.0)
    # Var(t) = 1.25, Var(t - p) with p = [1, 2, 3, 3]: residual [0, 0, 0, 1], var 0.1875.
    assert float(diagnostics.explained_variance(t, [1.0, 2.0, 3.0, 3.0])) == \
        pytest.approx(1 - 0.1875 / 1.25)
    assert float(diagnostics.explained_variance(np.ones(4), np.zeros(4))) == 0.0  # no variance


def test_explained_variance_matches_numpy_on_a_time_major_batch():
    rng = np.random.default_rng(0)
    t = rng.normal(size=(20, 4)).astype(np.float32)
    p = (t + 0.5 * rng.normal(size=(20, 4))).astype(np.float32)
    want = 1 - np.var(t - p) / np.var(t)
    assert float(diagnostics.explained_variance(t, p)) == pytest.approx(want, rel=1e-5)


def test_dead_relu_fraction_counts_units_zero_on_every_row():
    dense = tf.constant([[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]])  # unit 0 dead, 1 and 2 alive
    conv = tf.zeros([2, 2, 2, 4]).numpy()  # [N, H, W, C]: 4 channels
    conv[1, 0, 1, 0] = 3.0  # channel 0 fires at one position on one row: alive
    conv[0, 1, 1, 2] = 0.5  # channel 2 too; channels 1 and 3 never do
    result = diagnostics.dead_relu_fractions([("dense", dense), ("conv", tf.constant(conv))])
    assert list(result) == ["dead_relu_0_dense", "dead_relu_1_conv"]
    assert float(result["dead_relu_0_dense"]) == pytest.approx(1 / 3)
    assert float(result["dead_relu_1_conv"]) == pytest.approx(2 / 4)


def test_torso_output_mean_is_the_last_relu_layers_mean():
    first = tf.constant([[100.0, 0.0]])  # an earlier layer: not read
    torso = tf.constant([[0.0, 1.0, 2.0], [3.0, 0.0, 6.0]])  # 12 / 6 = 2
    result = diagnostics.torso_output_mean([("conv", first), ("fc", torso)])
    assert float(result["torso_output_mean"]) == pytest.approx(2.0)
    assert diagnostics.torso_output_mean([]) == {}


def test_update_ratio_is_the_relative_norm_of_the_step():
    v = tf.Variable([3.0, 4.0])  # norm 5
    w = tf.Variable([[0.0]])
    before = diagnostics.snapshot([v, w])
    v.assign_add([0.3, 0.4])  # a step of norm 0.5
    assert float(diagnostics.update_ratio(before, [v, w])) == pytest.approx(0.1)


def test_the_snapshot_is_taken_before_the_step_inside_a_tf_function():
    v = tf.Variable([3.0, 4.0])

    @tf.function
    def step():
        before = diagnostics.snapshot([v])
        v.assign_add([0.3, 0.4])
        return diagnostics.update_ratio(before, [v])

    assert float(step()) == pytest.approx(0.1)


def test_recording_sees_each_relu_layer_once_in_order_and_only_when_asked():
    import gymnasium as gym
    space = gym.spaces.Box(0, 1, (5,), np.float32)
    net = MLPNetwork(3, space, hidden_sizes=(8, 4))
    env_output = (tf.zeros([2]), tf.zeros([2], tf.bool), tf.ones([2, 5]))
    with recording_relu_outputs() as outputs:
        net(tf.zeros([2], tf.int32), env_output, net.initial_state(2))
    assert [n for n, _ in outputs] == ["torso_0", "torso_1"]
    assert [tuple(y.shape) for _, y in outputs] == [(2, 8), (2, 4)]
    record_relu_output("outside", tf.zeros([1]))  # no recording open: nothing kept
    assert len(outputs) == 2


def test_interval_train_metrics_are_means_over_the_steps():
    stats = RunStats()
    stats.add_train_step({"loss": 1.0, "entropy": 1.5, "env_steps_trained": 80})
    stats.add_train_step({"loss": 3.0, "entropy": 0.5, "env_steps_trained": 80})
    sample = stats.take_interval()
    assert sample["train"]["loss"] == pytest.approx(2.0)
    assert sample["train"]["entropy"] == pytest.approx(1.0)
    assert sample["env_steps_trained"] == 160
    assert stats.take_interval()["train"] == {}  # the next interval starts empty


def test_a_diagnostics_metric_is_averaged_over_the_steps_that_reported_it():
    stats = RunStats()
    stats.add_train_step({"loss": 1.0, "update_ratio": 0.002})
    stats.add_train_step({"loss": 3.0})
    stats.add_train_step({"loss": 5.0, "update_ratio": 0.004})
    sample = stats.take_interval()
    assert sample["train"]["loss"] == pytest.approx(3.0)
    assert sample["train"]["update_ratio"] == pytest.approx(0.003)


def test_sampler_diagnoses_the_first_step_then_one_per_interval():
    now = [100.0]
    sampler = diagnostics.Sampler(interval_s=0.5, min_steps=0, clock=lambda: now[0])
    seen = []
    for t in (100.0, 100.2, 100.49, 100.5, 100.7, 101.2, 101.3):
        now[0] = t
        seen.append(sampler.due())
    assert seen == [True, False, False, True, False, True, False]
    always = diagnostics.Sampler(interval_s=0.0, min_steps=0, clock=lambda: 0.0)
    assert all(always.due() for _ in range(3))


def test_sampler_waits_for_the_interval_and_the_steps_or_the_longest_gap():
    """Steps slower than the interval are diagnosed once per ``min_steps + 1``, faster ones
    once per interval; none waits past the gap."""
    def seen(step_s, calls, **kw):
        now = [0.0]
        sampler = diagnostics.Sampler(clock=lambda: now[0], **kw)
        out = []
        for i in range(calls):
            now[0] = i * step_s
            out.append(sampler.due())
        return out

    T, F = True, False
    assert seen(0.3, 9, interval_s=0.2, min_steps=3, max_gap_s=10.0) == [T, F, F, F, T, F, F, F, T]
    assert seen(0.045, 11, interval_s=0.2, min_steps=3, max_gap_s=10.0) == \
        [T, F, F, F, F, T, F, F, F, F, T]
    assert seen(0.6, 5, interval_s=0.2, min_steps=100, max_gap_s=1.0) == [T, F, T, F, T]


def test_the_nature_cnn_reports_its_four_relu_layers_by_name():
    import gymnasium as gym
    from seed.agents.vtrace_agent import VTraceAgent
    from seed.config import make_config
    agent = VTraceAgent(make_config(network="nature_cnn", unroll_length=2, batch_size=1),
                        gym.spaces.Box(0, 255, (84, 84, 1), np.uint8), gym.spaces.Discrete(6))
    assert agent.relu_columns == ["dead_relu_0_conv1", "dead_relu_1_conv2",
                                  "dead_relu_2_conv3", "dead_relu_3_fc"]
