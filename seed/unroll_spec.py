"""What one env's unroll holds, leaf by leaf: its :class:`UnrollSpec`.

Built from the run's env (its observation space) and agent (its core state and
:meth:`output_spec`), one spec gives the buffers :class:`seed.unrolls.UnrollBuilder`
assembles unrolls in, and the IMPALA wire message an unroll crosses by is encoded, decoded
and sized by it (:class:`seed.transport.unroll_codec.UnrollCodec`).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from seed.types import ArraySpec, EnvOutput, Unroll


@dataclasses.dataclass(frozen=True)
class UnrollSpec:
    """What one env's unroll of ``steps`` (T + 1) steps holds: the observation of a step,
    the core state before the first step, and the agent outputs of a step."""

    steps: int
    observation: ArraySpec
    core_state: tuple[ArraySpec, ...]
    agent_output: dict[str, ArraySpec]  # 'action' among them

    @classmethod
    def of(cls, agent, observation_space) -> "UnrollSpec":
        """The spec of ``agent``'s unrolls (see :class:`seed.agents.contract.Agent`) of an env
        with ``observation_space``."""
        output = dict(agent.output_spec())
        if "action" not in output:
            raise ValueError(f"an agent's output spec must hold 'action': {sorted(output)}")
        state = [np.asarray(s) for s in agent.initial_state(1)]
        return cls(steps=int(agent.unroll_length) + 1,
                   observation=ArraySpec(np.dtype(observation_space.dtype).name,
                                         tuple(observation_space.shape)),
                   core_state=tuple(ArraySpec(s.dtype.name, s.shape[1:]) for s in state),
                   agent_output={k: ArraySpec(np.dtype(v.dtype).name, tuple(v.shape))
                                 for k, v in output.items()})

    @functools.cached_property
    def nbytes(self) -> int:
        """The bytes of one unroll's arrays: ``steps`` of every :attr:`step` leaf, and the
        core state once (what a buffer holding the unroll keeps of it, Python objects
        aside)."""
        def size(leaf: ArraySpec) -> int:
            return np.dtype(leaf.dtype).itemsize * int(np.prod(leaf.shape, dtype=np.int64))
        return (self.steps * sum(size(leaf) for leaf in self.step.values())
                + sum(size(leaf) for leaf in self.core_state))

    @functools.cached_property  # read on every batch the builder appends
    def step(self) -> dict[str, ArraySpec]:
        """The leaves of one step, by name, each as one env holds it: the previous action,
        the reward, done, the observation, and each agent output (``agent_output[name]``)."""
        return self.leaves(ArraySpec("int32", ()), ArraySpec("float32", ()),
                           ArraySpec("bool", ()), self.observation, self.agent_output)

    def leaves(self, prev_action, reward, done, observation, agent_output: dict) -> dict:
        """The step's leaves named as :attr:`step` names them (of one step, of an unroll's
        steps or of a batch's rows). ValueError, naming them, on agent outputs missing or
        unexpected."""
        check_names("agent_output", set(agent_output), set(self.agent_output))
        return {"prev_action": prev_action, "reward": reward, "done": done,
                "observation": observation,
                **{f"agent_output[{k}]": agent_output[k] for k in self.agent_output}}

    def unroll(self, core_state: tuple, leaves: dict) -> Unroll:
        """The :class:`Unroll` of ``core_state`` and the leaves of its steps (by
        :attr:`step`'s names)."""
        return Unroll(
            core_state=tuple(core_state), prev_action=leaves["prev_action"],
            env_output=EnvOutput(reward=leaves["reward"], done=leaves["done"],
                                 observation=leaves["observation"]),
            agent_output={k: leaves[f"agent_output[{k}]"] for k in self.agent_output})


def check_names(what: str, got: set, want: set) -> None:
    """ValueError (one line) unless ``got`` is ``want``: the names missing, the unexpected."""
    if got != want:
        missing, extra = sorted(want - got), sorted(got - want)
        raise ValueError(f"{what}: expected {sorted(want)}"
                         + (f"; missing {missing}" if missing else "")
                         + (f"; unexpected {extra}" if extra else ""))
