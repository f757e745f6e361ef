"""Small layers written on ``tf.Module`` with plain ``tf.Variable`` weights.

Keras 3 layers are not ``tf.Module``s, so a ``tf.Module`` holding them does not
list their weights in ``trainable_variables``; these layers are tracked the
ordinary ``tf.Module`` way. Each creates its weights on its first call (the
input's last axis gives the fan-in): call a model once eagerly, on dummy
input, before tracing it in ``tf.function``. Kernels use Glorot-uniform
initialisation (Keras' default), biases start at zero.
"""

from __future__ import annotations

import math

import tensorflow as tf


def glorot_uniform(shape, fan_in: int, fan_out: int):
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    return tf.random.uniform(shape, -limit, limit, tf.float32)


class Dense(tf.Module):
    """``x @ kernel + bias`` on ``[N, in]``, optional activation."""

    def __init__(self, units: int, activation=None, use_bias: bool = True,
                 name: str | None = None):
        super().__init__(name=name)
        self.units = units
        self.activation = activation
        self.use_bias = use_bias
        self.kernel = None
        self.bias = None

    def __call__(self, x):
        if self.kernel is None:
            fan_in = int(x.shape[-1])
            with self.name_scope:
                self.kernel = tf.Variable(glorot_uniform([fan_in, self.units], fan_in,
                                                         self.units), name="kernel")
                if self.use_bias:
                    self.bias = tf.Variable(tf.zeros([self.units]), name="bias")
        y = tf.matmul(x, self.kernel)
        if self.use_bias:
            y = y + self.bias
        return self.activation(y) if self.activation else y


class Conv2D(tf.Module):
    """2-D convolution over NHWC input, optional activation."""

    def __init__(self, filters: int, kernel_size: int, stride: int = 1, padding: str = "SAME",
                 activation=None, name: str | None = None):
        super().__init__(name=name)
        self.filters = filters
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.activation = activation
        self.kernel = None
        self.bias = None

    def __call__(self, x):
        if self.kernel is None:
            in_channels = int(x.shape[-1])
            k = self.kernel_size
            with self.name_scope:
                self.kernel = tf.Variable(
                    glorot_uniform([k, k, in_channels, self.filters], k * k * in_channels,
                                   k * k * self.filters), name="kernel")
                self.bias = tf.Variable(tf.zeros([self.filters]), name="bias")
        y = tf.nn.conv2d(x, self.kernel, self.stride, self.padding) + self.bias
        return self.activation(y) if self.activation else y


class LSTMCell(tf.Module):
    """LSTM cell (gates i, f, g, o; forget-gate bias starts at 1), state ``(h, c)``."""

    def __init__(self, units: int, name: str | None = None):
        super().__init__(name=name)
        self.units = units
        self.kernel = None
        self.bias = None

    def zero_state(self, batch_size):
        return (tf.zeros([batch_size, self.units]), tf.zeros([batch_size, self.units]))

    def __call__(self, x, state):
        h, c = state
        if self.kernel is None:
            fan_in = int(x.shape[-1]) + self.units
            with self.name_scope:
                self.kernel = tf.Variable(
                    glorot_uniform([fan_in, 4 * self.units], fan_in, 4 * self.units),
                    name="kernel")
                self.bias = tf.Variable(
                    tf.concat([tf.zeros([self.units]), tf.ones([self.units]),
                               tf.zeros([2 * self.units])], 0), name="bias")
        z = tf.matmul(tf.concat([x, h], -1), self.kernel) + self.bias
        i, f, g, o = tf.split(z, 4, axis=-1)
        c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
        h = tf.sigmoid(o) * tf.tanh(c)
        return h, (h, c)
