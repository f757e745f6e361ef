"""Pure functions of R2D2 (Kapturowski et al., 2019), as SEED RL's R2D2 learner uses them.

Time alignment (the step convention of :mod:`seed.types`): an unroll holds
steps ``0..T``. ``reward[t]`` is the reward of the action taken at ``t - 1``
and ``done[t]`` says ``observation[t]`` starts a new episode. So the
transition out of step ``t`` (action ``a_t``) yields ``reward[t + 1]`` and
the episode continues past it iff ``not done[t + 1]``. Q is learnt for steps
``t = 0..T-1``; step ``T`` only serves as bootstrap.

:func:`n_step_bellman_targets` works on *transition-aligned* inputs of length
``L``: ``rewards[i]`` and ``dones[i]`` belong to the transition out of step
``i`` (i.e. ``reward[i + 1]``, ``done[i + 1]`` of the unroll) and
``bootstrap[i]`` is the value of the state reached by it (step ``i + 1``).
:func:`r2d2_targets` does that shift for whole unrolls.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf


def value_rescale(x, eps: float = 1e-3):
    """h(x) = sign(x) (sqrt(|x| + 1) - 1) + eps x  (Pohlen et al., 2018)."""
    x = tf.convert_to_tensor(x)
    return tf.math.sign(x) * (tf.math.sqrt(tf.math.abs(x) + 1.0) - 1.0) + eps * x


def value_rescale_inverse(x, eps: float = 1e-3):
    """h^-1(x), the closed form of Pohlen et al. (2018), Proposition A.2.

    h^-1(x) = sign(x) (((sqrt(1 + 4 eps (|x| + 1 + eps)) - 1) / (2 eps))^2 - 1).

    Computed as sign(x) ((2 (|x| + 1 + eps) / (sqrt(1 + 4 eps (|x| + 1 + eps)) + 1))^2 - 1),
    the same value without the cancellation of ``sqrt(1 + small) - 1`` (which
    costs float32 about three digits at eps = 1e-3), and valid at eps = 0.
    """
    x = tf.convert_to_tensor(x)
    a = tf.math.abs(x) + 1.0 + eps
    root_of_x_plus_1 = 2.0 * a / (tf.math.sqrt(1.0 + 4.0 * eps * a) + 1.0)
    return tf.math.sign(x) * (tf.math.square(root_of_x_plus_1) - 1.0)


def n_step_bellman_targets(rewards, dones, bootstrap, discount: float, n_steps: int):
    """n-step returns, cut at episode ends and at the end of the sequence.

    Inputs are transition-aligned, time-major ``[L, B]`` (see the module doc).
    For each ``i``, with ``m = min(n_steps, L - i)`` steps available::

        y_i = sum_{k<m} discount^k notdone(i, k) rewards[i + k]
              + discount^m notdone(i, m) bootstrap[i + m - 1]

    where ``notdone(i, k) = prod_{j<k} (1 - dones[i + j])``: nothing after a
    done counts, not even the bootstrap. Near the end of the sequence fewer
    than ``n_steps`` rewards remain and the last bootstrap value is used, as
    upstream's ``n_step_bellman_target`` does.
    """
    if n_steps < 1:
        raise ValueError(f"n_steps must be >= 1, got {n_steps}")
    rewards = tf.convert_to_tensor(rewards, tf.float32)
    bootstrap = tf.convert_to_tensor(bootstrap, tf.float32)
    length = rewards.shape[0]
    if not length:
        raise ValueError("n_step_bellman_targets needs a static, non-empty time dimension")

    def pad(x, value):  # x [L, B] -> [L + n_steps, B], padded at the end with value
        tail = tf.fill(tf.concat([[n_steps], tf.shape(x)[1:]], 0), value)
        return tf.concat([x, tail], 0)

    padded_rewards = pad(rewards, 0.0)
    padded_not_done = pad(1.0 - tf.cast(dones, tf.float32), 1.0)
    in_range = pad(tf.ones_like(rewards), 0.0)  # 1 where a transition exists
    returns = tf.zeros_like(rewards)
    scale = tf.ones_like(rewards)  # discount^k notdone(i, k) over the steps taken so far
    for k in range(n_steps):
        valid = in_range[k:k + length]
        returns += scale * padded_rewards[k:k + length]
        scale *= valid * discount * padded_not_done[k:k + length] + (1.0 - valid)
    # bootstrap[min(i + n_steps - 1, L - 1)]
    extended = tf.concat([bootstrap] + [bootstrap[-1:]] * (n_steps - 1), 0)
    boot = extended[n_steps - 1:n_steps - 1 + length]
    return returns + scale * boot


def r2d2_targets(online_q, target_q, reward, done, discount: float, n_steps: int,
                 eps: float = 1e-3):
    """Value-rescaled n-step double-Q targets for steps ``0..T-1`` of an unroll.

    ``online_q`` and ``target_q`` are ``[T+1, B, A]``; ``reward`` and ``done``
    are ``[T+1, B]`` in the :mod:`seed.types` convention. Returns ``[T, B]``::

        target_t = h(sum_k discount^k reward[t+k+1] + discount^n h^-1(Q_target(s_{t+n}, a*)))
        a* = argmax_a Q_online(s_{t+n}, a)

    cut at episode ends and at the end of the unroll. No gradient flows through it.
    """
    online_q = tf.stop_gradient(online_q)
    target_q = tf.stop_gradient(target_q)
    best = tf.argmax(online_q[1:], axis=-1, output_type=tf.int32)
    q_next = tf.gather(target_q[1:], best, axis=-1, batch_dims=2)
    returns = n_step_bellman_targets(reward[1:], done[1:],
                                     value_rescale_inverse(q_next, eps), discount, n_steps)
    return tf.stop_gradient(value_rescale(returns, eps))


def sequence_priorities(abs_td, eta: float = 0.9):
    """Priority per sequence from |TD| ``[T, B]``: eta * max_t + (1 - eta) * mean_t."""
    abs_td = tf.convert_to_tensor(abs_td)
    return eta * tf.reduce_max(abs_td, 0) + (1.0 - eta) * tf.reduce_mean(abs_td, 0)


def td_loss(q_taken, targets, importance_weights):
    """Upstream's loss: mean over the batch of w_b * 0.5 * sum_t td[t, b]^2.

    ``q_taken`` and ``targets`` are ``[T, B]``, ``importance_weights`` ``[B]``.
    Returns (scalar loss, |td| ``[T, B]``).
    """
    td = targets - q_taken
    per_sequence = 0.5 * tf.reduce_sum(tf.square(td), 0)
    return tf.reduce_mean(importance_weights * per_sequence), tf.abs(td)


def per_env_epsilons(num_envs: int, eval_envs: int, epsilon_base: float,
                     epsilon_alpha: float, eval_epsilon: float) -> np.ndarray:
    """Exploration epsilon of every env id, as in Ape-X and R2D2.

    Training env ``i`` of ``N = num_envs - eval_envs`` gets
    ``epsilon_base ** (1 + epsilon_alpha * i / (N - 1))`` (``epsilon_base`` when
    ``N == 1``); the last ``eval_envs`` ids get ``eval_epsilon``.
    """
    n = num_envs - eval_envs
    if n < 1:
        raise ValueError(f"{eval_envs} eval envs out of {num_envs} leave none to train on")
    exponents = 1.0 + epsilon_alpha * np.arange(n) / max(n - 1, 1)
    train = np.power(float(epsilon_base), exponents)
    return np.concatenate([train, np.full(eval_envs, eval_epsilon)]).astype(np.float32)
