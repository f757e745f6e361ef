"""The SEED RL Google Research Football network (Espeholt et al. 2020).

Input: the Super Mini Map, 16 stacked binary planes ``[72, 96, 16]`` (4 frames x
4 planes: left team, right team, ball, active player), bit-packed by the env
adapter into ``[72, 96, 2]`` uint8 (:mod:`envs.football_packing`). The network
unpacks the bits to float planes of 0/1, then runs the IMPALA ResNet torso with
four stacks (16, 32, 32, 32 channels; each a 3x3 conv, a 3x3/2 max pool and two
residual blocks), a ReLU, a 256-unit fully connected layer with ReLU, and a
head. No LSTM: the core state is ``()``. Layout as upstream
``seed_rl/football/networks.py`` (which initialises with ``lecun_normal``; the
shared torso here uses He-uniform, see :mod:`seed.networks.layers`). The map's size
comes from the observation space (gfootball's ``channel_dimensions``). The torso computes
in the agent's compute dtype, the head in float32 (:mod:`seed.networks.precision`).
"""

from __future__ import annotations

import tensorflow as tf

from seed.networks import heads, precision
from seed.networks.atari import ImpalaResNetTorso
from seed.networks.base import batch_apply, call_step_or_unroll, create_variables
from seed.networks.layers import Dense

HEADS = heads.HEADS

# Bit masks of one packed byte, most significant first: plane 8*k + i is bit 7 - i
# of byte k, the order of numpy.packbits (see envs/football_packing.py).
_BIT_MASKS = tuple(1 << (7 - i) for i in range(8))


def unpack_planes(packed, num_planes: int):
    """``[..., ceil(P/8)]`` uint8 packed planes -> ``[..., P]`` float32 planes of 0/1."""
    packed = tf.convert_to_tensor(packed)
    if packed.dtype != tf.uint8:
        raise ValueError(f"packed planes must be uint8, got {packed.dtype.name}")
    depth = packed.shape[-1]
    if depth is None or depth != (num_planes + 7) // 8:
        raise ValueError(f"{num_planes} planes pack into {(num_planes + 7) // 8} bytes, "
                         f"got last axis {depth}")
    masks = tf.constant(_BIT_MASKS, tf.uint8)
    bits = tf.bitwise.bitwise_and(packed[..., tf.newaxis], masks)  # [..., D, 8]
    planes = tf.cast(tf.not_equal(bits, 0), tf.float32)
    planes = tf.reshape(planes, tf.concat([tf.shape(packed)[:-1], [depth * 8]], 0))
    return planes[..., :num_planes]


class FootballNetwork(tf.Module):
    """SEED's football ResNet over (packed) SMM planes; stateless.

    ``observation_space`` is the env's: ``[H, W, ceil(P/8)]`` uint8 when packed
    (the default, ``P = num_planes``), or ``[H, W, P]`` of 0/255 when the env was
    made with ``packed=False``. ``head`` is ``'actor_critic'`` (``policy_logits``
    ``[.., A]`` and ``baseline`` ``[..]``) or ``'q'`` (``q_values`` ``[.., A]``).
    Follows the contract of :mod:`seed.networks.base`.
    """

    def __init__(self, num_actions: int, observation_space, head: str = "actor_critic",
                 channels=(16, 32, 32, 32), fc_size: int = 256, num_planes: int = 16):
        super().__init__(name="football_network")
        self.head = heads.check_head(head)
        shape = tuple(int(d) for d in observation_space.shape)
        if len(shape) != 3:
            raise ValueError(f"expected an [H, W, C] observation space, got shape {shape}")
        packed_depth = (num_planes + 7) // 8
        if shape[-1] == num_planes:
            self.packed = False
        elif shape[-1] == packed_depth:
            self.packed = True
        else:
            raise ValueError(
                f"observation depth {shape[-1]} fits neither {num_planes} raw planes nor "
                f"{packed_depth} packed bytes; set num_planes to the env's plane count")
        self.num_actions = int(num_actions)
        self.num_planes = num_planes
        self.observation_shape = shape
        with self.name_scope:
            self._torso = ImpalaResNetTorso(tuple(channels), fc_size, name="torso")
            if head == "actor_critic":
                self._policy_logits = heads.policy_layer(self.num_actions, name="policy_logits")
                self._baseline = Dense(1, name="baseline")
            else:
                self._q_values = Dense(self.num_actions, name="q_values")
        # The layers create their weights on first use: build them all now, so
        # optimizers, checkpoints and IMPALA actors see every variable at once.
        create_variables(self, shape, tf.uint8)

    def initial_state(self, batch_size):
        return ()

    def _features(self, observation):
        if self.packed:
            planes = unpack_planes(observation, self.num_planes)
        else:
            planes = tf.cast(tf.not_equal(observation, 0), tf.float32)
        return precision.torso_in_compute_dtype(self._torso, planes)

    def _outputs(self, features):
        if self.head == "actor_critic":
            return heads.actor_critic(self._policy_logits, self._baseline, features)
        return {"q_values": self._q_values(features)}

    def __call__(self, prev_action, env_output, core_state, unroll=False):
        return call_step_or_unroll(self._unroll, prev_action, env_output, core_state, unroll)

    def _unroll(self, prev_action, env_output, core_state):
        # Time-major [T, B, ...]: no recurrence, so fold time into the batch.
        outputs = batch_apply(lambda obs: self._outputs(self._features(obs)),
                              env_output.observation)
        return outputs, core_state
