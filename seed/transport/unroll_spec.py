"""An IMPALA unroll on the wire: one spec that encodes it, decodes it and sizes it.

An IMPALA actor sends every unroll it completes as one ``UnrollMessage``; the learner
decodes it into the :class:`seed.types.Unroll` its agent trains on. Both ends build the
same :class:`UnrollSpec` from the run's env (its observation space) and agent (its core
state and :meth:`output_spec`), so the actor encodes exactly what the learner accepts, and
the learner's size limit for the message is the largest one the spec allows
(:attr:`UnrollSpec.max_bytes`). A tensor of another dtype or shape, an agent output
missing or unexpected, or a message over that limit is refused with one line
(:class:`seed.transport.tensor.WireError`).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from seed.transport import limits as limits_lib
from seed.transport import tensor as wire
from seed.transport.proto import pb2
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
        """The spec of ``agent``'s unrolls (see :class:`seed.agents.base.Agent`) of an env
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

    def _step_leaves(self) -> dict[str, ArraySpec]:
        """Every per-step field of the message: its dtype and its shape over the steps."""
        n = self.steps
        leaves = {"prev_action": ArraySpec("int32", (n,)),
                  "reward": ArraySpec("float32", (n,)),
                  "done": ArraySpec("bool", (n,)),
                  "observation": ArraySpec(self.observation.dtype,
                                           (n,) + self.observation.shape)}
        leaves.update({f"agent_output[{k}]": ArraySpec(v.dtype, (n,) + v.shape)
                       for k, v in self.agent_output.items()})
        return leaves

    # -- the actor's end ---------------------------------------------------------------

    def encode(self, unroll: Unroll, *, actor_id: int, run_id: str, env_id: int,
               parameter_version: int, episodes=(), inference_ms: float = 0.0,
               parameter_pull_ms: float = 0.0, action_latency_ms=()) -> "pb2.UnrollMessage":
        """``unroll`` (one env's, as :class:`seed.unrolls.UnrollBuilder` completes it) and
        what rides with it: ``episodes`` the env finished since its last unroll, as
        ``(env_id, return, length)``; the actor's timings. Refuses an unroll that does not
        fit the spec, and a message over :attr:`limit`."""
        arrays = {"prev_action": unroll.prev_action, "reward": unroll.env_output.reward,
                  "done": unroll.env_output.done, "observation": unroll.env_output.observation,
                  **{f"agent_output[{k}]": v for k, v in unroll.agent_output.items()}}
        _check_names("agent_output", set(unroll.agent_output), set(self.agent_output))
        _check_count(len(unroll.core_state), len(self.core_state))
        want = dict(self._step_leaves())
        want.update({f"core_state[{i}]": s for i, s in enumerate(self.core_state)})
        arrays.update({f"core_state[{i}]": s for i, s in enumerate(unroll.core_state)})
        encoded = {}
        for name, spec in want.items():
            a = np.asarray(arrays[name])
            if a.dtype.name != spec.dtype or a.shape != spec.shape:
                raise wire.WireError(f"{name}: expected {spec.dtype} {spec.shape}, got "
                                     f"{a.dtype.name} {a.shape}")
            encoded[name] = wire.encode(a)
        message = pb2.UnrollMessage(
            actor_id=actor_id, run_id=run_id, env_id=env_id,
            parameter_version=parameter_version,
            core_state=[encoded[f"core_state[{i}]"] for i in range(len(self.core_state))],
            prev_action=encoded["prev_action"], reward=encoded["reward"],
            done=encoded["done"], observation=encoded["observation"],
            agent_output={k: encoded[f"agent_output[{k}]"] for k in self.agent_output},
            episodes=[pb2.EpisodeSummary(env_id=e, episode_return=r, episode_length=n)
                      for e, r, n in episodes],
            inference_ms=inference_ms, parameter_pull_ms=parameter_pull_ms,
            action_latency_ms=action_latency_ms)
        size = message.ByteSize()
        if size > self.limit:
            raise wire.WireError(f"an unroll message of {size} bytes exceeds the {self.limit} "
                                 f"bytes its spec allows ({len(message.episodes)} episodes, "
                                 f"{len(message.action_latency_ms)} action latencies)")
        return message

    # -- the learner's end -------------------------------------------------------------

    def decode(self, message) -> Unroll:
        """The :class:`Unroll` in ``message``; WireError (one line) on any tensor that does
        not fit the spec."""
        _check_count(len(message.core_state), len(self.core_state))
        _check_names("agent_output", set(message.agent_output), set(self.agent_output))
        leaves = self._step_leaves()

        def get(field, tensor):
            spec = leaves[field]
            return wire.decode(tensor, dtype=spec.dtype, shape=spec.shape, name=field)

        return Unroll(
            core_state=tuple(
                wire.decode(t, dtype=s.dtype, shape=s.shape, name=f"core_state[{i}]")
                for i, (t, s) in enumerate(zip(message.core_state, self.core_state))),
            prev_action=get("prev_action", message.prev_action),
            env_output=EnvOutput(reward=get("reward", message.reward),
                                 done=get("done", message.done),
                                 observation=get("observation", message.observation)),
            agent_output={k: get(f"agent_output[{k}]", message.agent_output[k])
                          for k in self.agent_output})

    # -- size --------------------------------------------------------------------------

    @functools.cached_property
    def max_bytes(self) -> int:
        """The largest legitimate message (:func:`seed.transport.limits.unroll_bytes`)."""
        return limits_lib.unroll_bytes(
            self.steps, self.observation.dtype, self.observation.shape,
            [np.zeros(s.shape, np.dtype(s.dtype)) for s in self.core_state], self.agent_output)

    @functools.cached_property
    def limit(self) -> int:
        """The learner's limit for one message: :attr:`max_bytes` with the slack of
        :mod:`seed.transport.limits`. An actor refuses to send more."""
        return limits_lib.with_slack(self.max_bytes)


def _check_count(got: int, want: int) -> None:
    if got != want:
        raise wire.WireError(f"core_state: expected {want} tensors, got {got}")


def _check_names(what: str, got: set, want: set) -> None:
    if got != want:
        missing, extra = sorted(want - got), sorted(got - want)
        raise wire.WireError(f"{what}: expected {sorted(want)}"
                             + (f"; missing {missing}" if missing else "")
                             + (f"; unexpected {extra}" if extra else ""))
