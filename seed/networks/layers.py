"""Small layers written on ``tf.Module`` with plain ``tf.Variable`` weights.

Keras 3 layers are not ``tf.Module``s, so a ``tf.Module`` holding them does not
list their weights in ``trainable_variables``; these layers are tracked the
ordinary ``tf.Module`` way. Each creates its weights on its first call (the
input's last axis gives the fan-in): call a model once eagerly, on dummy
input, before tracing it in ``tf.function``.

Initialisation (biases start at zero, the LSTM's forget gate at one):

* a layer followed by a ReLU: He-uniform, variance ``2 / fan_in`` (He et al.
  2015), so activations keep their scale through the torso;
* a linear output: LeCun-uniform, variance ``1 / fan_in`` (IMPALA's layers used
  std ``1 / sqrt(fan_in)``), times ``init_scale``: the policy layers use 0.01, so
  the first policy is near uniform (Andrychowicz et al. 2021, "What matters in
  on-policy RL", Sec. 3.2);
* the LSTM: Glorot-uniform over its concatenated input.

Glorot (Keras' default) on the ReLU torsos left the Nature CNN's FC-512
features of Pong's near-constant screens nearly equal across states, and Adam
then switched most units off for good (issue 13's measurements); He-uniform
kept them alive and Pong learned.

The initialisers and the LSTM step are also plain functions, for networks that
keep their own weights (:mod:`seed.networks.mlp`).

Weights are float32 variables, cast at use to the input's dtype: a layer computes in
bfloat16 on bfloat16 input (:mod:`seed.networks.precision`) and its gradients reach the
float32 variables through the cast. Each layer reports its product's FLOPs to an open
:func:`seed.networks.flops.counting_flops` block.
"""

from __future__ import annotations

import math

import tensorflow as tf

from seed.networks import flops
from seed.networks.relu_recording import record_relu_output


def glorot_uniform(shape, fan_in: int, fan_out: int):
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    return tf.random.uniform(shape, -limit, limit, tf.float32)


def variance_scaling_uniform(shape, fan_in: int, variance: float):
    """Uniform weights of variance ``variance / fan_in`` (limit ``sqrt(3 variance / fan_in)``)."""
    limit = math.sqrt(3.0 * variance / fan_in)
    return tf.random.uniform(shape, -limit, limit, tf.float32)


def he_uniform(shape, fan_in: int):
    """For layers followed by a ReLU: variance ``2 / fan_in``."""
    return variance_scaling_uniform(shape, fan_in, 2.0)


def lecun_uniform(shape, fan_in: int, scale: float = 1.0):
    """For linear outputs: variance ``1 / fan_in``, the weights times ``scale``."""
    return scale * variance_scaling_uniform(shape, fan_in, 1.0)


KERNEL_INITS = ("he_uniform", "lecun_uniform", "glorot_uniform")
LAYER_NORM_EPSILON = 1e-5  # added to a row's variance (Keras' LayerNormalization: 1e-3)


def lstm_bias(units: int):
    """Initial LSTM bias ``[4 * units]``: gates i, f, g, o, the forget gate's at 1."""
    return tf.concat([tf.zeros([units]), tf.ones([units]), tf.zeros([2 * units])], 0)


def lstm_step(x, state, kernel, bias):
    """One LSTM step: ``x`` [B, in], ``state`` ``(h, c)`` -> ``(h, (h, c))``.

    ``kernel`` is ``[in + units, 4 * units]`` over ``concat(x, h)``, gates i, f, g, o.
    """
    h, c = state
    xh = tf.concat([x, h], -1)
    flops.count_matmul("lstm", xh, kernel)
    z = tf.matmul(xh, kernel) + bias
    i, f, g, o = tf.split(z, 4, axis=-1)
    c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
    h = tf.sigmoid(o) * tf.tanh(c)
    return h, (h, c)


class _Layer(tf.Module):
    """A layer whose ``kernel`` and ``bias`` are made on its first call (see :meth:`_build`).

    ``kernel_init``: ``"he_uniform"``, ``"lecun_uniform"`` or ``"glorot_uniform"`` (Keras'
    default, what upstream SEED's layers use); None picks He for a ReLU activation and
    LeCun otherwise (a layer whose output a ReLU follows outside it, as in the residual
    blocks, says ``"he_uniform"``).
    ``init_scale`` multiplies a LeCun kernel (0.01 for policy logits).
    """

    def __init__(self, activation=None, name: str | None = None,
                 kernel_init: str | None = None, init_scale: float = 1.0):
        super().__init__(name=name)
        if kernel_init is None:
            kernel_init = "he_uniform" if activation is tf.nn.relu else "lecun_uniform"
        if kernel_init not in KERNEL_INITS:
            raise ValueError(f"unknown kernel_init {kernel_init!r}; known: {KERNEL_INITS}")
        if kernel_init != "lecun_uniform" and init_scale != 1.0:
            raise ValueError("init_scale applies to lecun_uniform kernels only")
        self.activation = activation
        self.kernel_init, self.init_scale = kernel_init, float(init_scale)
        self.kernel = None
        self.bias = None

    def _build(self, kernel_shape, fan_in: int, bias=None):
        """``kernel`` by ``kernel_init``, then ``bias`` from its initial value (none if None)."""
        if self.kernel_init == "he_uniform":
            kernel = he_uniform(kernel_shape, fan_in)
        elif self.kernel_init == "glorot_uniform":  # fan out: receptive field x outputs
            fan_out = math.prod(kernel_shape[:-2]) * kernel_shape[-1]
            kernel = glorot_uniform(kernel_shape, fan_in, fan_out)
        else:
            kernel = lecun_uniform(kernel_shape, fan_in, self.init_scale)
        with self.name_scope:
            self.kernel = tf.Variable(kernel, name="kernel")
            if bias is not None:
                self.bias = tf.Variable(bias, name="bias")

    def _activate(self, y):
        if not self.activation:
            return y
        y = self.activation(y)
        if self.activation is tf.nn.relu:
            record_relu_output(self.name, y)
        return y


class Dense(_Layer):
    """``x @ kernel + bias`` on ``[N, in]``, optional layer normalisation, optional activation.

    ``layer_norm``: the outputs of each row normalised to zero mean and unit variance, then
    scaled and shifted by a learned ``gain`` (1 at first) and the ``bias`` (Ba et al. 2016),
    before the activation; whatever the scale the kernel and the inputs grow to, the next
    layer sees the same (issue 32: an LSTM fed a growing torso saturated). Computed in
    float32 whatever the input's dtype.
    """

    def __init__(self, units: int, activation=None, use_bias: bool = True,
                 name: str | None = None, kernel_init: str | None = None,
                 init_scale: float = 1.0, layer_norm: bool = False):
        super().__init__(activation, name, kernel_init, init_scale)
        self.units = units
        self.use_bias = use_bias or layer_norm
        self.layer_norm = bool(layer_norm)
        self.gain = None

    def __call__(self, x):
        if self.kernel is None:
            fan_in = int(x.shape[-1])
            self._build([fan_in, self.units], fan_in,
                        tf.zeros([self.units]) if self.use_bias else None)
            if self.layer_norm:
                with self.name_scope:
                    self.gain = tf.Variable(tf.ones([self.units]), name="gain")
        flops.count_matmul(self.name, x, self.kernel)
        y = tf.matmul(x, tf.cast(self.kernel, x.dtype))
        if self.layer_norm:
            y = tf.cast(y, tf.float32)
            mean, variance = tf.nn.moments(y, axes=[-1], keepdims=True)
            y = (y - mean) * tf.math.rsqrt(variance + LAYER_NORM_EPSILON) * self.gain
            return self._activate(tf.cast(y + self.bias, x.dtype))
        if self.use_bias:
            y = y + tf.cast(self.bias, x.dtype)
        return self._activate(y)


class Conv2D(_Layer):
    """2-D convolution over NHWC input, optional activation."""

    def __init__(self, filters: int, kernel_size: int, stride: int = 1, padding: str = "SAME",
                 activation=None, name: str | None = None, kernel_init: str | None = None):
        super().__init__(activation, name, kernel_init)
        self.filters = filters
        self.kernel_size = kernel_size
        self.stride, self.padding = stride, padding

    def __call__(self, x):
        if self.kernel is None:
            in_channels = int(x.shape[-1])
            k = self.kernel_size
            self._build([k, k, in_channels, self.filters], k * k * in_channels,
                        tf.zeros([self.filters]))
        y = tf.nn.conv2d(x, tf.cast(self.kernel, x.dtype), self.stride, self.padding)
        flops.count_conv(self.name, y, self.kernel)
        return self._activate(y + tf.cast(self.bias, x.dtype))


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
            with self.name_scope:
                self.kernel = tf.Variable(glorot_uniform([fan_in, 4 * self.units], fan_in,
                                                         4 * self.units), name="kernel")
                self.bias = tf.Variable(lstm_bias(self.units), name="bias")
        return lstm_step(x, state, self.kernel, self.bias)
