import numpy as np
import pytest
import tensorflow as tf

import gymnasium as gym

from seed.agents import make_agent
from seed.agents.contract import _next_power_of_two, traced_once, xla_batch_buckets
from seed.config import make_config
from seed.types import EnvOutput


def test_traced_once_converts_nests_and_never_retraces():
    spec = [tf.TensorSpec([None], tf.int32), (tf.TensorSpec([None, 2], tf.float32),)]
    fn = traced_once(lambda a, nest: tf.cast(a, tf.float32)[:, None] * nest[0], spec)
    for batch in (1, 3, 7):
        out = fn(np.arange(batch), (np.ones((batch, 2), np.float64),))
        np.testing.assert_allclose(out.numpy(), np.repeat(np.arange(batch)[:, None], 2, 1))
    assert fn.tracing_count() == 1


def test_traced_once_refuses_a_different_nest():
    fn = traced_once(lambda a, b: a + b, [tf.TensorSpec([None], tf.float32)] * 2)
    with pytest.raises(ValueError, match="expected 2 input arrays, got 3"):
        fn(np.zeros(2), (np.zeros(2), np.zeros(2)))


def test_next_power_of_two():
    got = [int(_next_power_of_two(tf.constant(n))) for n in range(1, 18)]
    assert got == [1, 2, 4, 4, 8, 8, 8, 8, 16, 16, 16, 16, 16, 16, 16, 16, 32]


def test_xla_batch_buckets_matches_the_plain_function_and_compiles_per_bucket():
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2))

    def rows(x, nest):  # row-wise: a matmul, an elementwise op on a bool, a nested output
        return {"y": tf.matmul(x, w), "z": (tf.where(nest[0], 1.0, -1.0) * 2.0,)}

    spec = [tf.TensorSpec([None, 3], tf.float32), (tf.TensorSpec([None], tf.bool),)]
    bucketed = xla_batch_buckets(rows)
    fn = traced_once(lambda x, nest: bucketed(x, nest), spec)
    rng = np.random.default_rng(0)
    for n in (1, 3, 5, 7, 8):
        x, flag = rng.normal(size=(n, 3)).astype(np.float32), rng.random(n) < 0.5
        out = fn(x, (flag,))
        assert out["y"].shape == (n, 2) and out["z"][0].shape == (n,)
        np.testing.assert_allclose(out["y"].numpy(), x @ w.numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(out["z"][0].numpy(), np.where(flag, 2.0, -2.0))


@pytest.mark.parametrize("agent_name,network_kwargs,obs_space", [
    ("vtrace", {"hidden_sizes": (16,)}, gym.spaces.Box(0, 255, (3, 2), np.uint8)),
    ("vtrace", {"hidden_sizes": (16,), "lstm_size": 8}, gym.spaces.Box(0, 255, (3, 2), np.uint8)),
    ("r2d2", {"hidden_sizes": (16,), "lstm_size": 8}, gym.spaces.Box(0.0, 1.0, (2,), np.float32)),
])
def test_jit_inference_gives_the_plain_networks_outputs(agent_name, network_kwargs, obs_space):
    """The XLA path computes what the network computes (padding rows never leak)."""
    config = make_config(agent=agent_name, network="mlp", network_kwargs=network_kwargs,
                         actors=1, envs_per_actor=6, unroll_length=4, batch_size=2,
                         jit_inference=True, seed=1)
    agent = make_agent(config, obs_space, gym.spaces.Discrete(3))
    assert agent._policy_step is not agent.network  # the XLA path is the one under test
    rng = np.random.default_rng(2)
    n = 5  # padded to 8 inside
    obs = rng.uniform(obs_space.low, obs_space.high, (n,) + obs_space.shape).astype(
        obs_space.dtype)
    env_output = EnvOutput(rng.normal(size=n).astype(np.float32), rng.random(n) < 0.3, obs)
    prev_action = rng.integers(0, 3, n).astype(np.int32)
    state = tuple(s + rng.normal(size=s.shape).astype(s.dtype) for s in agent.initial_state(n))
    for table, rows in zip(agent.core_states.variables, state):
        table[:n].assign(rows)
    action, agent_output = agent.infer(np.arange(n), prev_action, env_output)
    new_state = agent.read_core_state(np.arange(n))
    want, want_state = agent.network(tf.constant(prev_action), EnvOutput(
        *(tf.constant(x) for x in env_output)), tuple(tf.constant(s) for s in state))
    key = "policy_logits" if agent_name == "vtrace" else "q_values"
    np.testing.assert_allclose(agent_output[key], want[key].numpy(), rtol=1e-4, atol=1e-5)
    for got, ref in zip(new_state, want_state):
        np.testing.assert_allclose(got, ref.numpy(), rtol=1e-4, atol=1e-5)
    assert action.shape == (n,) and ((0 <= action) & (action < 3)).all()
