"""seed.agents.optimizers: gradient clipping as the config documents it (0: no clipping)."""

import numpy as np
import pytest
import tensorflow as tf

from seed.agents.optimizers import clipped_gradients


@pytest.mark.parametrize("clip,expected", [
    (1.0, ([0.6], [0.8, 0.0])),   # global norm 5 scaled to 1
    (10.0, ([3.0], [4.0, 0.0])),  # under the limit: as they are
    (0.0, ([3.0], [4.0, 0.0])),   # 0: no clipping (R2D2 once zeroed every gradient here)
])
def test_clipped_gradients_scale_to_the_limit_and_report_the_norm_before(clip, expected):
    grads = [tf.constant([3.0]), tf.constant([4.0, 0.0])]
    clipped, norm = clipped_gradients(grads, clip)
    assert float(norm) == pytest.approx(5.0)
    for got, want in zip(clipped, expected):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
