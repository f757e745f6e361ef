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

import numpy as np
import tensorflow as tf

from seed.networks.relu_recording import record_relu_output
from seed.networks import flops, heads, precision
from seed.networks.base import (batch_apply, call_step_or_unroll, core_input, create_variables,
                                unroll_core)
from seed.networks.layers import glorot_uniform, he_uniform, lecun_uniform, lstm_bias, lstm_step

# The layers here make their weights (``w``, ``b``) at construction, from the
# sizes given, rather than on the first call as seed.networks.layers does; the
# initialisers and the LSTM step are the shared ones: He-uniform for the ReLU
# torso, LeCun-uniform for the outputs (policy logits scaled by 0.01), Glorot
# for the LSTM (see seed.networks.layers).


def _glorot(shape, name):
    fan_in, fan_out = shape
    return tf.Variable(glorot_uniform(shape, fan_in, fan_out), name=name)


class _Dense(tf.Module):
    """y = activation(x @ w + b); He-uniform under a ReLU, else LeCun-uniform x ``init_scale``."""

    def __init__(self, in_size: int, out_size: int, activation=None, name=None,
                 init_scale: float = 1.0):
        super().__init__(name=name)
        shape = (in_size, out_size)
        kernel = (he_uniform(shape, in_size) if activation is tf.nn.relu
                  else lecun_uniform(shape, in_size, init_scale))
        with self.name_scope:
            self.w = tf.Variable(kernel, name="w")
            self.b = tf.Variable(tf.zeros([out_size]), name="b")
        self.activation = activation

    def __call__(self, x):
        flops.count_matmul(self.name, x, self.w)
        y = tf.matmul(x, tf.cast(self.w, x.dtype)) + tf.cast(self.b, x.dtype)
        if self.activation is None:
            return y
        y = self.activation(y)
        if self.activation is tf.nn.relu:
            record_relu_output(self.name, y)
        return y


class _LSTMCell(tf.Module):
    """A standard LSTM cell (gates i, f, g, o; forget-gate bias initialised to 1)."""

    def __init__(self, in_size: int, size: int, name=None):
        super().__init__(name=name)
        self.size = size
        with self.name_scope:
            self.w = _glorot((in_size + size, 4 * size), "w")
            self.b = tf.Variable(lstm_bias(size), name="b")

    def __call__(self, x, state):
        return lstm_step(x, state, self.w, self.b)


class MLPNetwork(tf.Module):
    """MLP torso, optional LSTM core, actor-critic or dueling-Q head.

    Follows the contract of :mod:`seed.networks.base`.
    """

    def __init__(self, num_actions: int, observation_space, head: str = "actor_critic",
                 hidden_sizes=(64, 64), lstm_size: int = 0, name: str = "mlp_network"):
        super().__init__(name=name)
        if head not in heads.HEADS:
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
                self._policy = _Dense(size, self.num_actions, name="policy_logits",
                                      init_scale=heads.POLICY_INIT_SCALE)
                self._baseline = _Dense(size, 1, name="baseline")
            else:
                self._value = _Dense(size, 1, name="value")
                self._advantage = _Dense(size, self.num_actions, name="advantage")

        # Every variable already exists (created above); one call on dummy input
        # checks that the shapes fit together before anyone relies on them.
        create_variables(self, self.observation_shape, tf.as_dtype(self.observation_dtype))

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

    def _torso_features(self, observation):
        return precision.torso_in_compute_dtype(self._torso_layers,
                                                self._flat_observation(observation))

    def _torso_layers(self, x):
        for layer in self._torso:
            x = layer(x)
        return x

    def __call__(self, prev_action, env_output, core_state, unroll=False):
        return call_step_or_unroll(self._unroll, prev_action, env_output, core_state, unroll)

    def _unroll(self, prev_action, env_output, core_state):
        """Time-major [T, B, ...] inputs -> ({name: [T, B, ...]}, final core state)."""
        done = tf.cast(env_output.done, tf.bool)
        x = batch_apply(self._torso_features, env_output.observation)  # [T, B, F]
        if self.lstm_size > 0:
            # Zeroed where done: they belong to the episode that ended (as every network here).
            core_in = core_input(x, env_output.reward, prev_action, done, self.num_actions)
            x, core_state = unroll_core(self._core, core_in, done, tuple(core_state),
                                        self.initial_state)
        else:
            core_state = ()
        return batch_apply(self._head, x), core_state

    def _head(self, x):
        if self.head == "actor_critic":
            return heads.actor_critic(self._policy, self._baseline, x)
        value = self._value(x)
        advantage = self._advantage(x)
        # Not heads.dueling: this sums in another order (same Q up to rounding).
        return {"q_values": value + advantage - tf.reduce_mean(advantage, axis=-1,
                                                                keepdims=True)}
