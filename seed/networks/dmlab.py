"""The IMPALA deep network for DeepMind Lab: ResNet torso + LSTM core + head.

As SEED RL's ``ImpalaDeep`` (seed_rl dmlab/networks.py) and IMPALA's deep
agent (Espeholt et al. 2018, figure 3, without the language LSTM):

    frame [72, 96, 3] uint8 -> /255 -> ImpalaResNetTorso (stacks of ``channels``,
          FC ``fc_size`` + ReLU)
    -> concat(torso, clip(reward, -1, 1), one_hot(prev_action))
    -> LSTM(``lstm_size``), reset where ``done``
    -> head

Heads: ``"actor_critic"`` gives ``{'policy_logits': [.., A], 'baseline': [..]}``;
``"q"`` gives dueling ``{'q_values': [.., A]}`` (value + advantage - mean advantage).

Core state: ``(h, c)``, each ``[B, lstm_size]``. Where ``done`` the LSTM state is
reset and the reward and previous action fed to it are zeroed: they belong to
the episode that ended. There is no instruction (language) input: the adapter
sends frames only, as SEED's DMLab setup does for single levels.
"""

from __future__ import annotations

import tensorflow as tf

from seed.networks.atari import ImpalaResNetTorso
from seed.networks.base import unroll_core
from seed.networks.layers import Dense, LSTMCell
from seed.types import EnvOutput

HEADS = ("actor_critic", "q")


class DMLabNetwork(tf.Module):
    """ResNet torso, LSTM core and an actor-critic or dueling-Q head over DMLab frames."""

    def __init__(self, num_actions: int, observation_space, head: str = "actor_critic",
                 lstm_size: int = 256, channels=(16, 32, 32), fc_size: int = 256):
        super().__init__(name="dmlab_network")
        if head not in HEADS:
            raise ValueError(f"unknown head {head!r}; known: {', '.join(HEADS)}")
        shape = tuple(int(d) for d in observation_space.shape)
        if len(shape) != 3:
            raise ValueError(f"expected [H, W, C] frames, got observation shape {shape}")
        if lstm_size < 1:
            raise ValueError(f"lstm_size must be at least 1, got {lstm_size}")
        self.num_actions = int(num_actions)
        self.head = head
        self.lstm_size = int(lstm_size)
        self._frame_shape = shape
        self._frame_dtype = tf.as_dtype(observation_space.dtype)
        self._scale = 1.0 / 255.0 if self._frame_dtype == tf.uint8 else 1.0
        with self.name_scope:
            self._torso = ImpalaResNetTorso(tuple(channels), fc_size)
            self._lstm = LSTMCell(self.lstm_size)
            if head == "actor_critic":
                self._policy = Dense(self.num_actions)
                self._baseline = Dense(1)
            else:
                self._value = Dense(1)
                self._advantage = Dense(self.num_actions, use_bias=False)
        # Create every variable now, so trainable_variables is complete before the first step.
        self(tf.zeros([1], tf.int32),
             EnvOutput(tf.zeros([1]), tf.zeros([1], tf.bool),
                       tf.zeros((1,) + shape, self._frame_dtype)),
             self.initial_state(1))

    def initial_state(self, batch_size):
        return self._lstm.zero_state(batch_size)

    def __call__(self, prev_action, env_output, core_state, unroll=False):
        if not unroll:
            prev_action, env_output = tf.nest.map_structure(
                lambda x: tf.expand_dims(x, 0), (prev_action, env_output))
            outputs, state = self._unroll(prev_action, env_output, core_state)
            return tf.nest.map_structure(lambda x: tf.squeeze(x, 0), outputs), state
        return self._unroll(prev_action, env_output, core_state)

    def _unroll(self, prev_action, env_output, core_state):
        env_output = EnvOutput(*env_output)
        done = tf.cast(env_output.done, tf.bool)
        frames = tf.convert_to_tensor(env_output.observation)
        steps = frames.shape[0]
        batch = tf.shape(frames)[1]
        x = tf.cast(frames, tf.float32) * self._scale
        x = tf.reshape(x, tf.concat([[-1], tf.shape(x)[2:]], 0))  # [T*B, H, W, C]
        x = self._torso(x)
        x = tf.reshape(x, [steps, batch, x.shape[-1]])
        keep = 1.0 - tf.cast(done, tf.float32)
        reward = tf.clip_by_value(tf.cast(env_output.reward, tf.float32), -1.0, 1.0)
        action = tf.one_hot(tf.cast(prev_action, tf.int32), self.num_actions)
        x = tf.concat([x, (reward * keep)[..., None], action * keep[..., None]], -1)
        x, state = unroll_core(self._lstm, x, done, tuple(core_state), self._lstm.zero_state)
        x = tf.reshape(x, [-1, self.lstm_size])
        outputs = self._head(x)
        outputs = {k: tf.reshape(v, tf.concat([[steps, batch], tf.shape(v)[1:]], 0))
                   for k, v in outputs.items()}
        return outputs, tuple(state)

    def _head(self, x):
        if self.head == "actor_critic":
            return {"policy_logits": self._policy(x),
                    "baseline": tf.squeeze(self._baseline(x), -1)}
        advantage = self._advantage(x)
        advantage -= tf.reduce_mean(advantage, -1, keepdims=True)
        return {"q_values": self._value(x) + advantage}
