"""Data structures shared by the runtime, the agents and the networks.

Time step convention (the one upstream SEED RL uses):

* ``EnvOutput`` at step ``t`` is what the actor saw *before* acting at ``t``:
  ``reward[t]`` is the reward of the previous action, ``done[t]`` is True when
  ``observation[t]`` is the first observation of a new episode (the env was
  just reset, also at the very start of an actor's run), in which case
  ``reward[t]`` is the last reward of the finished episode (0 at a run start).
* ``prev_action[t]`` is the action taken at ``t - 1``, also across an episode
  boundary (as upstream SEED: networks reset their state on ``done``, the
  previous action is only zeroed when an env starts a fresh run). So
  ``prev_action[t + 1]`` is always the action taken at ``t``.
* ``agent_output`` at ``t`` is what the policy produced from ``EnvOutput[t]``;
  it always holds ``'action'`` (int32, the action taken at ``t``) next to the
  agent's own outputs (``policy_logits``/``baseline``, or ``q_values``).

An unroll holds ``T + 1`` consecutive steps; consecutive unrolls of one env
overlap by the agent's ``unroll_overlap`` steps (seed/unrolls.py): V-trace by one
(the last step of one is the first of the next, and serves as bootstrap), R2D2 by
``burn_in + 1`` (the burn-in steps of one sequence are trained on in the next).
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import numpy as np


class ArraySpec(NamedTuple):
    """An array's NumPy dtype name and shape: one env's (one step's) part of a batch."""

    dtype: str
    shape: tuple


class EnvOutput(NamedTuple):
    reward: Any  # float32 [..]
    done: Any  # bool [..]
    observation: Any  # env's observation dtype [.., *obs_shape]


@dataclasses.dataclass
class Unroll:
    """One env's trajectory of T+1 steps, or a batch of them.

    Single: arrays are ``[T+1, ...]`` and ``core_state`` leaves have no batch axis.
    Batched (``stack_unrolls``): arrays are time-major ``[T+1, B, ...]`` and
    ``core_state`` leaves are ``[B, ...]``.
    """

    core_state: tuple  # agent state before step 0 (network core state)
    prev_action: np.ndarray
    env_output: EnvOutput
    agent_output: dict  # name -> array, what the behaviour policy produced

    @property
    def length(self) -> int:
        return int(self.prev_action.shape[0])


def stack_unrolls(unrolls: list[Unroll]) -> Unroll:
    """Batch single unrolls into one time-major Unroll ``[T+1, B, ...]``."""
    if not unrolls:
        raise ValueError("stack_unrolls needs at least one unroll")
    first = unrolls[0]
    return Unroll(
        core_state=tuple(np.stack([u.core_state[i] for u in unrolls], 0)
                         for i in range(len(first.core_state))),
        prev_action=np.stack([u.prev_action for u in unrolls], 1),
        env_output=EnvOutput(*(np.stack([u.env_output[i] for u in unrolls], 1)
                               for i in range(3))),
        agent_output={k: np.stack([u.agent_output[k] for u in unrolls], 1)
                      for k in first.agent_output},
    )
