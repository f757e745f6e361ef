"""Policy/value networks, one module per observation kind.

Every network follows the contract of :class:`seed.networks.base.Network`.
"""

from __future__ import annotations

import importlib
from typing import Literal, get_args

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

# name -> the observations it is made for (a kind of envs.OBSERVATION_KINDS): the MLP
# flattens a small array of numbers, the convolutional torsos read [H, W, C] frames, the
# football network unpacks minimap planes. A run of a network on another kind is refused.
OBSERVATIONS = {
    "mlp": "features",
    "nature_cnn": "frames",
    "impala_resnet": "frames",
    "football": "planes",
    "dmlab": "frames",
}


#: The dtypes a network's torso may compute in (a run's ``compute_dtype``;
#: seed/networks/precision.py says what each computes in).
ComputeDtype = Literal["float32", "bfloat16", "bfloat16_train"]
COMPUTE_DTYPES = get_args(ComputeDtype)


def network_class(name: str):
    """The class registered as ``name``. Its module imports TensorFlow: the import goes
    through :mod:`seed.quiet_tf`, so a process that had not loaded TensorFlow yet (``seed
    compare``, reading a network's defaults) prints none of its start-up lines."""
    if name not in REGISTRY:
        raise ValueError(f"unknown network {name!r}; known: {', '.join(sorted(REGISTRY))}")
    from seed import quiet_tf
    quiet_tf.import_tensorflow()
    module_name, class_name = REGISTRY[name].split(":")
    return getattr(importlib.import_module(module_name), class_name)


def make_network(name: str, num_actions: int, observation_space, head: str = "actor_critic",
                 **kwargs):
    """Build the network registered as ``name``."""
    return network_class(name)(num_actions, observation_space, head=head, **kwargs)
