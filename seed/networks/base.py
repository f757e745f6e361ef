"""The contract every network follows, so agents and runtimes can use any of them.

A network is a ``tf.Module`` (Keras layers inside are fine) with::

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

``done[t]`` marks ``observation[t]`` as the first of an episode: the network
must reset its recurrent state (and any frame stack, which belongs to the core
state) to ``initial_state`` before processing that step.

Actor-critic networks return ``{'policy_logits': [.., A], 'baseline': [..]}``;
Q networks return ``{'q_values': [.., A]}``. Action selection lives in the
agent (:mod:`seed.agents`), not in the network.
"""

from __future__ import annotations

import tensorflow as tf


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
