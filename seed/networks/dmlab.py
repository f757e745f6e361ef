"""The IMPALA deep network for DeepMind Lab: ResNet torso + LSTM core + head.

As SEED RL's ``ImpalaDeep`` (seed_rl dmlab/networks.py) and IMPALA's deep
agent (Espeholt et al. 2018, figure 3, without the language LSTM):

    frame [72, 96, 3] uint8 -> /255 -> ImpalaResNetTorso (stacks of ``channels``,
          FC ``fc_size`` + ReLU)
    -> concat(torso, clip(reward, -1, 1), one_hot(prev_action))
    -> LSTM(``lstm_size``), reset where ``done``
    -> head

``kernel_init`` is the torso's (:mod:`seed.networks.layers`): Glorot-uniform by default, as
upstream's Keras layers. He-uniform, the Atari torsos' init, gives the residual stream of
this 15-conv torso activations some 30 times larger (a mean of about 10 into the FC on
DMLab frames against 0.3), which saturate most of the LSTM's gates from the first step and
all but a few after some hundred updates: its state then ignores the frames, and the value
and the policy go flat (issue 32; ``scripts/dmlab_probes.py look``). ``fc_layer_norm``
normalises the torso's FC outputs before their ReLU (:class:`seed.networks.layers.Dense`).

Heads: ``"actor_critic"`` gives ``{'policy_logits': [.., A], 'baseline': [..]}``;
``"q"`` gives dueling ``{'q_values': [.., A]}`` (value + advantage - mean advantage).

Core state: ``(h, c)``, each ``[B, lstm_size]``. Where ``done`` the LSTM state is
reset and the reward and previous action fed to it are zeroed: they belong to
the episode that ended. There is no instruction (language) input: the adapter
sends frames only, as SEED's DMLab setup does for single levels.

The torso computes in the agent's compute dtype, the LSTM and the head in float32
(:mod:`seed.networks.precision`).
"""

from __future__ import annotations

import tensorflow as tf

from seed.networks import heads, precision
from seed.networks.atari import ImpalaResNetTorso
from seed.networks.base import (at_least_one, batch_apply, call_step_or_unroll, core_input,
                                create_variables, frame_spec, unroll_core)
from seed.networks.layers import Dense, LSTMCell

HEADS = heads.HEADS


class DMLabNetwork(tf.Module):
    """ResNet torso, LSTM core and an actor-critic or dueling-Q head over DMLab frames."""

    def __init__(self, num_actions: int, observation_space, head: str = "actor_critic",
                 lstm_size: int = 256, channels=(16, 32, 32), fc_size: int = 256,
                 kernel_init: str = "glorot_uniform", fc_layer_norm: bool = False):
        super().__init__(name="dmlab_network")
        self.head = heads.check_head(head)
        shape, self._frame_dtype, self._scale = frame_spec(observation_space)
        self.lstm_size = at_least_one("lstm_size", lstm_size)
        self.num_actions = int(num_actions)
        self._frame_shape = shape
        with self.name_scope:
            self._torso = ImpalaResNetTorso(tuple(channels), fc_size, kernel_init=kernel_init,
                                            fc_layer_norm=fc_layer_norm)
            self._lstm = LSTMCell(self.lstm_size)
            if head == "actor_critic":
                self._policy, self._baseline = heads.policy_layer(self.num_actions), Dense(1)
            else:
                self._value = Dense(1)
                self._advantage = Dense(self.num_actions, use_bias=False)
        # Create every variable now, so trainable_variables is complete before the first step.
        create_variables(self, shape, self._frame_dtype)

    def initial_state(self, batch_size):
        return self._lstm.zero_state(batch_size)

    def __call__(self, prev_action, env_output, core_state, unroll=False):
        return call_step_or_unroll(self._unroll, prev_action, env_output, core_state, unroll)

    def _unroll(self, prev_action, env_output, core_state):
        done = tf.cast(env_output.done, tf.bool)
        x = batch_apply(lambda f: precision.torso_in_compute_dtype(
            self._torso, tf.cast(f, tf.float32) * self._scale), env_output.observation)
        x = core_input(x, env_output.reward, prev_action, done, self.num_actions)
        x, state = unroll_core(self._lstm, x, done, tuple(core_state), self._lstm.zero_state)
        return batch_apply(self._head, x), tuple(state)

    def _head(self, x):
        if self.head == "actor_critic":
            return heads.actor_critic(self._policy, self._baseline, x)
        advantage = self._advantage(x)  # before the value: the order the weights are made in
        return heads.dueling(self._value(x), advantage)
