"""The IMPALA learner's gRPC service: receives whole unrolls, serves versioned parameters.

The parameter version is the learner step count. After every train step the
training thread snapshots the parameters (a copy, taken between optimizer
steps, so a pull never sees half an update); a pull encodes the latest
snapshot once per version and sends nothing when the actor is up to date.
"""

from __future__ import annotations

import threading

import grpc

from seed.runtime.learner_core import LearnerCore
from seed.runtime.service import LearnerService
from seed.transport import limits as limits_lib
from seed.transport import tensor as wire
from seed.transport.channel import reject_undecodable
from seed.transport.proto import pb2
from seed.transport.unroll_codec import UnrollCodec
from seed.unroll_spec import UnrollSpec


class ImpalaLearnerService(LearnerService):
    def __init__(self, core: LearnerCore):
        self.core = core
        self.num_envs = core.config.num_envs
        # What an unroll holds, from the agent's outputs: the actors encode by the same.
        self.unroll_codec = UnrollCodec(
            UnrollSpec.of(core.agent, core.env_spec.observation_space))
        self.steps = self.unroll_codec.spec.steps
        self._lock = threading.Lock()
        self._version = 0
        self._snapshot = [v.numpy() for v in core.agent.parameters()]
        self._encoded: tuple[int, list] | None = None
        core.after_each_train_step(self._after_train_step)
        self._batch_lock = threading.Lock()
        self._unrolls = 0
        self.limits = self._message_limits()
        self.spec = core.spec_message(self.limits)

    def _message_limits(self) -> limits_lib.MessageLimits:
        """An unroll of T+1 steps up (the largest its spec allows); the parameters (the only
        large message) down."""
        return limits_lib.learner_limits(
            {"SendUnroll": self.unroll_codec.max_bytes},
            [limits_lib.parameters_bytes(self._snapshot),
             limits_lib.spec_bytes(self.core.spec_message())])

    def _after_train_step(self, metrics) -> None:
        snapshot = [v.numpy() for v in self.core.agent.parameters()]
        with self._lock:
            self._snapshot = snapshot
            self._version += 1

    @property
    def version(self) -> int:
        return self._version

    # -- gRPC ------------------------------------------------------------------
    def StreamSteps(self, request_iterator, context):
        context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                      "this learner runs the IMPALA architecture: send unrolls with SendUnroll")

    def GetParameters(self, request, context):
        reject_undecodable(request, context)
        with self._lock:
            version, snapshot = self._version, self._snapshot
            if request.have_version >= version:
                return pb2.Parameters(version=version)
            if self._encoded is None or self._encoded[0] != version:
                self._encoded = (version, [wire.encode(a) for a in snapshot])
            return pb2.Parameters(version=version, values=self._encoded[1])

    def SendUnroll(self, request, context):
        reject_undecodable(request, context)
        try:
            if not 0 <= request.env_id < self.num_envs:
                raise wire.WireError(f"env id {request.env_id} out of range "
                                     f"[0, {self.num_envs})")
            unroll = self.unroll_codec.decode(request)
        except wire.WireError as e:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
        stats = self.core.stats
        stats.add_env_steps(self.steps - 1)
        for ep in request.episodes:
            stats.add_episode(ep.env_id, request.actor_id, ep.episode_return, ep.episode_length)
        if request.inference_ms > 0:
            stats.add_actor_inference_time(request.inference_ms)
        stats.add_action_latencies(request.action_latency_ms)
        if request.parameter_pull_ms > 0:
            stats.add_parameter_pull(request.parameter_pull_ms)
        with self._batch_lock:
            self._unrolls += 1
        self.core.enqueue(unroll)
        return pb2.UnrollAck(parameter_version=self._version)

    def take_batch_stats(self) -> float | None:
        """IMPALA actors infer locally, every call on all their ``envs_per_actor`` envs: that
        is the batch, whenever unrolls arrived since the last call."""
        with self._batch_lock:
            had, self._unrolls = self._unrolls, 0
        return float(self.core.config.envs_per_actor) if had else None

    def close(self) -> None:
        """Nothing to wake: every call is unary."""
