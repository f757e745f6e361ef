"""DMLabNetwork: shapes, eager variables, unroll == step-by-step, resets on done."""

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from seed.networks import make_network
from seed.networks.dmlab import DMLabNetwork
from seed.types import EnvOutput

A = 9
SMALL = (12, 16, 3)


def _space(shape=SMALL):
    return gym.spaces.Box(0, 255, shape, np.uint8)


def _small_net(head="actor_critic", lstm_size=8):
    return DMLabNetwork(A, _space(), head=head, lstm_size=lstm_size, channels=(4, 8),
                        fc_size=16)


def _inputs(rng, lead, shape=SMALL, done_p=0.0):
    return (rng.integers(0, A, size=lead).astype(np.int32),
            EnvOutput(reward=(rng.normal(size=lead) * 3).astype(np.float32),
                      done=rng.random(lead) < done_p,
                      observation=rng.integers(0, 256, size=lead + shape).astype(np.uint8)))


def test_full_size_network_on_dmlab_frames():
    net = make_network("dmlab", A, _space((72, 96, 3)))
    assert isinstance(net, DMLabNetwork) and net.num_actions == A
    prev_action, env_output = _inputs(np.random.default_rng(0), (2,), (72, 96, 3))
    out, state = net(prev_action, env_output, net.initial_state(2))
    assert set(out) == {"policy_logits", "baseline"}
    assert out["policy_logits"].shape == (2, A) and out["baseline"].shape == (2,)
    assert [tuple(s.shape) for s in state] == [(2, 256), (2, 256)]
    shapes = {tuple(v.shape) for v in net.trainable_variables}
    # 72x96 -> 36x48 -> 18x24 -> 9x12 after three stride-2 pools; 32 channels.
    assert (9 * 12 * 32, 256) in shapes
    # LSTM input: torso 256 + reward 1 + one-hot 9, plus the recurrent 256.
    assert (256 + 1 + A + 256, 4 * 256) in shapes
    assert (256, A) in shapes and (256, 1) in shapes


def test_variables_exist_at_construction():
    net = _small_net()
    n = len(net.trainable_variables)
    assert n > 0 and all(isinstance(v, tf.Variable) for v in net.trainable_variables)
    # Two stacks x (conv + 2 blocks x 2 convs) x (kernel, bias) + FC 2 + LSTM 2 + heads 4.
    assert n == 2 * 5 * 2 + 2 + 2 + 4
    prev_action, env_output = _inputs(np.random.default_rng(1), (3, 2))
    net(prev_action, env_output, net.initial_state(2), unroll=True)
    assert len(net.trainable_variables) == n  # nothing new appeared on use


@pytest.mark.parametrize("head", ["actor_critic", "q"])
def test_unroll_shapes(head):
    net = _small_net(head)
    prev_action, env_output = _inputs(np.random.default_rng(2), (5, 3))
    out, state = net(prev_action, env_output, net.initial_state(3), unroll=True)
    if head == "actor_critic":
        assert out["policy_logits"].shape == (5, 3, A) and out["baseline"].shape == (5, 3)
    else:
        assert set(out) == {"q_values"} and out["q_values"].shape == (5, 3, A)
    assert [tuple(s.shape) for s in state] == [(3, 8), (3, 8)]


def test_unknown_head_is_rejected():
    with pytest.raises(ValueError, match="unknown head"):
        DMLabNetwork(A, _space(), head="pg")


@pytest.mark.parametrize("head", ["actor_critic", "q"])
def test_unroll_equals_single_steps_with_resets(head):
    tf.random.set_seed(0)
    net = _small_net(head)
    rng = np.random.default_rng(3)
    T, B = 6, 4
    prev_action, env_output = _inputs(rng, (T, B), done_p=0.3)
    env_output = env_output._replace(done=env_output.done | np.eye(T, B, dtype=bool))
    state0 = tuple(tf.constant(rng.normal(size=(B, 8)), tf.float32) for _ in range(2))
    out_u, state_u = net(prev_action, env_output, state0, unroll=True)

    state, steps = state0, []
    for t in range(T):
        out, state = net(prev_action[t], EnvOutput(*(x[t] for x in env_output)), state)
        steps.append(out)
    for key in out_u:
        np.testing.assert_allclose(out_u[key], np.stack([o[key] for o in steps]),
                                   rtol=1e-5, atol=1e-5)
    for a, b in zip(state_u, state):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_done_resets_state_and_hides_previous_episode():
    net = _small_net()
    rng = np.random.default_rng(4)
    B = 4
    prev_action, env_output = _inputs(rng, (B,))
    junk = tuple(tf.constant(rng.normal(size=(B, 8)) * 2, tf.float32) for _ in range(2))

    done = env_output._replace(done=np.ones(B, bool))
    out_junk, state_junk = net(prev_action, done, junk)
    # A fresh episode: initial state, and no reward / previous action from the old one.
    fresh = done._replace(reward=np.zeros(B, np.float32))
    out_fresh, state_fresh = net(np.zeros(B, np.int32), fresh, net.initial_state(B))
    np.testing.assert_allclose(out_junk["policy_logits"], out_fresh["policy_logits"], atol=1e-6)
    for a, b in zip(state_junk, state_fresh):
        np.testing.assert_allclose(a, b, atol=1e-6)

    # Without done the state, reward and previous action all matter.
    cont = env_output._replace(done=np.zeros(B, bool))
    base, _ = net(prev_action, cont, junk)
    other_state, _ = net(prev_action, cont, net.initial_state(B))
    other_action, _ = net((prev_action + 1) % A, cont, junk)
    other_reward, _ = net(prev_action, cont._replace(reward=-cont.reward), junk)
    for other in (other_state, other_action, other_reward):
        assert not np.allclose(base["policy_logits"], other["policy_logits"], atol=1e-5)


def test_works_inside_tf_function():
    net = _small_net()
    prev_action, env_output = _inputs(np.random.default_rng(5), (3, 2), done_p=0.5)
    eager, _ = net(prev_action, env_output, net.initial_state(2), unroll=True)

    @tf.function
    def run(prev_action, env_output, state):
        return net(prev_action, env_output, state, unroll=True)

    traced, _ = run(prev_action, EnvOutput(*env_output), net.initial_state(2))
    np.testing.assert_allclose(eager["baseline"], traced["baseline"], rtol=1e-5, atol=1e-5)


def test_kernel_init_reaches_every_torso_layer():
    # Glorot's limit on the first conv (3x3, 3 -> 4 channels) is sqrt(6 / (27 + 36)) = 0.31;
    # He's is sqrt(6 / 27) = 0.47: the largest of 108 draws tells them apart.
    net = DMLabNetwork(A, _space(), lstm_size=8, channels=(4, 8), fc_size=16,
                       kernel_init="glorot_uniform")
    he = DMLabNetwork(A, _space(), lstm_size=8, channels=(4, 8), fc_size=16,
                      kernel_init="he_uniform")
    assert he._torso._fc.kernel_init == "he_uniform"
    first = net._torso._stacks[0]._conv.kernel.numpy()
    assert np.abs(first).max() <= np.sqrt(6 / (27 + 36)) + 1e-7
    fc = net._torso._fc
    assert fc.kernel_init == "glorot_uniform"
    assert all(c.kernel_init == "glorot_uniform" for s in net._torso._stacks
               for block in s._blocks for c in block)
    assert _small_net()._torso._fc.kernel_init == "glorot_uniform"  # the default, upstream's
