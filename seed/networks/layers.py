"""Small layers written on ``tf.Module`` with plain ``tf.Variable`` weights.

Keras 3 layers are not ``tf.Module``s, so a ``tf.Module`` holding them does not
list their weights in ``trainable_variables``; these layers are tracked the
ordinary ``tf.Module`` way. Each creates its weights on its first call (the
input's last axis gives the fan-in): call a model once eagerly, on dummy
input, before tracing it in ``tf.function``. Kernels use Glorot-uniform
initialisation (Keras' default), biases start at zero (the LSTM's forget gate
at one).

The initialisers and the LSTM step are also plain functions, for networks that
keep their own weights (:mod:`seed.networks.mlp`).
"""

from __future__ import annotations

import math

import tensorflow as tf


def glorot_uniform(shape, fan_in: int, fan_out: int):
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    return tf.random.uniform(shape, -limit, limit, tf.float32)


def lstm_bias(units: int):
    """Initial LSTM bias ``[4 * units]``: gates i, f, g, o, the forget gate's at 1."""
    return tf.concat([tf.zeros([units]), tf.ones([units]), tf.zeros([2 * units])], 0)


def lstm_step(x, state, kernel, bias):
    """One LSTM step: ``x`` [B, in], ``state`` ``(h, c)`` -> ``(h, (h, c))``.

    ``kernel`` is ``[in + units, 4 * units]`` over ``concat(x, h)``, gates i, f, g, o.
    """
    h, c = state
    z = tf.matmul(tf.concat([x, h], -1), kernel) + bias
    i, f, g, o = tf.split(z, 4, axis=-1)
    c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
    h = tf.sigmoid(o) * tf.tanh(c)
    return h, (h, c)


class _Layer(tf.Module):
    """A layer whose ``kernel`` and ``bias`` are made on its first call (see :meth:`_build`)."""

    def __init__(self, activation=None, name: str | None = None):
        super().__init__(name=name)
        self.activation = activation
        self.kernel = None
        self.bias = None

    def _build(self, kernel_shape, fan_in: int, fan_out: int, bias=None):
        """Glorot-uniform ``kernel``, then ``bias`` from its initial value (none if None)."""
        with self.name_scope:
            self.kernel = tf.Variable(glorot_uniform(kernel_shape, fan_in, fan_out),
                                      name="kernel")
            if bias is not None:
                self.bias = tf.Variable(bias, name="bias")

    def _activate(self, y):
        return self.activation(y) if self.activation else y


class Dense(_Layer):
    """``x @ kernel + bias`` on ``[N, in]``, optional activation."""

    def __init__(self, units: int, activation=None, use_bias: bool = True,
                 name: str | None = None):
        super().__init__(activation, name)
        self.units = units
        self.use_bias = use_bias

    def __call__(self, x):
        if self.kernel is None:
            fan_in = int(x.shape[-1])
            self._build([fan_in, self.units], fan_in, self.units,
                        tf.zeros([self.units]) if self.use_bias else None)
        y = tf.matmul(x, self.kernel)
        if self.use_bias:
            y = y + self.bias
        return self._activate(y)


class Conv2D(_Layer):
    """2-D convolution over NHWC input, optional activation."""

    def __init__(self, filters: int, kernel_size: int, stride: int = 1, padding: str = "SAME",
                 activation=None, name: str | None = None):
        super().__init__(activation, name)
        self.filters = filters
        self.kernel_size = kernel_size
        self.stride, self.padding = stride, padding

    def __call__(self, x):
        if self.kernel is None:
            in_channels = int(x.shape[-1])
            k = self.kernel_size
            self._build([k, k, in_channels, self.filters], k * k * in_channels,
                        k * k * self.filters, tf.zeros([self.filters]))
        return self._activate(tf.nn.conv2d(x, self.kernel, self.stride, self.padding)
                              + self.bias)


class LSTMCell(_Layer):
    """LSTM cell (gates i, f, g, o; forget-gate bias starts at 1), state ``(h, c)``."""

    def __init__(self, units: int, name: str | None = None):
        super().__init__(name=name)
        self.units = units

    def zero_state(self, batch_size):
        return (tf.zeros([batch_size, self.units]), tf.zeros([batch_size, self.units]))

    def __call__(self, x, state):
        if self.kernel is None:
            fan_in = int(x.shape[-1]) + self.units
            self._build([fan_in, 4 * self.units], fan_in, 4 * self.units,
                        lstm_bias(self.units))
        return lstm_step(x, state, self.kernel, self.bias)
