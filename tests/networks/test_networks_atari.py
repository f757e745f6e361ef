"""Atari networks and the frame stack in their core state."""

import numpy as np
import pytest
import tensorflow as tf
from gymnasium import spaces

from seed.networks import frame_stack, make_network
from seed.networks.atari import ImpalaResNet, ImpalaResNetTorso, NatureCNN
from seed.types import EnvOutput

# Small frames keep the tests fast; 36x36 is about the least the Nature CNN's valid
# convolutions accept (36 -> 8 -> 3 -> 1).
SPACE = spaces.Box(0, 255, (36, 36, 1), np.uint8)
A = 5


def _small(cls, **kwargs):
    if cls is ImpalaResNet:
        kwargs.setdefault("channels", (4, 8))
        kwargs.setdefault("fc_size", 32)
    kwargs.setdefault("head_hidden", 16)
    return cls(A, SPACE, **kwargs)


def _inputs(rng, steps, batch, done=None):
    frames = rng.integers(0, 256, (steps, batch) + SPACE.shape, dtype=np.uint8)
    if done is None:
        done = np.zeros((steps, batch), bool)
    return (tf.constant(rng.integers(0, A, (steps, batch)), tf.int32),
            EnvOutput(tf.constant(rng.normal(size=(steps, batch)), tf.float32),
                      tf.constant(done), tf.constant(frames)))


# ----- frame_stack helpers, checked on 1x1 "frames" whose single pixel is a label.

def _frame(*labels):
    return tf.constant(np.array(labels, np.uint8).reshape(-1, 1, 1, 1))


def test_push_frame_shifts_oldest_out():
    stack = tf.constant(np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.uint8).reshape(2, 1, 1, 4))
    new = frame_stack.push_frame(stack, _frame(9, 10), tf.constant([False, False]))
    np.testing.assert_array_equal(new.numpy().reshape(2, 4), [[2, 3, 4, 9], [6, 7, 8, 10]])


def test_push_frame_resets_where_done():
    stack = tf.constant(np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.uint8).reshape(2, 1, 1, 4))
    new = frame_stack.push_frame(stack, _frame(9, 10), tf.constant([True, False]))
    np.testing.assert_array_equal(new.numpy().reshape(2, 4), [[0, 0, 0, 9], [6, 7, 8, 10]])


def test_stack_frames_over_time_with_episode_boundary():
    stack = frame_stack.initial_frame_stack(1, (1, 1, 1), 3)
    frames = tf.constant(np.arange(1, 6, dtype=np.uint8).reshape(5, 1, 1, 1, 1))
    done = tf.constant([[False], [False], [False], [True], [False]])
    stacked, last = frame_stack.stack_frames(frames, stack, done)
    want = [[0, 0, 1], [0, 1, 2], [1, 2, 3], [0, 0, 4], [0, 4, 5]]
    np.testing.assert_array_equal(stacked.numpy().reshape(5, 3), want)
    np.testing.assert_array_equal(last.numpy().reshape(3), [0, 4, 5])


def _stack_by_pushing(frames, stack, done):
    """The frame-stack rule one step at a time in NumPy: where done, clear; drop the
    oldest frame, append the new one."""
    channels = frames.shape[-1]
    stack, out = stack.copy(), []
    for t in range(frames.shape[0]):
        stack = np.where(done[t][:, None, None, None], 0, stack)
        stack = np.concatenate([stack[..., channels:], frames[t]], axis=-1)
        out.append(stack)
    return np.stack(out), stack


@pytest.mark.parametrize("steps,size,channels", [(1, 4, 1), (3, 4, 1), (21, 4, 1), (5, 2, 3),
                                                 (2, 4, 3)])
def test_stack_frames_equals_pushing_one_frame_at_a_time(steps, size, channels):
    rng = np.random.default_rng(steps * 10 + size + channels)
    batch = 6
    frames = rng.integers(1, 256, (steps, batch, 2, 3, channels), dtype=np.uint8)
    stack = rng.integers(1, 256, (batch, 2, 3, size * channels), dtype=np.uint8)
    done = rng.random((steps, batch)) < 0.3
    want, want_last = _stack_by_pushing(frames, stack, done)
    stacked, last = frame_stack.stack_frames(tf.constant(frames), tf.constant(stack),
                                             tf.constant(done))
    np.testing.assert_array_equal(stacked.numpy(), want)
    np.testing.assert_array_equal(last.numpy(), want_last)


def test_stack_frames_multichannel():
    stack = frame_stack.initial_frame_stack(1, (1, 1, 2), 2)
    assert stack.shape == (1, 1, 1, 4)
    frames = tf.constant(np.array([[1, 2], [3, 4]], np.uint8).reshape(2, 1, 1, 1, 2))
    stacked, _ = frame_stack.stack_frames(frames, stack, tf.zeros([2, 1], tf.bool))
    np.testing.assert_array_equal(stacked.numpy().reshape(2, 4), [[0, 0, 1, 2], [1, 2, 3, 4]])


# ----- networks.

@pytest.mark.parametrize("cls", [NatureCNN, ImpalaResNet])
@pytest.mark.parametrize("head", ["actor_critic", "q"])
@pytest.mark.parametrize("lstm_size", [0, 8])
def test_shapes_single_step_and_unroll(cls, head, lstm_size):
    net = _small(cls, head=head, lstm_size=lstm_size)
    assert net.num_actions == A
    rng = np.random.default_rng(0)
    state = net.initial_state(2)
    assert state[0].shape == (2, 36, 36, 4) and state[0].dtype == tf.uint8
    assert len(state) == (3 if lstm_size else 1)
    prev_action, env_output = _inputs(rng, 3, 2)
    step_in = tf.nest.map_structure(lambda x: x[0], (prev_action, env_output))
    out, new_state = net(*step_in, state)
    out_u, state_u = net(prev_action, env_output, state, unroll=True)
    names = {"actor_critic": {"policy_logits", "baseline"}, "q": {"q_values"}}[head]
    assert set(out) == names and set(out_u) == names
    if head == "actor_critic":
        assert out["policy_logits"].shape == (2, A) and out["baseline"].shape == (2,)
        assert out_u["policy_logits"].shape == (3, 2, A) and out_u["baseline"].shape == (3, 2)
    else:
        assert out["q_values"].shape == (2, A) and out_u["q_values"].shape == (3, 2, A)
    for a, b in zip(new_state, state):
        assert a.shape == b.shape and a.dtype == b.dtype
    for a, b in zip(state_u, state):
        assert a.shape == b.shape and a.dtype == b.dtype


@pytest.mark.parametrize("cls", [NatureCNN, ImpalaResNet])
@pytest.mark.parametrize("lstm_size", [0, 8])
def test_unroll_equals_step_by_step(cls, lstm_size):
    net = _small(cls, lstm_size=lstm_size)
    rng = np.random.default_rng(1)
    done = np.array([[True, False], [False, True], [False, False]])
    prev_action, env_output = _inputs(rng, 3, 2, done)
    state0 = net.initial_state(2)
    out_u, state_u = net(prev_action, env_output, state0, unroll=True)
    state = state0
    for t in range(3):
        out, state = net(*tf.nest.map_structure(lambda x: x[t], (prev_action, env_output)),
                         state)
        for k in out:
            np.testing.assert_allclose(out[k].numpy(), out_u[k][t].numpy(), rtol=1e-5,
                                       atol=1e-5)
    for a, b in zip(state, state_u):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-5)


def test_frame_stack_in_state_shifts_and_resets():
    net = _small(NatureCNN)
    rng = np.random.default_rng(2)
    frames = rng.integers(1, 256, (3, 1) + SPACE.shape, dtype=np.uint8)
    done = np.array([[False], [False], [True]])
    env_output = EnvOutput(tf.zeros([3, 1]), tf.constant(done), tf.constant(frames))
    state = net.initial_state(1)
    stacks = []
    for t in range(3):
        _, state = net(tf.zeros([1], tf.int32),
                       tf.nest.map_structure(lambda x: x[t], env_output), state)
        stacks.append(state[0].numpy()[0])
    zeros = np.zeros(SPACE.shape, np.uint8)
    np.testing.assert_array_equal(stacks[0], np.concatenate([zeros] * 3 + [frames[0, 0]], -1))
    np.testing.assert_array_equal(
        stacks[1], np.concatenate([zeros] * 2 + [frames[0, 0], frames[1, 0]], -1))
    # Step 2 starts an episode: the stack holds only its first frame.
    np.testing.assert_array_equal(stacks[2], np.concatenate([zeros] * 3 + [frames[2, 0]], -1))


@pytest.mark.parametrize("lstm_size", [0, 8])
def test_nothing_crosses_an_episode_boundary(lstm_size):
    """From a done step on, outputs do not depend on anything before it."""
    net = _small(ImpalaResNet, lstm_size=lstm_size)
    rng = np.random.default_rng(3)
    done = np.array([[False], [False], [True], [False]])
    prev_a, env_a = _inputs(rng, 4, 1, done)
    prev_b, env_b = _inputs(rng, 4, 1, done)
    # Same from step 2 on (including its prev action and reward), different before it.
    prev_b = tf.concat([prev_b[:2], prev_a[2:]], 0)
    env_b = EnvOutput(*(tf.concat([b[:2], a[2:]], 0) for a, b in zip(env_a, env_b)))
    assert not np.array_equal(env_a.observation[:2].numpy(), env_b.observation[:2].numpy())
    out_a, state_a = net(prev_a, env_a, net.initial_state(1), unroll=True)
    out_b, state_b = net(prev_b, env_b, net.initial_state(1), unroll=True)
    assert not np.allclose(out_a["policy_logits"][:2], out_b["policy_logits"][:2])
    np.testing.assert_allclose(out_a["policy_logits"][2:], out_b["policy_logits"][2:],
                               rtol=1e-6, atol=1e-6)
    for a, b in zip(state_a, state_b):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-6)


def test_dueling_head_mean_q_is_the_value():
    net = _small(NatureCNN, head="q")
    # The value stream, fed the same features: mean over actions of Q is V.
    features = tf.random.normal([4, net._torso.fc_size])
    out = net._head(features)
    value = features
    for layer in net._value:
        value = layer(value)
    np.testing.assert_allclose(tf.reduce_mean(out["q_values"], -1).numpy(),
                               tf.squeeze(value, -1).numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("head", ["actor_critic", "q"])
def test_variables_exist_at_construction_and_all_get_gradients(head):
    net = _small(ImpalaResNet, head=head, lstm_size=8)
    variables = net.trainable_variables
    count = len(variables)
    # 2 stacks x 5 convs x (kernel, bias) + FC 2 + LSTM 2 + head.
    head_vars = 4 if head == "actor_critic" else 7
    assert count == 20 + 2 + 2 + head_vars
    rng = np.random.default_rng(4)
    prev_action, env_output = _inputs(rng, 3, 2, np.array([[1, 0], [0, 0], [0, 1]], bool))
    with tf.GradientTape() as tape:
        out, _ = net(prev_action, env_output, net.initial_state(2), unroll=True)
        loss = sum(tf.reduce_sum(v ** 2) for v in out.values())
    grads = tape.gradient(loss, variables)
    assert len(net.trainable_variables) == count
    assert all(g is not None for g in grads)


def test_traces_in_tf_function():
    net = _small(NatureCNN, lstm_size=8)
    rng = np.random.default_rng(5)
    prev_action, env_output = _inputs(rng, 3, 2)
    eager, _ = net(prev_action, env_output, net.initial_state(2), unroll=True)
    traced, _ = tf.function(lambda p, e, s: net(p, e, s, unroll=True))(
        prev_action, env_output, net.initial_state(2))
    np.testing.assert_allclose(eager["policy_logits"], traced["policy_logits"], rtol=1e-5,
                               atol=1e-5)


def test_registry_and_bad_arguments():
    space = spaces.Box(0, 255, (84, 84, 1), np.uint8)
    net = make_network("nature_cnn", 6, space)
    assert net.initial_state(3)[0].shape == (3, 84, 84, 4)
    n_params = sum(int(np.prod(v.shape)) for v in net.trainable_variables)
    # Nature DQN: 8*8*4*32+32 + 4*4*32*64+64 + 3*3*64*64+64 + 3136*512+512, heads 512*6+6, 513.
    assert n_params == (8 * 8 * 4 * 32 + 32 + 4 * 4 * 32 * 64 + 64 + 3 * 3 * 64 * 64 + 64
                        + 3136 * 512 + 512 + 512 * 6 + 6 + 512 + 1)
    with pytest.raises(ValueError, match="head"):
        NatureCNN(6, space, head="dqn")
    with pytest.raises(ValueError, match="H, W, C"):
        NatureCNN(6, spaces.Box(0, 255, (84, 84), np.uint8))


def test_torso_reusable_on_rgb_frames():
    torso = ImpalaResNetTorso(channels=(4, 8, 8), fc_size=16)
    out = torso(tf.random.uniform([3, 24, 32, 3]))
    assert out.shape == (3, 16)
    assert np.all(out.numpy() >= 0)  # ends in a ReLU
    # 3 stacks x 5 convs x 2 + FC 2.
    assert len(torso.trainable_variables) == 32


def test_traces_once_for_any_batch_size():
    """SEED's inference batches vary in size: one trace with a None batch axis serves all."""
    net = _small(ImpalaResNet, head="q", lstm_size=8)
    sig = (tf.TensorSpec([None], tf.int32),
           EnvOutput(tf.TensorSpec([None]), tf.TensorSpec([None], tf.bool),
                     tf.TensorSpec((None,) + SPACE.shape, tf.uint8)),
           (tf.TensorSpec([None, 36, 36, 4], tf.uint8), tf.TensorSpec([None, 8]),
            tf.TensorSpec([None, 8])))
    step = tf.function(lambda p, e, s: net(p, e, s), input_signature=sig)
    rng = np.random.default_rng(6)
    for batch in (1, 3):
        prev_action, env_output = _inputs(rng, 1, batch)
        inputs = tf.nest.map_structure(lambda x: x[0], (prev_action, env_output))
        out, state = step(*inputs, net.initial_state(batch))
        eager, _ = net(*inputs, net.initial_state(batch))
        assert out["q_values"].shape == (batch, A) and state[0].shape == (batch, 36, 36, 4)
        np.testing.assert_allclose(out["q_values"], eager["q_values"], rtol=1e-5, atol=1e-5)
