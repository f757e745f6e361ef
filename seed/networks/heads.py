"""The output heads the networks share: actor-critic and dueling Q.

* ``"actor_critic"``: ``{'policy_logits': [N, A], 'baseline': [N]}`` from a policy
  layer (``A`` outputs) and a baseline layer (1 output);
* ``"q"``: ``{'q_values': [N, A]}``, dueling (Wang et al. 2016) where the network
  has value and advantage streams: Q = V + (advantage - mean advantage).

The head layers stay attributes of each network (``_policy``, ``_baseline``,
``_value``, ``_advantage``): checkpoints name variables by attribute path, and
``trainable_variables`` is ordered by attribute name with parameter copies (IMPALA's
pulls, R2D2's target network) going by position, so this module builds the layers
and combines their outputs but does not hold them.
"""

from __future__ import annotations

import tensorflow as tf

from seed.networks.layers import Dense

HEADS = ("actor_critic", "q")


def check_head(head: str) -> str:
    if head not in HEADS:
        raise ValueError(f"unknown head {head!r}; known: {', '.join(HEADS)}")
    return head


POLICY_INIT_SCALE = 0.01  # see seed.networks.layers: the first policy is near uniform


def policy_layer(num_actions: int, name: str | None = None):
    """The linear policy-logits layer, its kernel scaled by :data:`POLICY_INIT_SCALE`."""
    return Dense(num_actions, name=name, init_scale=POLICY_INIT_SCALE)


def stream(units: int, hidden: int = 0, use_bias: bool = True):
    """The layers of one head stream: a ReLU layer of ``hidden`` units (if > 0), then ``units``."""
    layers = [Dense(hidden, tf.nn.relu)] if hidden > 0 else []
    return layers + [Dense(units, use_bias=use_bias)]


def apply_stream(layers, x):
    for layer in layers:
        x = layer(x)
    return x


def actor_critic(policy, baseline, x):
    """``policy`` and ``baseline`` (callables on ``[N, F]``) -> the actor-critic outputs."""
    return {"policy_logits": policy(x), "baseline": tf.squeeze(baseline(x), -1)}


def dueling(value, advantage):
    """``value`` [N, 1] and ``advantage`` [N, A] -> ``{'q_values': value + centred advantage}``."""
    return {"q_values": value + (advantage - tf.reduce_mean(advantage, -1, keepdims=True))}
