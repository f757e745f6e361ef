"""V-trace off-policy targets (IMPALA, Espeholt et al. 2018, Sec. 4) and the actor-critic loss.

All tensors are time-major ``[T, B]``. For a step ``s``::

    rho_t   = min(rho_bar, exp(log_rho_t))                  (clip_rho_threshold)
    c_t     = lambda * min(1, exp(log_rho_t))               (lambda_ as in SEED RL)
    delta_t = rho_t * (r_t + gamma_t * V(x_{t+1}) - V(x_t))
    v_s     = V(x_s) + sum_{t>=s} (prod_{i=s}^{t-1} gamma_i c_i) delta_t
    A_s     = min(rho_pg_bar, exp(log_rho_s)) * (r_s + gamma_s * v_{s+1} - V(x_s))

with ``V(x_T) = v_T = bootstrap_value`` and per-step discounts ``gamma_t``
(0 where the episode ended). ``v_s`` is computed backwards with
``v_s - V(x_s) = delta_s + gamma_s c_s (v_{s+1} - V(x_{s+1}))``.

Loss and optimizer convention (every committed config follows it)
-------------------------------------------------------------------
Each loss term is a **mean** over the ``T x B`` steps of a batch
(``loss_reduction: mean``), as upstream SEED RL's ``agents/vtrace/learner.py``,
and the optimizer is **Adam**, as upstream SEED (Atari, DMLab, Football).
Settings from a source that **sums** over the steps (the IMPALA paper's code,
TorchBeast) must be converted, since every gradient is then ``N = T x B``
times larger: with RMSprop's epsilon inside the square root (TF1, Keras),
``epsilon_mean = epsilon_sum / N^2`` and a gradient-norm clip
``clip_mean = clip_sum / N``; Adam's steps are invariant to the scale except
through its epsilon. Taken unconverted -- the IMPALA paper's RMSprop
(lr 6e-4, epsilon 0.01, clip 40) on mean losses -- the epsilon floor swamps the
gradients and updates come out ~30x too small (issue 13); the check in
``tests/agents/test_optimizer_settings.py`` fails for exactly that. ``loss_reduction:
sum`` exists to run a summed-loss source verbatim. Each config's YAML says
where each number comes from.
"""

from __future__ import annotations

import tensorflow as tf

from seed.agents.diagnostics import explained_variance


def vtrace(log_rhos, discounts, rewards, values, bootstrap_value,
           clip_rho_threshold=1.0, clip_pg_rho_threshold=1.0, lambda_=1.0):
    """V-trace targets ``vs`` and policy-gradient advantages, both ``[T, B]``.

    ``log_rhos`` = log pi(a_t|x_t) - log mu(a_t|x_t); ``bootstrap_value`` is
    ``[B]``. A threshold of None disables that clipping. Neither output carries
    a gradient.
    """
    log_rhos = tf.convert_to_tensor(log_rhos, tf.float32)
    discounts = tf.convert_to_tensor(discounts, tf.float32)
    rewards = tf.convert_to_tensor(rewards, tf.float32)
    values = tf.convert_to_tensor(values, tf.float32)
    bootstrap_value = tf.convert_to_tensor(bootstrap_value, tf.float32)

    rhos = tf.exp(log_rhos)
    clipped_rhos = rhos if clip_rho_threshold is None else tf.minimum(
        tf.cast(clip_rho_threshold, tf.float32), rhos)
    cs = tf.cast(lambda_, tf.float32) * tf.minimum(1.0, rhos)

    values_next = tf.concat([values[1:], bootstrap_value[None]], axis=0)
    deltas = clipped_rhos * (rewards + discounts * values_next - values)

    def backward(acc, step):
        discount, c, delta = step
        return delta + discount * c * acc

    vs_minus_v = tf.scan(backward, (discounts, cs, deltas),
                         initializer=tf.zeros_like(bootstrap_value), reverse=True)
    vs = vs_minus_v + values

    vs_next = tf.concat([vs[1:], bootstrap_value[None]], axis=0)
    pg_rhos = rhos if clip_pg_rho_threshold is None else tf.minimum(
        tf.cast(clip_pg_rho_threshold, tf.float32), rhos)
    pg_advantages = pg_rhos * (rewards + discounts * vs_next - values)
    return tf.stop_gradient(vs), tf.stop_gradient(pg_advantages)


def _log_prob(logits, actions):
    """log softmax(logits)[action] for [T, B, A] logits and [T, B] actions."""
    return -tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.cast(actions, tf.int32), logits=logits)


LOSS_REDUCTIONS = ("mean", "sum")


def actor_critic_loss(learner_logits, learner_baseline, bootstrap_value, behaviour_logits,
                      actions, rewards, dones, discounting, baseline_cost, entropy_cost,
                      lambda_=1.0, max_abs_reward=0.0, reduction="mean"):
    """The IMPALA/SEED V-trace actor-critic loss over time-major ``[T, B]`` inputs.

    Inputs are already time-aligned (see :func:`align_unroll`): step ``t``
    took ``actions[t]`` from the learner's ``learner_logits[t]`` /
    behaviour's ``behaviour_logits[t]``, then got ``rewards[t]`` and
    ``dones[t]`` (True: the episode ended after this step).

    Conventions follow upstream SEED's ``seed_rl/agents/vtrace/learner.py``:
    every term is a *mean* over the ``T x B`` steps::

        policy_loss   = -mean(log pi(a_t|x_t) * A_t)
        baseline_loss = baseline_cost * 0.5 * mean((v_t - V(x_t))^2)
        entropy_loss  = -entropy_cost * mean(H(pi(.|x_t)))
        total         = policy_loss + baseline_loss + entropy_loss

    ``reduction="sum"`` sums each term over the ``T x B`` steps instead, the
    convention of the IMPALA paper's code and TorchBeast. The two differ by the
    factor ``T x B`` in every gradient, so optimizer settings tuned for one are
    wrong for the other (an RMSprop epsilon by ``(T x B)^2``, a gradient-norm
    clip by ``T x B``): every committed config uses ``"mean"`` with Adam.

    Returns ``(total_loss, metrics)`` where metrics are scalar tensors.
    """
    rewards = tf.cast(rewards, tf.float32)
    if max_abs_reward and max_abs_reward > 0:
        rewards = tf.clip_by_value(rewards, -float(max_abs_reward), float(max_abs_reward))
    discounts = tf.cast(tf.logical_not(tf.cast(dones, tf.bool)), tf.float32) * discounting

    target_log_probs = _log_prob(learner_logits, actions)
    behaviour_log_probs = _log_prob(behaviour_logits, actions)
    log_rhos = target_log_probs - behaviour_log_probs

    vs, pg_advantages = vtrace(log_rhos, discounts, rewards, learner_baseline, bootstrap_value,
                               lambda_=lambda_)

    if reduction not in LOSS_REDUCTIONS:
        raise ValueError(f"unknown loss reduction {reduction!r}; known: {LOSS_REDUCTIONS}")
    reduce = tf.reduce_mean if reduction == "mean" else tf.reduce_sum
    policy_loss = -reduce(target_log_probs * pg_advantages)
    baseline_loss = baseline_cost * 0.5 * reduce(tf.square(vs - learner_baseline))
    log_pi = tf.nn.log_softmax(learner_logits)
    step_entropy = -tf.reduce_sum(tf.exp(log_pi) * log_pi, axis=-1)
    entropy_loss = -entropy_cost * reduce(step_entropy)
    total = policy_loss + baseline_loss + entropy_loss
    metrics = {
        "loss": total,
        "policy_loss": policy_loss,
        "baseline_loss": baseline_loss,
        "entropy_loss": entropy_loss,
        "entropy": tf.reduce_mean(step_entropy),         # nats per step, either reduction
        "mean_rho": tf.reduce_mean(tf.exp(log_rhos)),
        "mean_abs_log_rho": tf.reduce_mean(tf.abs(log_rhos)),  # policy lag
        "max_abs_log_rho": tf.reduce_max(tf.abs(log_rhos)),    # its worst step
        "value_loss": 0.5 * tf.reduce_mean(tf.square(vs - learner_baseline)),
        "explained_variance": explained_variance(vs, learner_baseline),
        "mean_vs": tf.reduce_mean(vs),
    }
    return total, metrics


def align_unroll(learner_outputs, agent_output, env_output):
    """Time-align a ``T + 1``-step unroll for :func:`actor_critic_loss` (upstream SEED).

    ``learner_outputs`` is the learner network run over all ``T + 1`` steps.
    Returns a dict with ``learner_logits``, ``learner_baseline`` (steps
    ``[:-1]``), ``bootstrap_value`` (learner baseline of the last step),
    ``behaviour_logits`` and ``actions`` (the behaviour's ``[:-1]``) and
    ``rewards``/``dones`` (env outputs ``[1:]``: what followed each action).
    """
    return {
        "learner_logits": learner_outputs["policy_logits"][:-1],
        "learner_baseline": learner_outputs["baseline"][:-1],
        "bootstrap_value": learner_outputs["baseline"][-1],
        "behaviour_logits": agent_output["policy_logits"][:-1],
        "actions": agent_output["action"][:-1],
        "rewards": env_output.reward[1:],
        "dones": env_output.done[1:],
    }
