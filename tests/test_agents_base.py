import numpy as np
import pytest
import tensorflow as tf

from seed.agents.base import traced_once


def test_traced_once_converts_nests_and_never_retraces():
    spec = [tf.TensorSpec([None], tf.int32), (tf.TensorSpec([None, 2], tf.float32),)]
    fn = traced_once(lambda a, nest: tf.cast(a, tf.float32)[:, None] * nest[0], spec)
    for batch in (1, 3, 7):
        out = fn(np.arange(batch), (np.ones((batch, 2), np.float64),))
        np.testing.assert_allclose(out.numpy(), np.repeat(np.arange(batch)[:, None], 2, 1))
    assert fn.tracing_count() == 1


def test_traced_once_refuses_a_different_nest():
    fn = traced_once(lambda a, b: a + b, [tf.TensorSpec([None], tf.float32)] * 2)
    with pytest.raises(ValueError, match="expected 2 input arrays, got 3"):
        fn(np.zeros(2), (np.zeros(2), np.zeros(2)))
