"""A small fully connected network (optionally with an LSTM core) for toy and classic-control envs.

Layout, as upstream SEED's small-env networks::

    observation -> flatten, float32 (uint8 scaled by 1/255)
                -> MLP torso (ReLU layers of ``hidden_sizes``)
                -> [LSTM core over concat(torso, clip(reward, -1, 1), one_hot(prev_action))]
                -> head

Heads: ``"actor_critic"`` gives ``{'policy_logits' [.., A], 'baseline' [..]}``;
``"q"`` gives ``{'q_values' [.., A]}`` from a dueling head (value + advantage -
mean advantage).

The layers are plain ``tf.Module`` s holding ``tf.Variable`` s, so
``trainable_variables`` lists every weight and all weights exist as soon as the
network is constructed (an IMPALA actor can copy parameters before its first
step). Initial weights come from TF's global random state
(``tf.random.set_seed`` makes them reproducible).
"""

from __future__ import annotations

import math

import numpy as np
import tensorflow as tf

from seed.networks.base import unroll_core
from seed.types import EnvOutput


def _glorot(shape, name):
    fan_in, fan_out = shape
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    return tf.Variable(tf.random.uniform(shape, -limit, limit, dtype=tf.float32), name=name)


class _Dense(tf.Module):
    """y = activation(x @ w + b)."""

    def __init__(self, in_size: int, out_size: int, activation=None, name=None):
        super().__init__(name=name)
        with self.name_scope:
            self.w = _glorot((in_size, out_size), "w")
            self.b = tf.Variable(tf.zeros([out_size]), name="b")
        self.activation = activation

    def __call__(self, x):
        y = tf.matmul(x, self.w) + self.b
        return self.activation(y) if self.activation is not None else y


class _LSTMCell(tf.Module):
    """A standard LSTM cell (gates i, f, g, o; forget-gate bias initialised to 1)."""

    def __init__(self, in_size: int, size: int, name=None):
        super().__init__(name=name)
        self.size = size
        with self.name_scope:
            self.w = _glorot((in_size + size, 4 * size), "w")
            self.b = tf.Variable(
                np.concatenate([np.zeros(size), np.ones(size), np.zeros(2 * size)])
                .astype(np.float32), name="b")

    def __call__(self, x, state):
        h, c = state
        z = tf.matmul(tf.concat([x, h], axis=-1), self.w) + self.b
        i, f, g, o = tf.split(z, 4, axis=-1)
        c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
        h = tf.sigmoid(o) * tf.tanh(c)
        return h, (h, c)


class MLPNetwork(tf.Module):
    """MLP torso, optional LSTM core, actor-critic or dueling-Q head.

    Follows the contract of :mod:`seed.networks.base`.
    """

    def __init__(self, num_actions: int, observation_space, head: str = "actor_critic",
                 hidden_sizes=(64, 64), lstm_size: int = 0, name: str = "mlp_network"):
        super().__init__(name=name)
        if head not in ("actor_critic", "q"):
            raise ValueError(f"MLPNetwork head must be 'actor_critic' or 'q', not {head!r}")
        self.num_actions = int(num_actions)
        self.head = head
        self.lstm_size = int(lstm_size)
        self.observation_shape = tuple(int(d) for d in (observation_space.shape or ()))
        self.observation_dtype = np.dtype(observation_space.dtype)
        self._obs_size = int(np.prod(self.observation_shape)) if self.observation_shape else 1

        with self.name_scope:
            self._torso = []
            size = self._obs_size
            for i, h in enumerate(hidden_sizes):
                self._torso.append(_Dense(size, int(h), tf.nn.relu, name=f"torso_{i}"))
                size = int(h)
            self._torso_size = size
            if self.lstm_size > 0:
                self._core = _LSTMCell(size + 1 + self.num_actions, self.lstm_size, name="lstm")
                size = self.lstm_size
            if head == "actor_critic":
                self._policy = _Dense(size, self.num_actions, name="policy_logits")
                self._baseline = _Dense(size, 1, name="baseline")
            else:
                self._value = _Dense(size, 1, name="value")
                self._advantage = _Dense(size, self.num_actions, name="advantage")

        # Every variable already exists (created above); one call on dummy input
        # checks that the shapes fit together before anyone relies on them.
        dummy = EnvOutput(
            reward=tf.zeros([1]), done=tf.zeros([1], tf.bool),
            observation=tf.zeros((1,) + self.observation_shape,
                                 tf.as_dtype(self.observation_dtype)))
        self(tf.zeros([1], tf.int32), dummy, self.initial_state(1))

    def initial_state(self, batch_size):
        if self.lstm_size <= 0:
            return ()
        zeros = tf.zeros([batch_size, self.lstm_size], tf.float32)
        return (zeros, zeros)

    def _flat_observation(self, observation):
        """[N, *obs_shape] in wire form -> float32 [N, obs_size]."""
        obs = tf.convert_to_tensor(observation)
        if obs.dtype == tf.uint8:
            obs = tf.cast(obs, tf.float32) / 255.0
        else:
            obs = tf.cast(obs, tf.float32)
        return tf.reshape(obs, [-1, self._obs_size])

    def __call__(self, prev_action, env_output, core_state, unroll=False):
        if not unroll:
            add_time = lambda t: tf.expand_dims(tf.convert_to_tensor(t), 0)  # noqa: E731
            outputs, state = self._unroll(
                add_time(prev_action), EnvOutput(*(add_time(x) for x in env_output)),
                core_state)
            return {k: v[0] for k, v in outputs.items()}, state
        return self._unroll(tf.convert_to_tensor(prev_action),
                            EnvOutput(*(tf.convert_to_tensor(x) for x in env_output)),
                            core_state)

    def _unroll(self, prev_action, env_output, core_state):
        """Time-major [T, B, ...] inputs -> ({name: [T, B, ...]}, final core state)."""
        done = tf.cast(env_output.done, tf.bool)
        time_batch = tf.shape(done)  # [T, B]
        x = self._flat_observation(env_output.observation)  # [T*B, F]
        for layer in self._torso:
            x = layer(x)
        x = tf.reshape(x, tf.concat([time_batch, [self._torso_size]], 0))

        if self.lstm_size > 0:
            reward = tf.clip_by_value(tf.cast(env_output.reward, tf.float32), -1.0, 1.0)
            one_hot = tf.one_hot(tf.cast(prev_action, tf.int32), self.num_actions)
            core_in = tf.concat([x, reward[..., None], one_hot], axis=-1)
            x, core_state = unroll_core(self._core, core_in, done, tuple(core_state),
                                        self.initial_state)
        else:
            core_state = ()

        size = x.shape[-1]
        flat = tf.reshape(x, [-1, size])

        def back(t):
            return tf.reshape(t, tf.concat([time_batch, tf.shape(t)[1:]], 0))

        if self.head == "actor_critic":
            outputs = {"policy_logits": back(self._policy(flat)),
                       "baseline": back(tf.squeeze(self._baseline(flat), -1))}
        else:
            value = self._value(flat)
            advantage = self._advantage(flat)
            q = value + advantage - tf.reduce_mean(advantage, axis=-1, keepdims=True)
            outputs = {"q_values": back(q)}
        return outputs, core_state
