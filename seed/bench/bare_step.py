"""A bare TensorFlow V-trace train step: the reference ``seed roofline`` holds the agent's to.

It does what :class:`seed.agents.vtrace_agent.VTraceAgent`'s train step does for an
Atari config -- the same torso (Nature CNN or IMPALA ResNet) over ``stack_size``
stacked 84x84 frames, the same batch and unroll, the V-trace actor-critic loss as a
mean over ``T x B``, Adam, a global-norm clip -- written the shortest way:
``tf.Variable`` weights, ``tf.nn`` ops, one ``tf.function``, observations fed
already stacked as ``[T + 1, B, 84, 84, stack_size]`` uint8, and no diagnostics.
Nothing here imports the suite's networks or losses, so the ratio
``agent step / bare step`` prices the suite's own structure: frame stacking inside
the unroll, host-side batch assembly, dtype conversions, the learning
diagnostics (issue 16's target is at least 0.9). Under a bfloat16 ``compute_dtype`` the
torso computes in bfloat16 as the agent's does (float32 variables cast at use, float32
heads and loss), so the ratio still prices the structure alone.
"""

from __future__ import annotations

import math

import keras
import numpy as np
import tensorflow as tf

from seed.bench.timing import step_timer

NETWORKS = ("nature_cnn", "impala_resnet")


def _he_uniform(shape, fan_in):
    limit = math.sqrt(6.0 / fan_in)
    return tf.Variable(tf.random.uniform(shape, -limit, limit), trainable=True)


def _conv(variables, k, c_in, c_out):
    variables.append(_he_uniform([k, k, c_in, c_out], k * k * c_in))
    variables.append(tf.Variable(tf.zeros([c_out])))
    return variables[-2], variables[-1]


def _dense(variables, n_in, n_out):
    variables.append(_he_uniform([n_in, n_out], n_in))
    variables.append(tf.Variable(tf.zeros([n_out])))
    return variables[-2], variables[-1]


def nature_torso(stack_size: int):
    """(variables, fn): Mnih et al. 2015 over ``[N, 84, 84, stack_size]`` floats."""
    v: list = []
    c1, c2, c3 = _conv(v, 8, stack_size, 32), _conv(v, 4, 32, 64), _conv(v, 3, 64, 64)
    fc = _dense(v, 7 * 7 * 64, 512)

    def torso(x):  # in x's dtype, the weights cast to it
        for (w, b), stride in ((c1, 4), (c2, 2), (c3, 1)):
            x = tf.nn.relu(tf.nn.conv2d(x, tf.cast(w, x.dtype), stride, "VALID")
                           + tf.cast(b, x.dtype))
        return tf.nn.relu(tf.matmul(tf.reshape(x, [tf.shape(x)[0], -1]),
                                    tf.cast(fc[0], x.dtype)) + tf.cast(fc[1], x.dtype))

    return v, torso, 512


def resnet_torso(stack_size: int, channels=(16, 32, 32), fc_size: int = 256):
    """(variables, fn): the IMPALA deep torso over ``[N, 84, 84, stack_size]`` floats."""
    v: list = []
    stacks, c_in, side = [], stack_size, 84
    for c in channels:
        stacks.append((_conv(v, 3, c_in, c), [(_conv(v, 3, c, c), _conv(v, 3, c, c))
                                              for _ in range(2)]))
        c_in, side = c, (side + 1) // 2
    fc = _dense(v, side * side * c_in, fc_size)

    def conv(x, wb):  # in x's dtype, the weights cast to it
        return tf.nn.conv2d(x, tf.cast(wb[0], x.dtype), 1, "SAME") + tf.cast(wb[1], x.dtype)

    def torso(x):
        for first, blocks in stacks:
            x = tf.nn.max_pool2d(conv(x, first), 3, 2, "SAME")
            for a, b in blocks:
                x = x + conv(tf.nn.relu(conv(tf.nn.relu(x), a)), b)
        x = tf.nn.relu(x)
        return tf.nn.relu(tf.matmul(tf.reshape(x, [tf.shape(x)[0], -1]),
                                    tf.cast(fc[0], x.dtype)) + tf.cast(fc[1], x.dtype))

    return v, torso, fc_size


def actor_critic_layers(network: str, num_actions: int, depth: int,
                        network_kwargs: dict | None = None):
    """(variables, torso, policy (w, b), baseline (w, b)) of a bare actor-critic network over
    ``[N, 84, 84, depth]`` floats, created in that order; ValueError for a network with no
    bare reference."""
    if network not in NETWORKS:
        raise ValueError(f"no bare reference for network {network!r}; one of {NETWORKS}")
    kwargs = dict(network_kwargs or {})
    if network == "nature_cnn":
        variables, torso, width = nature_torso(depth)
    else:
        variables, torso, width = resnet_torso(
            depth, tuple(kwargs.get("channels", (16, 32, 32))), int(kwargs.get("fc_size", 256)))
    return variables, torso, _dense(variables, width, num_actions), _dense(variables, width, 1)


def vtrace_targets(log_rhos, discounts, rewards, values, bootstrap):
    """V-trace ``vs`` and policy-gradient advantages (rho_bar = c_bar = 1, lambda = 1).

    A static Python loop over ``T`` (unrolled in the graph), written apart from
    :func:`seed.agents.vtrace.vtrace`; ``tests/bench/test_bare_step.py`` checks it against a
    NumPy loop.
    """
    rhos = tf.minimum(1.0, tf.exp(log_rhos))
    values_next = tf.concat([values[1:], bootstrap[None]], 0)
    deltas = rhos * (rewards + discounts * values_next - values)
    acc, out = tf.zeros_like(bootstrap), []
    for t in reversed(range(int(log_rhos.shape[0]))):
        acc = deltas[t] + discounts[t] * rhos[t] * acc
        out.append(acc)
    vs = tf.stack(out[::-1]) + values
    vs_next = tf.concat([vs[1:], bootstrap[None]], 0)
    return tf.stop_gradient(vs), tf.stop_gradient(rhos * (rewards + discounts * vs_next - values))


class BareTrainStep:
    """One V-trace optimizer step, ``step(obs, reward, done, action, behaviour_logits)``.

    ``obs`` ``[T + 1, B, 84, 84, S]`` uint8, ``reward`` float32 and ``done`` bool
    ``[T + 1, B]``, ``action`` int32 ``[T + 1, B]``, ``behaviour_logits``
    ``[T + 1, B, A]``. Step ``t``'s reward and done arrive with ``obs[t]``, as in the
    suite's unrolls.
    """

    def __init__(self, network: str, num_actions: int, stack_size: int = 4,
                 learning_rate: float = 4e-4, adam_epsilon: float = 1e-5,
                 grad_clip_norm: float = 0.5, discounting: float = 0.99,
                 baseline_cost: float = 0.5, entropy_cost: float = 0.01,
                 network_kwargs: dict | None = None, compute_dtype: str = "float32"):
        variables, self._torso, self._policy, self._baseline = actor_critic_layers(
            network, num_actions, stack_size, network_kwargs)
        self.variables = variables
        self._optimizer = keras.optimizers.Adam(learning_rate=learning_rate, epsilon=adam_epsilon)
        self._optimizer.build(variables)
        self._clip, self._gamma = grad_clip_norm, discounting
        self._baseline_cost, self._entropy_cost = baseline_cost, entropy_cost
        self._dtype = tf.as_dtype(compute_dtype)  # the torso's
        self.step = tf.function(self._step)

    def _step(self, obs, reward, done, action, behaviour_logits):
        steps, batch = tf.shape(obs)[0], tf.shape(obs)[1]
        with tf.GradientTape() as tape:
            x = tf.cast(tf.reshape(obs, tf.concat([[-1], tf.shape(obs)[2:]], 0)), tf.float32)
            features = tf.cast(self._torso(tf.cast(x / 255.0, self._dtype)), tf.float32)
            logits = tf.matmul(features, self._policy[0]) + self._policy[1]
            values = tf.squeeze(tf.matmul(features, self._baseline[0]) + self._baseline[1], -1)
            logits = tf.reshape(logits, [steps, batch, -1])
            values = tf.reshape(values, [steps, batch])
            actions = action[:-1]
            target_logp = -tf.nn.sparse_softmax_cross_entropy_with_logits(actions, logits[:-1])
            behaviour_logp = -tf.nn.sparse_softmax_cross_entropy_with_logits(
                actions, behaviour_logits[:-1])
            discounts = self._gamma * (1.0 - tf.cast(done[1:], tf.float32))
            vs, advantages = vtrace_targets(target_logp - behaviour_logp, discounts,
                                            tf.clip_by_value(reward[1:], -1.0, 1.0),
                                            values[:-1], values[-1])
            policy = tf.nn.log_softmax(logits[:-1])
            entropy = -tf.reduce_sum(tf.exp(policy) * policy, -1)
            loss = (-tf.reduce_mean(target_logp * advantages)
                    + self._baseline_cost * 0.5 * tf.reduce_mean(tf.square(vs - values[:-1]))
                    - self._entropy_cost * tf.reduce_mean(entropy))
        grads = tape.gradient(loss, self.variables)
        if self._clip > 0:
            grads, _ = tf.clip_by_global_norm(grads, self._clip)
        self._optimizer.apply_gradients(zip(grads, self.variables))
        return loss


def synthetic_batch(unroll_length: int, batch: int, num_actions: int, stack_size: int,
                    seed: int = 0) -> tuple:
    """Random inputs of the step's shapes (the cost does not depend on their values)."""
    rng = np.random.default_rng(seed)
    steps = unroll_length + 1
    obs = rng.integers(0, 256, (steps, batch, 84, 84, stack_size), dtype=np.uint8)
    reward = rng.choice(np.array([-1.0, 0.0, 1.0], np.float32), (steps, batch))
    done = rng.random((steps, batch)) < 0.05
    action = rng.integers(0, num_actions, (steps, batch)).astype(np.int32)
    logits = rng.normal(0.0, 0.1, (steps, batch, num_actions)).astype(np.float32)
    return obs, reward, done, action, logits


def bare_training_timer(config, num_actions: int, frames_per_step: int, min_steps: int = 3):
    """A :func:`seed.bench.timing.step_timer` of :class:`BareTrainStep` for ``config``'s
    network, batch, unroll, optimizer and train step dtype."""
    from seed.networks.precision import train_and_inference_dtypes
    stack_size = int(config.network_kwargs.get("stack_size", 4))
    kwargs = {k: v for k, v in config.network_kwargs.items() if k != "stack_size"}
    s = config.agent_config
    step = BareTrainStep(config.network, num_actions, stack_size, s.learning_rate,
                         s.adam_epsilon, s.grad_clip_norm, s.discounting, s.baseline_cost,
                         s.entropy_cost, kwargs,
                         train_and_inference_dtypes(config.compute_dtype)[0].name)
    # NumPy in, as a training loop receives its batch: the host-to-tensor copy is counted.
    inputs = synthetic_batch(int(config.unroll_length), int(config.batch_size), num_actions,
                             stack_size)
    trained = int(config.unroll_length) * int(config.batch_size)
    return step_timer(lambda: step.step(*inputs).numpy(), lambda _: trained, frames_per_step,
                      min_steps=min_steps)
