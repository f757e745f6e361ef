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
* ``torso_output_mean``: the mean activation of the torso's output (the last ReLU
  layer); a value that keeps growing saturates a recurrent core (issue 32);
* ``dead_relu_<i>_<layer>``: the share of the ``i``-th ReLU layer's units that
  are zero on every row of the batch (a convolution's unit is a channel, dead
  when zero at every position). A torso whose units die stops seeing the
  observation, and then no policy can follow it.

ReLU outputs are collected with
:func:`seed.networks.relu_recording.recording_relu_outputs` around the network
call.

``update_ratio`` and the dead-unit shares are not free: a copy of every trainable
variable and reductions over every ReLU output, ~1-1.5 ms of a 28 ms Pong train
step on a 2-core CPU (issue 16), and at batch 32 ~13% of a step (70 of 550 ms of
one thread's CPU, issue 24). A :class:`Sampler` picks the steps that compute them:
the first, then one after at least ``SAMPLE_INTERVAL_S`` *and* ``SAMPLE_MIN_STEPS``
steps, or after ``SAMPLE_MAX_GAP_S`` whatever the steps. A time interval alone
diagnosed every third of Pong's 217 ms batch-32 steps (issue 24), every step of a
step slower than the interval; the step count holds their share of the training time
near 1 / ``SAMPLE_MIN_STEPS`` of the diagnosed step's extra cost, and the gap keeps at
least one diagnosed step in a 5 s log interval of slow steps. The optimizer step is the
same with or without them; :func:`sampled` gives what a diagnosed step adds to its metrics.
"""

from __future__ import annotations

import time

import tensorflow as tf

#: A diagnosed train step needs this many seconds and this many steps since the last one
#: (the first step always is), or this many seconds whatever the steps.
SAMPLE_INTERVAL_S = 0.5
SAMPLE_MIN_STEPS = 20
SAMPLE_MAX_GAP_S = 4.0


class Sampler:
    """Says whether the next train step computes the costly diagnostics: the first call,
    then once ``interval_s`` have passed and ``min_steps`` steps were not diagnosed since
    the last step that was, or once ``max_gap_s`` have passed."""

    def __init__(self, interval_s: float = SAMPLE_INTERVAL_S,
                 min_steps: int = SAMPLE_MIN_STEPS, max_gap_s: float = SAMPLE_MAX_GAP_S,
                 clock=time.monotonic):
        self.interval_s = float(interval_s)
        self.min_steps = int(min_steps)
        self.max_gap_s = float(max_gap_s)
        self._clock = clock
        self._last: float | None = None
        self._skipped = 0  # steps not diagnosed since the last one that was

    def due(self) -> bool:
        now = self._clock()
        if self._last is not None:
            waited = now - self._last
            if waited < self.max_gap_s and (waited < self.interval_s
                                            or self._skipped < self.min_steps):
                self._skipped += 1
                return False
        self._last = now
        self._skipped = 0
        return True

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


def torso_output_mean(outputs) -> dict:
    """``{"torso_output_mean": ...}``: the mean of the last recorded ReLU layer's output (the
    torso's, which a recurrent core or the heads read), over the batch; ``{}`` if none.

    A torso whose output grows without bound saturates an LSTM's gates, whose state then no
    longer follows the observation (issue 32: DMLab's fc output grew from about 5 to about
    180 in 650 updates, its LSTM went flat, and with it the value)."""
    if not outputs:
        return {}
    return {"torso_output_mean": tf.reduce_mean(tf.cast(outputs[-1][1], tf.float32))}


def sampled(before, variables, relu_outputs) -> dict:
    """The costly diagnostics of a sampled step: ``update_ratio`` of ``variables`` from their
    snapshot ``before``, the ``dead_relu_*`` shares of the recorded ReLU outputs and the
    torso output's mean."""
    return {"update_ratio": update_ratio(before, variables),
            **dead_relu_fractions(relu_outputs), **torso_output_mean(relu_outputs)}
