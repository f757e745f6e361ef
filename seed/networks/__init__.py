"""Policy/value networks, one module per observation kind.

Every network follows the contract of :class:`seed.networks.base.Network`.
"""

from __future__ import annotations


import importlib

# name -> "module:Class". Each class is built as
# Class(num_actions, observation_space, head=..., **network_kwargs), where head is
# "actor_critic" (policy_logits + baseline) or "q" (q_values; dueling where the
# network supports it).
REGISTRY = {
    "mlp": "seed.networks.mlp:MLPNetwork",
    "nature_cnn": "seed.networks.atari:NatureCNN",
    "impala_resnet": "seed.networks.atari:ImpalaResNet",
    "football": "seed.networks.football:FootballNetwork",
    "dmlab": "seed.networks.dmlab:DMLabNetwork",
}


def make_network(name: str, num_actions: int, observation_space, head: str = "actor_critic",
                 **kwargs):
    """Build the network registered as ``name``."""
    if name not in REGISTRY:
        raise ValueError(f"unknown network {name!r}; known: {', '.join(sorted(REGISTRY))}")
    module_name, class_name = REGISTRY[name].split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls(num_actions, observation_space, head=head, **kwargs)
