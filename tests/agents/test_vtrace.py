import math
import zlib

import numpy as np
import pytest
import tensorflow as tf

from seed.agents.vtrace import actor_critic_loss, align_unroll, vtrace
from seed.types import EnvOutput


def reference_vtrace(log_rhos, discounts, rewards, values, bootstrap, rho_bar, pg_rho_bar,
                     lambda_):
    """Slow V-trace straight from the IMPALA paper's definition (Eq. 1), per env column.

    v_s = V(x_s) + sum_{t>=s} (prod_{k=s}^{t-1} gamma_k) (prod_{i=s}^{t-1} c_i) delta_t V
    """
    T, B = log_rhos.shape
    rhos = np.exp(log_rhos.astype(np.float64))
    clipped = rhos if rho_bar is None else np.minimum(rho_bar, rhos)
    pg_clipped = rhos if pg_rho_bar is None else np.minimum(pg_rho_bar, rhos)
    c = lambda_ * np.minimum(1.0, rhos)
    vs = np.zeros((T, B))
    pg = np.zeros((T, B))
    for b in range(B):
        v_ext = list(values[:, b]) + [bootstrap[b]]  # V(x_0..x_T)
        for s in range(T):
            total = v_ext[s]
            for t in range(s, T):
                weight = 1.0
                for i in range(s, t):
                    weight *= discounts[i, b] * c[i, b]
                delta = clipped[t, b] * (rewards[t, b] + discounts[t, b] * v_ext[t + 1]
                                         - v_ext[t])
                total += weight * delta
            vs[s, b] = total
        for s in range(T):
            v_next = vs[s + 1, b] if s + 1 < T else bootstrap[b]
            pg[s, b] = pg_clipped[s, b] * (rewards[s, b] + discounts[s, b] * v_next
                                           - values[s, b])
    return vs, pg


def _random_case(seed, T=6, B=3, zero_discounts=False):
    rng = np.random.default_rng(seed)
    log_rhos = rng.normal(scale=1.0, size=(T, B)).astype(np.float32)
    discounts = np.full((T, B), 0.9, np.float32)
    if zero_discounts:
        discounts[2, 0] = 0.0
        discounts[4, 1] = 0.0
        discounts[0, 2] = 0.0
    rewards = rng.normal(size=(T, B)).astype(np.float32)
    values = rng.normal(size=(T, B)).astype(np.float32)
    bootstrap = rng.normal(size=(B,)).astype(np.float32)
    return log_rhos, discounts, rewards, values, bootstrap


@pytest.mark.parametrize("rho_bar,pg_rho_bar", [(1.0, 1.0), (None, None), (2.0, 0.5),
                                                (None, 1.0)])
@pytest.mark.parametrize("lambda_", [1.0, 0.7])
@pytest.mark.parametrize("zero_discounts", [False, True])
def test_vtrace_matches_paper_definition(rho_bar, pg_rho_bar, lambda_, zero_discounts):
    seed = zlib.crc32(repr((rho_bar, pg_rho_bar, lambda_)).encode())
    case = _random_case(seed, zero_discounts=zero_discounts)
    vs, pg = vtrace(*case, clip_rho_threshold=rho_bar, clip_pg_rho_threshold=pg_rho_bar,
                    lambda_=lambda_)
    ref_vs, ref_pg = reference_vtrace(*case, rho_bar, pg_rho_bar, lambda_)
    np.testing.assert_allclose(vs, ref_vs, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(pg, ref_pg, rtol=1e-4, atol=1e-4)


def test_clipping_changes_result():
    case = _random_case(11)
    clipped, _ = vtrace(*case)
    unclipped, _ = vtrace(*case, clip_rho_threshold=None, clip_pg_rho_threshold=None)
    assert not np.allclose(clipped, unclipped)


def test_zero_discount_cuts_the_trace():
    # With discount 0 at step t, v_s for s <= t cannot depend on anything after t.
    log_rhos, discounts, rewards, values, bootstrap = _random_case(12, T=5, B=1)
    discounts[2, 0] = 0.0
    vs_a, _ = vtrace(log_rhos, discounts, rewards, values, bootstrap)
    rewards2, values2 = rewards.copy(), values.copy()
    rewards2[3:] += 10.0
    values2[3:] -= 5.0
    vs_b, _ = vtrace(log_rhos, discounts, rewards2, values2, bootstrap + 7.0)
    np.testing.assert_allclose(vs_a[:3], vs_b[:3], rtol=1e-6)
    assert not np.allclose(vs_a[3:], vs_b[3:])


def test_hand_computed_tiny_case():
    # T=2, B=1: rho = [2, 0.5] -> clipped rho = c = [1, 0.5]; gamma = 0.9.
    log_rhos = np.log([[2.0], [0.5]]).astype(np.float32)
    discounts = np.full((2, 1), 0.9, np.float32)
    rewards = np.array([[1.0], [2.0]], np.float32)
    values = np.array([[0.5], [1.0]], np.float32)
    bootstrap = np.array([3.0], np.float32)
    vs, pg = vtrace(log_rhos, discounts, rewards, values, bootstrap)
    # delta_0 = 1 * (1 + 0.9 * 1.0 - 0.5) = 1.4 ; delta_1 = 0.5 * (2 + 0.9 * 3 - 1) = 1.85
    # v_1 = 1 + 1.85 = 2.85 ; v_0 = 0.5 + 1.4 + 0.9 * 1 * 1.85 = 3.565
    # pg_0 = 1 * (1 + 0.9 * 2.85 - 0.5) = 3.065 ; pg_1 = 0.5 * (2 + 0.9 * 3 - 1) = 1.85
    np.testing.assert_allclose(vs.numpy()[:, 0], [3.565, 2.85], rtol=1e-5)
    np.testing.assert_allclose(pg.numpy()[:, 0], [3.065, 1.85], rtol=1e-5)


def test_on_policy_lambda_one_gives_n_step_returns():
    # rho = 1 everywhere: v_s is the discounted return bootstrapped from V(x_T).
    T = 4
    rewards = np.array([[1.0], [0.0], [2.0], [-1.0]], np.float32)
    values = np.array([[5.0], [-3.0], [0.1], [9.0]], np.float32)  # must not matter
    vs, _ = vtrace(np.zeros((T, 1), np.float32), np.full((T, 1), 0.5, np.float32), rewards,
                   values, np.array([4.0], np.float32))
    expected = [1 + 0.5 * 0 + 0.25 * 2 + 0.125 * -1 + 0.0625 * 4,
                0 + 0.5 * 2 + 0.25 * -1 + 0.125 * 4,
                2 + 0.5 * -1 + 0.25 * 4,
                -1 + 0.5 * 4]
    np.testing.assert_allclose(vs.numpy()[:, 0], expected, rtol=1e-5)


def test_no_gradient_through_outputs():
    case = [tf.Variable(x) for x in _random_case(13)]
    with tf.GradientTape(persistent=True) as tape:
        vs, pg = vtrace(*case)
        vs_sum, pg_sum = tf.reduce_sum(vs), tf.reduce_sum(pg)
    assert all(g is None for g in tape.gradient(vs_sum, case))
    assert all(g is None for g in tape.gradient(pg_sum, case))


def test_works_inside_tf_function():
    case = _random_case(14)

    @tf.function
    def f(*args):
        return vtrace(*args, lambda_=0.9)

    vs, pg = f(*case)
    ref_vs, ref_pg = reference_vtrace(*case, 1.0, 1.0, 0.9)
    np.testing.assert_allclose(vs, ref_vs, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(pg, ref_pg, rtol=1e-4, atol=1e-4)


def _loss_inputs():
    # T=1, B=2, two actions, uniform logits for learner and behaviour (on-policy, rho = 1).
    return dict(
        learner_logits=np.zeros((1, 2, 2), np.float32),
        learner_baseline=np.array([[0.5, 0.2]], np.float32),
        bootstrap_value=np.array([1.0, 7.0], np.float32),
        behaviour_logits=np.zeros((1, 2, 2), np.float32),
        actions=np.array([[1, 0]], np.int32),
        rewards=np.array([[1.0, -1.0]], np.float32),
        dones=np.array([[False, True]]),
    )


def test_actor_critic_loss_hand_computed():
    total, metrics = actor_critic_loss(**_loss_inputs(), discounting=0.9, baseline_cost=0.5,
                                       entropy_cost=0.01)
    # env 0: vs = 0.5 + (1 + 0.9 * 1.0 - 0.5) = 1.9, A = 1.4
    # env 1: episode ended, discount 0: vs = r = -1, A = -1 - 0.2 = -1.2
    log_half = math.log(0.5)
    policy = -(log_half * 1.4 + log_half * -1.2) / 2
    baseline = 0.5 * 0.5 * ((1.9 - 0.5) ** 2 + (-1.0 - 0.2) ** 2) / 2
    entropy = math.log(2.0)
    assert metrics["policy_loss"].numpy() == pytest.approx(policy, rel=1e-5)
    assert metrics["baseline_loss"].numpy() == pytest.approx(baseline, rel=1e-5)
    assert metrics["entropy"].numpy() == pytest.approx(entropy, rel=1e-5)
    assert total.numpy() == pytest.approx(policy + baseline - 0.01 * entropy, rel=1e-5)
    assert metrics["mean_rho"].numpy() == pytest.approx(1.0)


def test_summed_loss_is_the_hand_computed_mean_times_the_steps():
    """The same case as above with reduction="sum": every term times T x B = 2."""
    total, metrics = actor_critic_loss(**_loss_inputs(), discounting=0.9, baseline_cost=0.5,
                                       entropy_cost=0.01, reduction="sum")
    log_half = math.log(0.5)
    policy = -(log_half * 1.4 + log_half * -1.2)
    baseline = 0.5 * 0.5 * ((1.9 - 0.5) ** 2 + (-1.0 - 0.2) ** 2)
    entropy = 2 * math.log(2.0)
    assert metrics["policy_loss"].numpy() == pytest.approx(policy, rel=1e-5)
    assert metrics["baseline_loss"].numpy() == pytest.approx(baseline, rel=1e-5)
    assert total.numpy() == pytest.approx(policy + baseline - 0.01 * entropy, rel=1e-5)
    assert metrics["entropy"].numpy() == pytest.approx(math.log(2.0), rel=1e-5)  # per step
    # Diagnostics: the behaviour is the target policy here, so no lag; value error by hand.
    assert metrics["mean_abs_log_rho"].numpy() == pytest.approx(0.0, abs=1e-6)
    assert metrics["value_loss"].numpy() == pytest.approx(
        0.5 * ((1.9 - 0.5) ** 2 + (-1.0 - 0.2) ** 2) / 2, rel=1e-5)
    with pytest.raises(ValueError, match="unknown loss reduction"):
        actor_critic_loss(**_loss_inputs(), discounting=0.9, baseline_cost=0.5,
                          entropy_cost=0.01, reduction="median")


def test_reward_clipping_applies():
    inputs = _loss_inputs()
    big = dict(inputs, rewards=np.array([[5.0, -3.0]], np.float32))
    unit = dict(inputs, rewards=np.array([[1.0, -1.0]], np.float32))
    kw = dict(discounting=0.9, baseline_cost=0.5, entropy_cost=0.01)
    clipped, _ = actor_critic_loss(**big, max_abs_reward=1.0, **kw)
    reference, _ = actor_critic_loss(**unit, **kw)
    unclipped, _ = actor_critic_loss(**big, **kw)
    assert clipped.numpy() == pytest.approx(reference.numpy(), rel=1e-6)
    assert unclipped.numpy() != pytest.approx(reference.numpy(), rel=1e-3)


def test_loss_gradients_follow_the_stopped_targets():
    inputs = _loss_inputs()
    baseline = tf.Variable(inputs.pop("learner_baseline"))
    logits = tf.Variable(np.array([[[0.3, -0.2], [0.1, 0.4]]], np.float32))
    inputs["learner_logits"] = logits
    inputs["behaviour_logits"] = logits.numpy()  # on-policy
    with tf.GradientTape() as tape:
        _, metrics = actor_critic_loss(learner_baseline=baseline, discounting=0.9,
                                       baseline_cost=0.5, entropy_cost=0.0, **inputs)
        loss = metrics["baseline_loss"] + metrics["policy_loss"]
    g_baseline, g_logits = tape.gradient(loss, [baseline, logits])
    # d/dV of 0.5 * 0.5 * mean((vs - V)^2) with vs held fixed = -0.5 * (vs - V) / N.
    vs = np.array([0.5 + (1 + 0.9 * 1.0 - 0.5), -1.0])
    np.testing.assert_allclose(g_baseline.numpy()[0], -0.5 * (vs - [0.5, 0.2]) / 2, rtol=1e-5)
    # d/dlogits of -mean(log pi(a) * A) = -(onehot(a) - pi) * A / N, A held fixed.
    pi = tf.nn.softmax(logits).numpy()[0]
    adv = np.array([1.0 + 0.9 * 1.0 - 0.5, -1.0 - 0.2])
    onehot = np.eye(2)[[1, 0]]
    np.testing.assert_allclose(g_logits.numpy()[0], -(onehot - pi) * adv[:, None] / 2,
                               rtol=1e-5, atol=1e-6)


def test_align_unroll_time_convention():
    T1, B, A = 4, 2, 3
    learner = {"policy_logits": np.arange(T1 * B * A, dtype=np.float32).reshape(T1, B, A),
               "baseline": np.arange(T1 * B, dtype=np.float32).reshape(T1, B)}
    agent = {"policy_logits": -learner["policy_logits"],
             "action": np.arange(T1 * B, dtype=np.int32).reshape(T1, B) % A}
    env = EnvOutput(reward=np.arange(T1 * B, dtype=np.float32).reshape(T1, B) * 10,
                    done=np.arange(T1 * B).reshape(T1, B) % 3 == 0,
                    observation=np.zeros((T1, B, 1)))
    out = align_unroll(learner, agent, env)
    np.testing.assert_array_equal(out["bootstrap_value"], learner["baseline"][3])
    np.testing.assert_array_equal(out["learner_baseline"], learner["baseline"][:3])
    np.testing.assert_array_equal(out["actions"], agent["action"][:3])
    np.testing.assert_array_equal(out["behaviour_logits"], agent["policy_logits"][:3])
    np.testing.assert_array_equal(out["rewards"], env.reward[1:])
    np.testing.assert_array_equal(out["dones"], env.done[1:])
