import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from seed.networks import make_network
from seed.networks.mlp import MLPNetwork
from seed.types import EnvOutput

A = 3


def _space(shape=(4, 2), dtype=np.float32):
    if np.dtype(dtype) == np.uint8:
        return gym.spaces.Box(0, 255, shape, np.uint8)
    return gym.spaces.Box(-1.0, 1.0, shape, dtype)


def _inputs(rng, lead, shape=(4, 2), dtype=np.float32, done_p=0.0):
    if np.dtype(dtype) == np.uint8:
        obs = rng.integers(0, 256, size=lead + shape).astype(np.uint8)
    else:
        obs = rng.normal(size=lead + shape).astype(dtype)
    prev_action = rng.integers(0, A, size=lead).astype(np.int32)
    env_output = EnvOutput(
        reward=rng.normal(size=lead).astype(np.float32) * 3,
        done=rng.random(lead) < done_p,
        observation=obs)
    return prev_action, env_output


@pytest.mark.parametrize("lstm_size", [0, 8])
def test_single_step_shapes(lstm_size):
    net = MLPNetwork(A, _space(), lstm_size=lstm_size)
    prev_action, env_output = _inputs(np.random.default_rng(0), (5,))
    out, state = net(prev_action, env_output, net.initial_state(5))
    assert set(out) == {"policy_logits", "baseline"}
    assert out["policy_logits"].shape == (5, A)
    assert out["baseline"].shape == (5,)
    assert out["policy_logits"].dtype == tf.float32
    if lstm_size:
        assert [s.shape for s in state] == [(5, 8), (5, 8)]
    else:
        assert state == ()


@pytest.mark.parametrize("lstm_size", [0, 8])
def test_unroll_shapes(lstm_size):
    net = MLPNetwork(A, _space(), lstm_size=lstm_size)
    prev_action, env_output = _inputs(np.random.default_rng(1), (6, 5))
    out, state = net(prev_action, env_output, net.initial_state(5), unroll=True)
    assert out["policy_logits"].shape == (6, 5, A)
    assert out["baseline"].shape == (6, 5)
    assert len(state) == (2 if lstm_size else 0)


def test_variables_exist_at_construction_and_are_trainable():
    net = MLPNetwork(A, _space(), hidden_sizes=(16, 8), lstm_size=4)
    shapes = sorted(tuple(v.shape) for v in net.trainable_variables)
    # torso 8->16->8, lstm (8+1+3+4)x16, policy 4x3, baseline 4x1.
    expected = sorted([(8, 16), (16,), (16, 8), (8,), (16, 16), (16,), (4, A), (A,),
                       (4, 1), (1,)])
    assert shapes == expected
    assert all(isinstance(v, tf.Variable) for v in net.trainable_variables)


@pytest.mark.parametrize("lstm_size", [0, 6])
def test_unroll_equals_single_steps_with_resets(lstm_size):
    tf.random.set_seed(0)
    net = MLPNetwork(A, _space(), hidden_sizes=(16,), lstm_size=lstm_size)
    rng = np.random.default_rng(2)
    T, B = 7, 4
    prev_action, env_output = _inputs(rng, (T, B), done_p=0.3)
    state0 = net.initial_state(B)
    if lstm_size:  # start from a non-trivial state
        state0 = tuple(tf.constant(rng.normal(size=(B, lstm_size)), tf.float32)
                       for _ in range(2))
    out_u, state_u = net(prev_action, env_output, state0, unroll=True)

    state = state0
    logits, baselines = [], []
    for t in range(T):
        out, state = net(prev_action[t], EnvOutput(*(x[t] for x in env_output)), state)
        logits.append(out["policy_logits"])
        baselines.append(out["baseline"])
    np.testing.assert_allclose(out_u["policy_logits"], np.stack(logits), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out_u["baseline"], np.stack(baselines), rtol=1e-5, atol=1e-5)
    for a, b in zip(state_u, state):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_done_resets_state():
    net = MLPNetwork(A, _space(), hidden_sizes=(16,), lstm_size=6)
    rng = np.random.default_rng(3)
    B = 4
    prev_action, env_output = _inputs(rng, (B,))
    junk = tuple(tf.constant(rng.normal(size=(B, 6)) * 2, tf.float32) for _ in range(2))

    reset = env_output._replace(done=np.ones(B, bool))
    out_junk_done, _ = net(prev_action, reset, junk)
    out_init_done, _ = net(prev_action, reset, net.initial_state(B))
    np.testing.assert_allclose(out_junk_done["policy_logits"], out_init_done["policy_logits"],
                               atol=1e-6)

    # Without done the state matters (so the test above is not vacuous).
    cont = env_output._replace(done=np.zeros(B, bool))
    out_junk, _ = net(prev_action, cont, junk)
    out_init, _ = net(prev_action, cont, net.initial_state(B))
    assert not np.allclose(out_junk["policy_logits"], out_init["policy_logits"], atol=1e-4)

    # Mixed: only the done rows reset.
    mixed = env_output._replace(done=np.array([True, False, True, False]))
    out_mixed, _ = net(prev_action, mixed, junk)
    np.testing.assert_allclose(out_mixed["policy_logits"].numpy()[[0, 2]],
                               out_init_done["policy_logits"].numpy()[[0, 2]], atol=1e-6)
    np.testing.assert_allclose(out_mixed["policy_logits"].numpy()[[1, 3]],
                               out_junk["policy_logits"].numpy()[[1, 3]], atol=1e-6)


def test_lstm_core_sees_reward_and_prev_action():
    net = MLPNetwork(A, _space(), hidden_sizes=(16,), lstm_size=6)
    rng = np.random.default_rng(4)
    prev_action, env_output = _inputs(rng, (2,))
    state = net.initial_state(2)
    base, _ = net(prev_action, env_output, state)
    other_action, _ = net((prev_action + 1) % A, env_output, state)
    other_reward, _ = net(prev_action, env_output._replace(reward=env_output.reward + 0.5),
                          state)
    assert not np.allclose(base["baseline"], other_action["baseline"])
    assert not np.allclose(base["baseline"], other_reward["baseline"])


def test_stateless_ignores_reward_and_has_no_state():
    net = MLPNetwork(A, _space(), lstm_size=0)
    rng = np.random.default_rng(5)
    prev_action, env_output = _inputs(rng, (3,))
    assert net.initial_state(3) == ()
    a, s = net(prev_action, env_output, ())
    b, _ = net((prev_action + 1) % A, env_output._replace(reward=env_output.reward + 1), ())
    assert s == ()
    np.testing.assert_allclose(a["policy_logits"], b["policy_logits"])


def test_uint8_observations_are_scaled():
    tf.random.set_seed(1)
    net = MLPNetwork(A, _space((5,), np.uint8), hidden_sizes=(8,))
    obs = np.array([[0, 51, 255, 10, 200]], np.uint8)
    out, _ = net(np.zeros(1, np.int32),
                 EnvOutput(np.zeros(1, np.float32), np.zeros(1, bool), obs), ())
    # Independent forward pass in NumPy with the same weights.
    torso, policy = net._torso[0], net._policy
    x = obs.astype(np.float64) / 255.0
    h = np.maximum(x @ torso.w.numpy() + torso.b.numpy(), 0)
    np.testing.assert_allclose(out["policy_logits"], h @ policy.w.numpy() + policy.b.numpy(),
                               rtol=1e-5, atol=1e-6)


def test_q_head_is_dueling():
    net = MLPNetwork(A, _space(), head="q", hidden_sizes=(8,), lstm_size=4)
    prev_action, env_output = _inputs(np.random.default_rng(6), (5, 2))
    out, _ = net(prev_action, env_output, net.initial_state(2), unroll=True)
    assert set(out) == {"q_values"}
    assert out["q_values"].shape == (5, 2, A)
    # mean_a Q(s, a) = V(s) for a dueling head; recompute V from the core output.
    h_seq, state = [], net.initial_state(2)
    for t in range(5):
        state = tuple(tf.where(env_output.done[t][:, None], tf.zeros_like(s), s) for s in state)
        x = tf.nn.relu(net._flat_observation(env_output.observation[t]) @ net._torso[0].w
                       + net._torso[0].b)
        core_in = tf.concat([x, np.clip(env_output.reward[t], -1, 1)[:, None],
                             tf.one_hot(prev_action[t], A)], -1)
        h, state = net._core(core_in, state)
        h_seq.append(h)
    value = np.stack([(h @ net._value.w + net._value.b).numpy()[:, 0] for h in h_seq])
    np.testing.assert_allclose(out["q_values"].numpy().mean(-1), value, rtol=1e-5, atol=1e-5)


def test_registry_builds_mlp_and_runs_in_tf_function():
    net = make_network("mlp", A, _space(), head="actor_critic", hidden_sizes=(8,), lstm_size=4)
    assert isinstance(net, MLPNetwork)
    prev_action, env_output = _inputs(np.random.default_rng(7), (3, 2))

    @tf.function
    def run(p, e, s):
        return net(p, e, s, unroll=True)

    out, _ = run(prev_action, env_output, net.initial_state(2))
    eager, _ = net(prev_action, env_output, net.initial_state(2), unroll=True)
    np.testing.assert_allclose(out["policy_logits"], eager["policy_logits"], rtol=1e-5,
                               atol=1e-6)


def test_bad_head_rejected():
    with pytest.raises(ValueError, match="head"):
        MLPNetwork(A, _space(), head="nope")


def test_lstm_first_step_of_an_episode_ignores_the_last_reward_and_action():
    import gymnasium as gym
    import numpy as np
    import tensorflow as tf

    from seed.networks.mlp import MLPNetwork
    from seed.types import EnvOutput

    net = MLPNetwork(3, gym.spaces.Box(0, 1, (4,), np.float32), lstm_size=8)
    obs = tf.ones([2, 4])
    state = tuple(tf.random.normal(s.shape) for s in net.initial_state(2))
    out, _ = net(tf.constant([0, 2]), EnvOutput(tf.constant([1.0, -1.0]),
                                                tf.constant([True, True]), obs), state)
    np.testing.assert_allclose(out["policy_logits"][0], out["policy_logits"][1], atol=1e-6)
    out, _ = net(tf.constant([0, 2]), EnvOutput(tf.constant([1.0, -1.0]),
                                                tf.constant([False, False]), obs), state)
    assert not np.allclose(out["policy_logits"][0], out["policy_logits"][1])
