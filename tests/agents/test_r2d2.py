"""R2D2 pure functions against closed forms, a hand-computed case and slow NumPy references."""

import numpy as np
import pytest
import tensorflow as tf

from seed.agents import r2d2


def h_numpy(x, eps):
    return np.sign(x) * (np.sqrt(np.abs(x) + 1.0) - 1.0) + eps * x


def h_inverse_numpy(y, eps):
    # Solve h(x) = y for x >= 0 with y >= 0 (odd function): with s = sqrt(x + 1),
    # eps s^2 + s - (1 + eps + y) = 0  ->  s = (-1 + sqrt(1 + 4 eps (1 + eps + y))) / (2 eps).
    a = np.abs(y)
    if eps == 0:
        s = a + 1.0
    else:
        s = (-1.0 + np.sqrt(1.0 + 4.0 * eps * (1.0 + eps + a))) / (2.0 * eps)
    return np.sign(y) * (s * s - 1.0)


@pytest.mark.parametrize("eps", [1e-3, 1e-2, 0.0])
def test_value_rescale_matches_closed_form(eps):
    x = np.array([-1e4, -100.0, -3.5, -1.0, 0.0, 0.25, 1.0, 7.0, 1e3], np.float64)
    got = r2d2.value_rescale(tf.constant(x), eps).numpy()
    np.testing.assert_allclose(got, h_numpy(x, eps), rtol=1e-12)
    y = got
    np.testing.assert_allclose(r2d2.value_rescale_inverse(tf.constant(y), eps).numpy(),
                               h_inverse_numpy(y, eps), rtol=1e-9)


def test_value_rescale_hand_values():
    # h(3) with eps=0: sqrt(4) - 1 = 1; h(-8) = -(3 - 1) = -2; with eps=1e-3, + eps x.
    np.testing.assert_allclose(r2d2.value_rescale(tf.constant([3.0, -8.0]), 0.0).numpy(),
                               [1.0, -2.0])
    np.testing.assert_allclose(r2d2.value_rescale(tf.constant([3.0, -8.0]), 1e-3).numpy(),
                               [1.003, -2.008], rtol=1e-6)


@pytest.mark.parametrize("eps", [1e-3, 0.0])
def test_inverse_undoes_rescale_over_a_wide_range(eps):
    x = np.linspace(-1e4, 1e4, 20001)
    round_trip = r2d2.value_rescale_inverse(r2d2.value_rescale(tf.constant(x), eps), eps)
    np.testing.assert_allclose(round_trip.numpy(), x, rtol=1e-9, atol=1e-8)
    # float32, as the agent uses it
    x32 = tf.constant(x, tf.float32)
    round_trip32 = r2d2.value_rescale_inverse(r2d2.value_rescale(x32, eps), eps).numpy()
    np.testing.assert_allclose(round_trip32, x, rtol=1e-5, atol=1e-4)


def test_n_step_targets_hand_computed():
    # Unroll of T=5 (steps 0..5) in the seed.types convention:
    #   reward = [0, 1, 2, 3, 4, 5], done = [F, F, F, T, F, F]: step 3 starts a new
    #   episode, so the action at step 2 ended the old one with reward 3.
    # Transition-aligned (out of steps 0..4): rewards 1..5, dones [F, F, T, F, F],
    # bootstrap values V(s_1..s_5) = 10, 20, 30, 40, 50.  gamma = 0.9, n = 3.
    rewards = tf.constant([[1.0], [2.0], [3.0], [4.0], [5.0]])
    dones = tf.constant([[False], [False], [True], [False], [False]])
    boot = tf.constant([[10.0], [20.0], [30.0], [40.0], [50.0]])
    got = r2d2.n_step_bellman_targets(rewards, dones, boot, 0.9, 3).numpy()[:, 0]
    expected = [
        1 + 0.9 * 2 + 0.81 * 3,  # episode ends after the 3rd reward: no bootstrap
        2 + 0.9 * 3,  # ends after the 2nd reward
        3,  # ends right away
        4 + 0.9 * 5 + 0.81 * 50,  # only 2 steps left in the sequence: bootstrap V(s_5)
        5 + 0.9 * 50,  # 1 step left
    ]
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def n_step_reference(reward, done, online_q, target_q, gamma, n, eps):
    """Slow loop over the paper's definition, unroll convention, [T+1, B(, A)] inputs."""
    T = reward.shape[0] - 1
    out = np.zeros((T, reward.shape[1]))
    for b in range(reward.shape[1]):
        for t in range(T):
            total, discount = 0.0, 1.0
            for k in range(n):
                j = t + k + 1  # step reached by the k-th transition
                if j > T:
                    break
                total += discount * reward[j, b]
                if done[j, b]:  # episode over: no more rewards, no bootstrap
                    discount = 0.0
                    break
                discount *= gamma
                last = j
            if discount:
                a_star = np.argmax(online_q[last, b])
                total += discount * h_inverse_numpy(target_q[last, b, a_star], eps)
            out[t, b] = h_numpy(total, eps)
    return out


@pytest.mark.parametrize("n", [1, 3, 5, 9])
def test_r2d2_targets_against_numpy_reference(n):
    rng = np.random.default_rng(n)
    T, B, A = 7, 4, 3
    reward = rng.normal(size=(T + 1, B)).astype(np.float32)
    done = rng.uniform(size=(T + 1, B)) < 0.25
    online_q = rng.normal(size=(T + 1, B, A)).astype(np.float32)
    target_q = rng.normal(size=(T + 1, B, A)).astype(np.float32)
    got = r2d2.r2d2_targets(online_q, target_q, reward, done, 0.95, n, 1e-3).numpy()
    expected = n_step_reference(reward.astype(np.float64), done, online_q,
                                target_q.astype(np.float64), 0.95, n, 1e-3)
    assert got.shape == (T, B)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_double_q_uses_online_argmax_and_target_values():
    # One transition, no done: target = h(r + gamma h^-1(Q_target(s1, argmax Q_online(s1)))).
    online_q = np.array([[[0.0, 0.0]], [[1.0, 5.0]]], np.float32)  # argmax at s1: action 1
    target_q = np.array([[[0.0, 0.0]], [[9.0, 2.0]]], np.float32)  # max would be 9, not used
    reward = np.array([[0.0], [1.0]], np.float32)
    done = np.array([[False], [False]])
    got = r2d2.r2d2_targets(online_q, target_q, reward, done, 0.5, 1, 0.0).numpy()
    np.testing.assert_allclose(got, h_numpy(1.0 + 0.5 * h_inverse_numpy(2.0, 0.0), 0.0)[None, None])


def test_sequence_priorities_and_td_loss():
    abs_td = np.array([[1.0, 0.0], [3.0, 2.0], [2.0, 1.0]], np.float32)
    pri = r2d2.sequence_priorities(abs_td, 0.9).numpy()
    np.testing.assert_allclose(pri, [0.9 * 3 + 0.1 * 2, 0.9 * 2 + 0.1 * 1], rtol=1e-6)
    q = np.zeros((3, 2), np.float32)
    targets = np.array([[1.0, 0.0], [-3.0, 2.0], [2.0, 1.0]], np.float32)
    w = np.array([1.0, 0.5], np.float32)
    loss, td = r2d2.td_loss(q, targets, w)
    # per sequence: 0.5 * (1 + 9 + 4) = 7, 0.5 * (0 + 4 + 1) = 2.5; mean(1*7, 0.5*2.5)
    assert float(loss) == pytest.approx((7.0 + 1.25) / 2)
    np.testing.assert_allclose(td.numpy(), np.abs(targets))


def test_per_env_epsilons_follow_ape_x():
    eps = r2d2.per_env_epsilons(num_envs=10, eval_envs=2, epsilon_base=0.4,
                                epsilon_alpha=7.0, eval_epsilon=0.01)
    n = 8
    expected = [0.4 ** (1 + 7.0 * i / (n - 1)) for i in range(n)] + [0.01, 0.01]
    np.testing.assert_allclose(eps, expected, rtol=1e-6)
    assert eps[0] == pytest.approx(0.4) and eps[n - 1] == pytest.approx(0.4 ** 8)
    one = r2d2.per_env_epsilons(2, 1, 0.4, 7.0, 0.05)
    np.testing.assert_allclose(one, [0.4, 0.05], rtol=1e-6)
    with pytest.raises(ValueError):
        r2d2.per_env_epsilons(2, 2, 0.4, 7.0, 0.0)
