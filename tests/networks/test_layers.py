"""Initialisation of the plain layers, against the formulas of the papers they come from."""

import math

import numpy as np
import pytest
import tensorflow as tf

from seed.networks.layers import Conv2D, Dense


def _kernel(layer, x):
    layer(tf.zeros(x))
    return layer.kernel.numpy()


@pytest.mark.parametrize("kernel_init,expected_limit", [
    # Uniform on [-l, l] has variance l^2 / 3: l = sqrt(3 * variance).
    ("he_uniform", math.sqrt(6 / 800)),                # He et al.: 2 / fan_in
    ("lecun_uniform", math.sqrt(3 / 800)),             # LeCun: 1 / fan_in
    ("glorot_uniform", math.sqrt(6 / (800 + 200))),    # Glorot & Bengio: 2 / (in + out)
])
def test_dense_kernel_limits(kernel_init, expected_limit):
    w = _kernel(Dense(200, kernel_init=kernel_init), [1, 800])
    assert np.abs(w).max() <= expected_limit + 1e-7
    assert np.abs(w).max() > 0.99 * expected_limit  # 160,000 draws reach the edge
    assert np.var(w) == pytest.approx(expected_limit ** 2 / 3, rel=0.02)


def test_glorot_conv_counts_the_receptive_field_in_both_fans():
    # Keras' GlorotUniform on a 3x3 conv from 16 to 32 channels: fan_in 3*3*16, fan_out 3*3*32.
    w = _kernel(Conv2D(32, 3, kernel_init="glorot_uniform"), [1, 8, 8, 16])
    limit = math.sqrt(6 / (9 * 16 + 9 * 32))
    assert np.abs(w).max() <= limit + 1e-7
    assert np.var(w) == pytest.approx(limit ** 2 / 3, rel=0.05)


def test_init_scale_is_for_lecun_kernels_only():
    with pytest.raises(ValueError, match="lecun_uniform kernels only"):
        Dense(4, kernel_init="glorot_uniform", init_scale=0.01)
    with pytest.raises(ValueError, match="unknown kernel_init"):
        Dense(4, kernel_init="orthogonal")


def test_layer_norm_makes_each_row_zero_mean_unit_variance_before_gain_and_bias():
    rng = np.random.default_rng(0)
    layer = Dense(64, layer_norm=True, kernel_init="glorot_uniform")
    x = tf.constant(rng.normal(size=(5, 30)) * 100, tf.float32)  # any scale in
    y = layer(x).numpy()
    assert np.allclose(y.mean(-1), 0, atol=1e-4) and np.allclose(y.std(-1), 1, atol=1e-3)
    layer.gain.assign(tf.fill([64], 2.0))
    layer.bias.assign(tf.fill([64], 0.5))
    z = layer(x * 1000).numpy()  # the same rows, a thousand times larger: the same outputs
    assert np.allclose(z, 2 * y + 0.5, atol=1e-3)
    # With a ReLU: about half of each row's units fire, whatever the scale.
    relu = Dense(64, tf.nn.relu, layer_norm=True, kernel_init="glorot_uniform")
    assert 0.3 < float(np.mean(relu(x).numpy() > 0)) < 0.7
