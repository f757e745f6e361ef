"""An IMPALA unroll on the wire: encoded, decoded and sized by the run's unroll spec.

An IMPALA actor sends every unroll it completes as one ``UnrollMessage``; the learner
decodes it into the :class:`seed.types.Unroll` its agent trains on. Both ends build the
same :class:`seed.unroll_spec.UnrollSpec` from the run's env (its observation space) and
agent (its core state and :meth:`output_spec`), and an :class:`UnrollCodec` of it, so the
actor encodes exactly what the learner accepts, and the learner's size limit for the
message is the largest one the spec allows (:attr:`UnrollCodec.max_bytes`). A tensor of
another dtype or shape, an agent output missing or unexpected, or a message over that
limit is refused with one line (:class:`seed.transport.tensor.WireError`).
"""

from __future__ import annotations

import numpy as np

from seed.transport import limits as limits_lib
from seed.transport import tensor as wire
from seed.transport.proto import pb2
from seed.types import ArraySpec, Unroll
from seed.unroll_spec import UnrollSpec


class UnrollCodec:
    """One spec's unrolls to and from ``UnrollMessage``.

    ``max_bytes``: the largest legitimate message (:func:`seed.transport.limits.unroll_bytes`);
    ``limit``: the learner's limit for one message, ``max_bytes`` with the slack of
    :mod:`seed.transport.limits`. An actor refuses to send more.
    """

    def __init__(self, spec: UnrollSpec):
        self.spec = spec
        n = spec.steps
        # Every leaf of a step as the message holds it: over the unroll's steps.
        self._leaves = {name: ArraySpec(s.dtype, (n,) + s.shape) for name, s in spec.step.items()}
        zeros = spec.unroll([_zeros(s) for s in spec.core_state],
                            {name: _zeros(s) for name, s in self._leaves.items()})
        self.max_bytes = limits_lib.unroll_bytes(_message(zeros), n)
        self.limit = limits_lib.with_slack(self.max_bytes)

    # -- the actor's end ---------------------------------------------------------------

    def encode(self, unroll: Unroll, *, actor_id: int, run_id: str, env_id: int,
               parameter_version: int, episodes=(), inference_ms: float = 0.0,
               parameter_pull_ms: float = 0.0, action_latency_ms=()) -> "pb2.UnrollMessage":
        """``unroll`` (one env's, as :class:`seed.unrolls.UnrollBuilder` completes it) and
        what rides with it: ``episodes`` the env finished since its last unroll, as
        ``(env_id, return, length)``; the actor's timings. Refuses an unroll that does not
        fit the spec, and a message over :attr:`limit`."""
        leaves = self._named(unroll.prev_action, *unroll.env_output, unroll.agent_output)
        _check_count(len(unroll.core_state), len(self.spec.core_state))
        arrays = {name: _encode(name, a, self._leaves[name]) for name, a in leaves.items()}
        state = [_encode(f"core_state[{i}]", a, s)
                 for i, (a, s) in enumerate(zip(unroll.core_state, self.spec.core_state))]
        message = _message(
            self.spec.unroll(state, arrays), actor_id=actor_id, run_id=run_id, env_id=env_id,
            parameter_version=parameter_version,
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
        _check_count(len(message.core_state), len(self.spec.core_state))
        leaves = self._named(message.prev_action, message.reward, message.done,
                             message.observation, message.agent_output)
        return self.spec.unroll(
            [wire.decode(t, dtype=s.dtype, shape=s.shape, name=f"core_state[{i}]")
             for i, (t, s) in enumerate(zip(message.core_state, self.spec.core_state))],
            {name: wire.decode(t, dtype=self._leaves[name].dtype, shape=self._leaves[name].shape,
                               name=name)
             for name, t in leaves.items()})

    def _named(self, *fields) -> dict:
        """The spec's leaves of an unroll's fields (:meth:`UnrollSpec.leaves`), as WireError."""
        try:
            return self.spec.leaves(*fields)
        except ValueError as e:
            raise wire.WireError(str(e)) from None


def _message(tensors: Unroll, **fields) -> "pb2.UnrollMessage":
    """The message of an unroll's encoded tensors and ``fields``, what rides with them."""
    return pb2.UnrollMessage(
        core_state=tensors.core_state, prev_action=tensors.prev_action,
        reward=tensors.env_output.reward, done=tensors.env_output.done,
        observation=tensors.env_output.observation, agent_output=tensors.agent_output,
        **fields)


def _zeros(spec: ArraySpec) -> "pb2.Tensor":
    return wire.encode(np.zeros(spec.shape, np.dtype(spec.dtype)))


def _encode(name: str, array, spec: ArraySpec) -> "pb2.Tensor":
    a = np.asarray(array)
    if a.dtype.name != spec.dtype or a.shape != spec.shape:
        raise wire.WireError(f"{name}: expected {spec.dtype} {spec.shape}, got "
                             f"{a.dtype.name} {a.shape}")
    return wire.encode(a)


def _check_count(got: int, want: int) -> None:
    if got != want:
        raise wire.WireError(f"core_state: expected {want} tensors, got {got}")
