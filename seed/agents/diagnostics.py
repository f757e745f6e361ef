"""Learning diagnostics, computed inside a train step and logged every interval.

They answer, from ``metrics.csv`` alone, whether a flat reward curve has a
policy that moves at all:

* ``update_ratio``: ``||theta_after - theta_before|| / ||theta_before||`` over
  the trainable variables, the relative size of one optimizer step. An
  optimizer whose settings do not fit the loss's scale shows here first
  (issue 13: 1.7e-4 where the intended update was 30x larger);
* ``explained_variance``: ``1 - Var(target - prediction) / Var(target)`` of the
  value (baseline or Q) against its learning target: 0 is a value that knows
  nothing, 1 a perfect one;
* ``dead_relu_<i>_<layer>``: the share of the ``i``-th ReLU layer's units that
  are zero on every row of the batch (a convolution's unit is a channel, dead
  when zero at every position). A torso whose units die stops seeing the
  observation, and then no policy can follow it.

ReLU outputs are collected with
:func:`seed.networks.relu_recording.recording_relu_outputs` around the network
call.
"""

from __future__ import annotations

import tensorflow as tf

from seed.networks.relu_recording import recording_relu_outputs


def dead_relu_names(outputs) -> list[str]:
    """Column names ``dead_relu_<i>_<layer>`` for recorded ``(name, y)`` pairs, in call order."""
    return [f"dead_relu_{i}_{name}" for i, (name, _) in enumerate(outputs)]


def dead_relu_fractions(outputs) -> dict:
    """``{column: share of units zero on every row}`` for recorded ``(name, y)`` pairs.

    A unit is a feature of a dense layer's ``[N, F]`` output, a channel of a
    convolution's ``[N, H, W, C]`` (dead when zero at every position of every row).
    """
    result = {}
    for column, (_, y) in zip(dead_relu_names(outputs), outputs):
        alive = tf.reduce_any(y > 0, axis=list(range(len(y.shape) - 1)))
        result[column] = 1.0 - tf.reduce_mean(tf.cast(alive, tf.float32))
    return result


def explained_variance(targets, predictions):
    """``1 - Var(targets - predictions) / Var(targets)``; 0 where the targets do not vary."""
    targets = tf.reshape(tf.cast(targets, tf.float32), [-1])
    predictions = tf.reshape(tf.cast(predictions, tf.float32), [-1])
    var = tf.math.reduce_variance(targets)
    ratio = tf.math.reduce_variance(targets - predictions) / tf.maximum(var, 1e-12)
    return tf.where(var > 1e-12, 1.0 - ratio, 0.0)


def snapshot(variables):
    """Copies of the variables' values, read before an optimizer step changes them."""
    return [tf.identity(v) for v in variables]


def update_ratio(before, variables):
    """``||after - before|| / ||before||`` over a list of variables and their snapshot."""
    delta = tf.linalg.global_norm([v - b for v, b in zip(variables, before)])
    return delta / tf.maximum(tf.linalg.global_norm(before), 1e-12)


def relu_layer_names(network, dummy_step) -> list[str]:
    """The ``dead_relu_*`` columns of ``network``: ``dummy_step()`` calls it once, recorded."""
    with recording_relu_outputs() as outputs:
        dummy_step()
    return dead_relu_names(outputs)
