"""The contract every network follows, so agents and runtimes can use any of them.

A network is a ``tf.Module`` with::

    num_actions: int
    initial_state(batch_size) -> tuple of tf.Tensor  # () when stateless
    __call__(prev_action, env_output, core_state, unroll=False)
        -> (outputs: dict[str, tf.Tensor], new_core_state)

Shapes: single step (``unroll=False``) inputs are ``[B, ...]``; with
``unroll=True`` they are time-major ``[T, B, ...]`` and ``core_state`` is the
state before step 0 (``[B, ...]``). ``env_output`` is a
:class:`seed.types.EnvOutput` whose observation is in the *wire* form the env
adapter produces (uint8 frames, bit-packed planes, ...): any decoding
(unpacking, scaling, frame stacking) happens inside the network.

Layers come from :mod:`seed.networks.layers` (plain ``tf.Variable``s): under
Keras 3 a ``tf.Module`` does not track Keras layers, so their weights would be
missing from ``trainable_variables`` (and from IMPALA parameter pulls).

``done[t]`` marks ``observation[t]`` as the first of an episode: the network
must reset its recurrent state (and any frame stack, which belongs to the core
state) to ``initial_state`` before processing that step.

Actor-critic networks return ``{'policy_logits': [.., A], 'baseline': [..]}``;
Q networks return ``{'q_values': [.., A]}``. Action selection lives in the
agent (:mod:`seed.agents`), not in the network.
"""

from __future__ import annotations

import tensorflow as tf

from seed.types import EnvOutput


def reset_where_done(done, state, initial):
    """Replace the rows of ``state`` (nest of [B, ...]) where ``done`` [B] by ``initial``."""
    def pick(s, i):
        mask = tf.reshape(done, [-1] + [1] * (len(s.shape) - 1))
        return tf.where(mask, tf.cast(i, s.dtype), s)
    return tf.nest.map_structure(pick, state, initial)


def unroll_core(step_fn, inputs, done, state, initial_state_fn):
    """Run ``step_fn(x_t, state) -> (y_t, state)`` over time-major ``inputs`` [T, B, ...].

    Resets the state where ``done[t]`` before step ``t``. Returns (``[T, B, ...]``
    outputs, final state). Written as a Python loop over a static T so that it
    traces into a plain graph inside ``tf.function``.
    """
    outputs = []
    steps = inputs.shape[0]
    if steps is None:
        raise ValueError("unroll_core needs a static time dimension")
    batch = tf.shape(done)[1]
    init = initial_state_fn(batch)
    for t in range(steps):
        state = reset_where_done(done[t], state, init)
        y, state = step_fn(inputs[t], state)
        outputs.append(y)
    return tf.stack(outputs, 0), state


def at_least_one(name: str, value) -> int:
    """``int(value)``; ValueError naming ``name`` if it is below 1."""
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    return int(value)


def frame_spec(observation_space):
    """``(shape, dtype, scale)`` of ``[H, W, C]`` image observations; uint8 scales by 1/255."""
    shape = tuple(int(d) for d in observation_space.shape)
    if len(shape) != 3:
        raise ValueError(f"expected [H, W, C] frames, got observation shape {shape}")
    dtype = tf.as_dtype(observation_space.dtype)
    return shape, dtype, (1.0 / 255.0 if dtype == tf.uint8 else 1.0)


def call_step_or_unroll(unroll_fn, prev_action, env_output, core_state, unroll):
    """The contract's ``__call__`` on top of ``unroll_fn``, which takes time-major inputs.

    ``unroll_fn(prev_action, env_output, core_state) -> (outputs, state)`` sees
    ``[T, B, ...]`` inputs and an :class:`EnvOutput`; a single step (``unroll=False``)
    is run as an unroll of length 1 and its outputs come back as ``[B, ...]``.
    """
    env_output = EnvOutput(*env_output)
    if not unroll:
        prev_action, env_output = tf.nest.map_structure(
            lambda x: tf.expand_dims(x, 0), (prev_action, env_output))
        outputs, state = unroll_fn(prev_action, env_output, core_state)
        return tf.nest.map_structure(lambda x: tf.squeeze(x, 0), outputs), state
    return unroll_fn(prev_action, env_output, core_state)


def batch_apply(fn, x):
    """Apply ``fn`` (on ``[N, ...]``) to time-major ``x`` [T, B, ...] with time folded into batch.

    Every tensor of ``fn``'s output nest (``[T*B, ...]``) comes back as ``[T, B, ...]``.
    """
    x = tf.convert_to_tensor(x)
    time_batch = tf.shape(x)[:2]
    y = fn(tf.reshape(x, tf.concat([[-1], tf.shape(x)[2:]], 0)))
    return tf.nest.map_structure(
        lambda v: tf.reshape(v, tf.concat([time_batch, tf.shape(v)[1:]], 0)), y)


def core_input(features, reward, prev_action, done, num_actions: int):
    """A recurrent core's input: ``concat(features, clip(reward, -1, 1), one_hot(prev_action))``.

    Where ``done`` the reward and previous action (they belong to the episode that
    ended) are zeroed, so nothing of a finished episode reaches the next one.
    """
    reward = tf.clip_by_value(tf.cast(reward, tf.float32), -1.0, 1.0)
    action = tf.one_hot(tf.cast(prev_action, tf.int32), num_actions)
    keep = 1.0 - tf.cast(done, tf.float32)
    return tf.concat([features, (reward * keep)[..., None], action * keep[..., None]], -1)


def create_variables(network, observation_shape, observation_dtype):
    """Call ``network`` once on a dummy single step of one env, so every variable exists."""
    network(tf.zeros([1], tf.int32),
            EnvOutput(tf.zeros([1], tf.float32), tf.zeros([1], tf.bool),
                      tf.zeros((1,) + tuple(observation_shape), observation_dtype)),
            network.initial_state(1))
