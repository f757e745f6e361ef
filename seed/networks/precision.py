"""The dtype a network's torso computes in: float32, or bfloat16 with float32 variables.

A run's ``compute_dtype`` (:mod:`seed.config.run`) is one of ``seed.networks.COMPUTE_DTYPES``:

* ``float32``: every op in float32;
* ``bfloat16``: the torso of every network call (inference and the train step) in bfloat16;
* ``bfloat16_train``: the torso in bfloat16 in the train step only, inference in float32
  (where an inference batch is too small for bfloat16 to gain).

Variables stay float32 whatever the dtype: a layer casts its weights to its input's dtype
where it uses them (:mod:`seed.networks.layers`), so gradients come back float32 through
the casts, the optimizer and its moments stay float32, and checkpoints and IMPALA's
parameter pulls are the same under every dtype. bfloat16 has float32's exponent range, so
no loss scaling is needed. Only the torso (the convolutions and fully connected layers that
read the observation) runs in bfloat16; its output is cast back to float32 before the
recurrent core and the heads (policy logits, baseline, Q values), so the loss, V-trace and
the LSTM stay float32 (see :func:`torso_in_compute_dtype`).

The agent sets the dtype around each traced function (:func:`computing_in`); a network
reads it when it is traced (:func:`compute_dtype`). It is thread-local, so the inference
thread and the training thread may trace the same network in different dtypes at once.

bfloat16 is fast only where the CPU has it (AVX512-BF16's ``VDPBF16PS`` or AMX): where it
is asked for on a CPU without either, :func:`seed.metrics.cpu_facts.effective_compute_dtype`
says so in one line and the run computes in float32.
"""

from __future__ import annotations

import contextlib
import threading

import tensorflow as tf

from seed.networks import COMPUTE_DTYPES

_current = threading.local()


@contextlib.contextmanager
def computing_in(dtype):
    """Networks traced inside the block compute their torso in ``dtype`` (a tf.DType)."""
    previous = getattr(_current, "dtype", None)
    _current.dtype = tf.as_dtype(dtype)
    try:
        yield
    finally:
        _current.dtype = previous


def compute_dtype() -> tf.DType:
    """The dtype of the innermost :func:`computing_in` block of this thread; float32 outside."""
    return getattr(_current, "dtype", None) or tf.float32


def torso_in_compute_dtype(torso, x):
    """``torso(x)`` with ``x`` cast to :func:`compute_dtype`, its output cast to float32.

    The LSTM core after a torso stays float32, for cost, not precision. It is 1% of the
    DMLab network's FLOPs (one ``[in + h, 4h]`` product a step against the ResNet's 15
    convolutions, :mod:`seed.networks.flops`), so bfloat16 could save at most 1% of a step,
    while its T small sequential products would each pay casts of their own; and its state
    is kept in float32 between inference calls (the core state table). Precision would allow
    it: run in bfloat16 over 100 steps (256 units, 16 rows of random ReLU features, the
    suite's initialisation), its ``h`` and ``c`` stayed within 1.7 x 2^-8 (relative) of
    float32's at every step, without drift, the forget gate damping each step's rounding.
    """
    dtype = compute_dtype()
    return tf.cast(torso(tf.cast(x, dtype)), tf.float32)


def train_and_inference_dtypes(name: str) -> tuple[tf.DType, tf.DType]:
    """(train step dtype, inference dtype) of a ``compute_dtype`` value."""
    if name not in COMPUTE_DTYPES:
        raise ValueError(f"compute_dtype must be {' | '.join(COMPUTE_DTYPES)}, not {name!r}")
    train = tf.float32 if name == "float32" else tf.bfloat16
    return train, (tf.bfloat16 if name == "bfloat16" else tf.float32)
