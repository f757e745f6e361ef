"""Message size limits: each method's largest legitimate message in one run, and no more.

A learner sizes its limits from the run's spec: a SEED ``StepRequest`` holds at
most ``envs_per_actor`` observations, an IMPALA unroll ``T + 1`` of them, and
only a parameter reply is large. Each size is measured on the largest message
of its kind (every counter at its widest varint), then given some slack for
what a legitimate client may vary (field order, extra episode summaries).

The server's receive limit is the largest request of any method, so gRPC
refuses anything bigger before the learner allocates it; a request that fits
that but not its own method's limit is refused by the deserializer, before it
is parsed. Both answer RESOURCE_EXHAUSTED.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from seed.transport import tensor as wire
from seed.transport.proto import pb2

SLACK_FRACTION = 0.25
SLACK_BYTES = 64 * 1024
# Requests that carry no tensors (SpecRequest, ParametersRequest), and every
# request of a method the learner does not serve.
SMALL_REQUEST_BYTES = 16 * 1024
# What an actor accepts for the Spec before it knows the run's limits.
SPEC_REPLY_BYTES = 4 * 1024 * 1024

_BIG = 2 ** 62  # the widest counter a legitimate message may carry
METHODS = ("GetSpec", "StreamSteps", "SendUnroll", "GetParameters")


def with_slack(n: int) -> int:
    return int(n * (1 + SLACK_FRACTION)) + SLACK_BYTES


@dataclasses.dataclass(frozen=True)
class MessageLimits:
    """Per-method request limits and one response limit, in bytes."""

    requests: dict  # method name ("StreamSteps") -> largest request accepted
    response: int  # largest reply the learner sends

    @property
    def max_request(self) -> int:
        return max(self.requests.values())

    def request(self, method: str) -> int:
        return self.requests.get(method, SMALL_REQUEST_BYTES)


def _zeros(dtype: str, shape) -> "pb2.Tensor":
    return wire.encode(np.zeros(tuple(shape), np.dtype(dtype)))


def _episodes(n: int) -> list:
    return [pb2.EpisodeSummary(env_id=2 ** 31 - 1, episode_return=-1.0e300,
                               episode_length=_BIG) for _ in range(n)]


def step_request_bytes(k: int, obs_dtype: str, obs_shape) -> int:
    """A StepRequest of ``k`` envs, each of which just ended an episode."""
    return pb2.StepRequest(
        actor_id=2 ** 31 - 1, run_id="f" * 64, env_ids=[2 ** 31 - 1] * k,
        reward=_zeros("float32", (k,)), done=_zeros("bool", (k,)),
        observation=_zeros(obs_dtype, (k,) + tuple(obs_shape)),
        episodes=_episodes(k), last_action_latency_ms=1.0).ByteSize()


def step_response_bytes(k: int) -> int:
    return pb2.StepResponse(action=_zeros("int32", (k,))).ByteSize()


def unroll_bytes(tensors: "pb2.UnrollMessage", steps: int) -> int:
    """An UnrollMessage of ``tensors`` (an unroll of ``steps`` steps, as its spec shapes it)
    with an episode ending on every step and an action latency for each (an actor reports
    at most one unroll's steps per round)."""
    message = pb2.UnrollMessage(
        actor_id=2 ** 31 - 1, run_id="f" * 64, env_id=2 ** 31 - 1, parameter_version=_BIG,
        episodes=_episodes(steps), inference_ms=1.0, parameter_pull_ms=1.0,
        action_latency_ms=[1.0] * steps)
    message.MergeFrom(tensors)
    return message.ByteSize()


def parameters_bytes(arrays) -> int:
    return pb2.Parameters(version=_BIG, values=[wire.encode(a) for a in arrays]).ByteSize()


def spec_bytes(spec: "pb2.Spec") -> int:
    """The Spec's size with its own limit fields at their widest."""
    probe = pb2.Spec()
    probe.CopyFrom(spec)
    probe.max_request_bytes = probe.max_response_bytes = _BIG
    return probe.ByteSize()


def learner_limits(requests: dict, responses: list[int]) -> MessageLimits:
    """Limits from the largest legitimate request of the methods a learner serves
    (``requests``: method -> bytes, before slack) and its largest replies."""
    sized = {m: SMALL_REQUEST_BYTES for m in METHODS}
    for method, n in requests.items():
        sized[method] = max(SMALL_REQUEST_BYTES, with_slack(n))
    return MessageLimits(requests=sized, response=with_slack(max(responses)))
