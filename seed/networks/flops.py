"""FLOPs of a network's forward and backward pass, counted from its layers.

Each layer of :mod:`seed.networks.layers` and :mod:`seed.networks.mlp` reports the FLOPs of
its matrix product while a :func:`counting_flops` block of its thread is open (a no-op
otherwise), from the static shapes of one eager call:

* dense (and an LSTM step, one ``[in + h, 4h]`` product): ``2 x rows x in x out``;
* convolution: ``2 x H_out x W_out x k_h x k_w x C_in x C_out`` per row.

A multiply-add counts 2 FLOPs, the convention of TensorFlow's profiler and of a CPU's peak
(an FMA is 2). Element-wise work (bias adds, activations, pooling, residual adds, the LSTM's
gates, scaling the frames) is not counted: TensorFlow's profiler, which counts some of it,
finds at most 1% more than this count on every network here (tests/networks/test_flops.py).

Backward: every layer computes the gradient of its weights (as many FLOPs as its forward
product) and of its input (as many again), except the first layer a network applies, whose
input is the observation and needs no gradient: its backward is its forward once. So a
forward and backward pass is ``3 x forward - first layer``, not the ``3 x forward`` of the
usual convention, which would overcount the Nature CNN's by 12%.
"""

from __future__ import annotations

import math

from seed.networks.recorder import Recorder

_counts = Recorder()


def counting_flops():
    """A block that yields a list every layer called inside it appends ``(name, flops)`` to."""
    return _counts.recording()


def count_matmul(name: str, x, kernel) -> None:
    """A layer's ``x [..., in] @ kernel [in, out]``; a no-op outside :func:`counting_flops`."""
    if not _counts.active():
        return
    fan_in, units = (int(d) for d in kernel.shape)
    _counts.append((name, 2 * math.prod(int(d) for d in x.shape[:-1]) * fan_in * units))


def count_conv(name: str, y, kernel) -> None:
    """A convolution with output ``y [N, H_out, W_out, C_out]`` and ``kernel [k_h, k_w, C_in,
    C_out]``; a no-op outside :func:`counting_flops`."""
    if not _counts.active():
        return
    _counts.append((name, 2 * math.prod(int(d) for d in y.shape)
                    * math.prod(int(d) for d in kernel.shape[:3])))


def layer_flops(network, observation_shape, observation_dtype) -> list[tuple[str, int]]:
    """``(layer name, forward FLOPs)`` of every product one step of one env runs through
    ``network``, in the order it runs them."""
    from seed.networks.base import create_variables  # TensorFlow: imported on use
    with counting_flops() as counts:
        create_variables(network, observation_shape, observation_dtype)
    if not counts:
        raise ValueError(f"{type(network).__name__} reported no layer FLOPs: its layers are "
                         "not from seed.networks.layers or seed.networks.mlp")
    return counts


def step_flops(network, observation_shape, observation_dtype) -> dict:
    """FLOPs of one env step through ``network``: ``forward``, ``backward`` (the module doc)
    and ``layers`` (each layer's forward, by name)."""
    layers = layer_flops(network, observation_shape, observation_dtype)
    forward = sum(f for _, f in layers)
    return {"forward": forward, "backward": 2 * forward - layers[0][1],
            "layers": [[name, f] for name, f in layers]}
