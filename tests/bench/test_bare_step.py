"""The bare TensorFlow train step that ``seed roofline`` times the agent's against."""

import numpy as np
import pytest

from seed.bench import bare_step
from seed.config import make_config


def _vtrace_by_definition(log_rhos, discounts, rewards, values, bootstrap):
    """IMPALA's Eq. 1 as a double sum (no recursion), rho_bar = c_bar = lambda = 1."""
    T, B = log_rhos.shape
    rho = np.minimum(1.0, np.exp(log_rhos))
    v_next = np.concatenate([values[1:], bootstrap[None]])
    delta = rho * (rewards + discounts * v_next - values)
    vs = np.array(values, np.float64)
    for s in range(T):
        for t in range(s, T):
            vs[s] += np.prod(discounts[s:t] * rho[s:t], axis=0) * delta[t]
    vs_next = np.concatenate([vs[1:], bootstrap[None]])
    return vs, rho * (rewards + discounts * vs_next - values)


def test_vtrace_targets_match_the_definition():
    rng = np.random.default_rng(3)
    T, B = 6, 3
    args = (rng.normal(0, 0.5, (T, B)), 0.9 * (rng.random((T, B)) > 0.2),
            rng.normal(size=(T, B)), rng.normal(size=(T, B)), rng.normal(size=B))
    args = tuple(np.asarray(a, np.float32) for a in args)
    vs, adv = bare_step.vtrace_targets(*args)
    want_vs, want_adv = _vtrace_by_definition(*(a.astype(np.float64) for a in args))
    np.testing.assert_allclose(vs.numpy(), want_vs, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(adv.numpy(), want_adv, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("compute_dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("network", bare_step.NETWORKS)
def test_a_step_updates_every_variable(network, compute_dtype):
    step = bare_step.BareTrainStep(network, num_actions=6, stack_size=4,
                                   network_kwargs={"channels": [4, 8], "fc_size": 16},
                                   compute_dtype=compute_dtype)
    before = [v.numpy().copy() for v in step.variables]
    loss = step.step(*bare_step.synthetic_batch(3, 2, 6, 4))
    assert np.isfinite(float(loss))
    moved = [not np.array_equal(b, v.numpy()) for b, v in zip(before, step.variables)]
    assert all(moved), f"{moved.count(False)} of {len(moved)} variables did not move"


def test_unknown_network_is_refused():
    with pytest.raises(ValueError, match="no bare reference for network 'mlp'"):
        bare_step.BareTrainStep("mlp", num_actions=3)


def test_timer_reports_per_frame_costs():
    from seed.bench.timing import rates
    config = make_config(env="atari:Pong", network="nature_cnn", unroll_length=2, batch_size=1)
    timer = bare_step.bare_training_timer(config, num_actions=6, frames_per_step=4,
                                          min_steps=2)
    totals = timer(0.0)
    assert totals["steps"] == 2 and totals["env_steps"] == 2 * 2 * 1
    assert totals["frames"] == 4 * totals["env_steps"]
    m = rates(totals)
    assert m["frames_per_s"] > 0 and m["cpu_s_per_frame"] > 0
    assert m["wall_s_per_step"] == pytest.approx(2 * 1 * 4 / m["frames_per_s"])
