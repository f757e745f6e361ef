"""Atari networks: the Nature DQN CNN and the IMPALA deep ResNet, with frame stacking.

Observations arrive one frame at a time (``[.., 84, 84, 1]`` uint8, the wire
form of :mod:`envs.atari`). The network keeps the last ``stack_size`` frames per
env in its core state (:mod:`seed.networks.frame_stack`) and rebuilds that
stack from zeros where ``done`` starts a new episode. Frames are scaled by
1/255 and run through a torso; an optional LSTM core (``lstm_size > 0``) takes
the torso output, the clipped reward and the one-hot previous action, as
upstream SEED does; then a head:

* ``head="actor_critic"``: ``{'policy_logits': [.., A], 'baseline': [..]}``;
* ``head="q"``: dueling ``{'q_values': [.., A]}`` = value + advantage - mean
  advantage (Wang et al. 2016), as R2D2 uses.

Core state: ``(frame_stack,)`` or ``(frame_stack, h, c)``, batch axis first.
Where ``done``, the LSTM state is reset and the reward and previous action fed
to it are zeroed (they belong to the episode that ended), so nothing of the
previous episode reaches the new one.

The torso computes in the agent's compute dtype, the LSTM and the head in float32
(:mod:`seed.networks.precision`).
"""

from __future__ import annotations

import tensorflow as tf

from seed.networks import frame_stack, heads, precision
from seed.networks.base import (at_least_one, batch_apply, call_step_or_unroll, core_input,
                                create_variables, frame_spec, unroll_core)
from seed.networks.layers import Conv2D, Dense, LSTMCell

HEADS = heads.HEADS


class NatureCNNTorso(tf.Module):
    """Mnih et al. (2015): conv 32x8x8/4, 64x4x4/2, 64x3x3/1, FC 512, all ReLU."""

    def __init__(self, fc_size: int = 512, name: str | None = None):
        super().__init__(name=name)
        with self.name_scope:
            self._convs = [Conv2D(32, 8, 4, "VALID", tf.nn.relu, name="conv1"),
                           Conv2D(64, 4, 2, "VALID", tf.nn.relu, name="conv2"),
                           Conv2D(64, 3, 1, "VALID", tf.nn.relu, name="conv3")]
            self._fc = Dense(fc_size, tf.nn.relu, name="fc")
        self.fc_size = fc_size

    def __call__(self, x):
        for conv in self._convs:
            x = conv(x)
        return self._fc(tf.reshape(x, [tf.shape(x)[0], -1]))


class ResidualStack(tf.Module):
    """IMPALA stack: conv 3x3, max pool 3x3/2, two blocks of (ReLU, conv, ReLU, conv) + skip."""

    def __init__(self, channels: int, num_blocks: int = 2, name: str | None = None,
                 kernel_init: str = "he_uniform"):
        super().__init__(name=name)
        with self.name_scope:
            # A ReLU follows each of these convs (after the pool, inside the blocks).
            self._conv = Conv2D(channels, 3, kernel_init=kernel_init)
            self._blocks = [(Conv2D(channels, 3, kernel_init=kernel_init),
                             Conv2D(channels, 3, kernel_init=kernel_init))
                            for _ in range(num_blocks)]

    def __call__(self, x):
        x = tf.nn.max_pool2d(self._conv(x), 3, 2, "SAME")
        for conv0, conv1 in self._blocks:
            x = x + conv1(tf.nn.relu(conv0(tf.nn.relu(x))))
        return x


class ImpalaResNetTorso(tf.Module):
    """The IMPALA deep torso (Espeholt et al. 2018): residual stacks, ReLU, FC + ReLU.

    Call it on float images ``[N, H, W, C]`` (already scaled); returns ``[N, fc_size]``.
    Weights are created on the first call: call it once eagerly before tracing.
    ``kernel_init``: every conv's and the FC's (:mod:`seed.networks.layers`).
    ``fc_layer_norm``: the FC's outputs layer-normalised before its ReLU, so what follows
    the torso (an LSTM) sees the same scale however the torso grows.
    """

    def __init__(self, channels=(16, 32, 32), fc_size: int = 256, name: str | None = None,
                 kernel_init: str = "he_uniform", fc_layer_norm: bool = False):
        super().__init__(name=name)
        with self.name_scope:
            self._stacks = [ResidualStack(c, kernel_init=kernel_init) for c in channels]
            self._fc = Dense(fc_size, tf.nn.relu, name="fc", kernel_init=kernel_init,
                             layer_norm=fc_layer_norm)
        self.fc_size = fc_size

    def __call__(self, x):
        for stack in self._stacks:
            x = stack(x)
        x = tf.nn.relu(x)
        return self._fc(tf.reshape(x, [tf.shape(x)[0], -1]))


class _AtariNetwork(tf.Module):
    """Frame stack -> torso -> optional LSTM -> actor-critic or dueling Q head."""

    def __init__(self, num_actions: int, observation_space, torso, head: str, stack_size: int,
                 lstm_size: int, head_hidden: int, name: str):
        super().__init__(name=name)
        self.head = heads.check_head(head)
        shape, self._frame_dtype, self._scale = frame_spec(observation_space)
        self.stack_size = at_least_one("stack_size", stack_size)
        self.num_actions = int(num_actions)
        self.lstm_size = int(lstm_size)
        self._frame_shape = shape
        with self.name_scope:
            self._torso = torso
            self._lstm = LSTMCell(self.lstm_size) if self.lstm_size > 0 else None
            if head == "actor_critic":
                self._policy = heads.policy_layer(self.num_actions)
                self._baseline = Dense(1)
            else:
                self._value = heads.stream(1, head_hidden)
                self._advantage = heads.stream(self.num_actions, head_hidden, use_bias=False)
        # Create every variable now, so trainable_variables is complete before the first step.
        create_variables(self, shape, self._frame_dtype)

    def initial_state(self, batch_size):
        stack = frame_stack.initial_frame_stack(batch_size, self._frame_shape, self.stack_size,
                                                self._frame_dtype)
        if self._lstm is None:
            return (stack,)
        return (stack,) + self._lstm.zero_state(batch_size)

    def __call__(self, prev_action, env_output, core_state, unroll=False):
        return call_step_or_unroll(self._unroll, prev_action, env_output, core_state, unroll)

    def _unroll(self, prev_action, env_output, core_state):
        done = tf.cast(env_output.done, tf.bool)
        frames = tf.convert_to_tensor(env_output.observation)
        stacked, stack = frame_stack.stack_frames(frames, core_state[0], done)
        x = batch_apply(lambda s: precision.torso_in_compute_dtype(
            self._torso, tf.cast(s, tf.float32) * self._scale), stacked)
        state = (stack,)
        if self._lstm is not None:
            x = core_input(x, env_output.reward, prev_action, done, self.num_actions)
            x, lstm_state = unroll_core(self._lstm, x, done, tuple(core_state[1:]),
                                        self._lstm.zero_state)
            state += tuple(lstm_state)
        return batch_apply(self._head, x), state

    def _head(self, x):
        if self.head == "actor_critic":
            return heads.actor_critic(self._policy, self._baseline, x)
        value = heads.apply_stream(self._value, x)
        return heads.dueling(value, heads.apply_stream(self._advantage, x))


class NatureCNN(_AtariNetwork):
    """Nature DQN torso (FC 512) over a stack of ``stack_size`` frames."""

    def __init__(self, num_actions: int, observation_space, head: str = "actor_critic",
                 stack_size: int = 4, lstm_size: int = 0, head_hidden: int = 512):
        super().__init__(num_actions, observation_space, NatureCNNTorso(512), head,
                         stack_size, lstm_size, head_hidden, name="nature_cnn")


class ImpalaResNet(_AtariNetwork):
    """IMPALA deep ResNet torso over a stack of ``stack_size`` frames."""

    def __init__(self, num_actions: int, observation_space, head: str = "actor_critic",
                 stack_size: int = 4, lstm_size: int = 0, channels=(16, 32, 32),
                 fc_size: int = 256, head_hidden: int = 512):
        super().__init__(num_actions, observation_space,
                         ImpalaResNetTorso(tuple(channels), fc_size), head, stack_size,
                         lstm_size, head_hidden, name="impala_resnet")
