"""The learner service contract: what the run and the gRPC server ask of an architecture's
learner service.

An architecture's service (named by its entry in :mod:`seed.runtime.architectures`) is
built as ``service_class(core)`` on the run's :class:`~seed.runtime.learner_core.LearnerCore`;
``seed.runtime.run`` serves it (``start_server`` reads :attr:`LearnerService.limits`),
asks it for a metrics interval's inference batch (:meth:`LearnerService.take_batch_stats`)
and closes it (:meth:`LearnerService.close`) after the actors and before training and
the server stop. It answers the four calls of ``seed_rl.proto``; a call its architecture
does not use is aborted with FAILED_PRECONDITION naming the one to use. It reads the core,
hands it unrolls and failures, and changes it only through the core's hooks.
"""

from __future__ import annotations

import abc

from seed.runtime.learner_core import LearnerCore
from seed.transport.channel import reject_undecodable
from seed.transport.limits import MessageLimits
from seed.transport.proto import pb2, pb2_grpc


class LearnerService(pb2_grpc.LearnerServicer, abc.ABC):
    """A learner's gRPC service on a :class:`LearnerCore`, built as ``cls(core)``.

    Its constructor sets :attr:`limits` and :attr:`spec`; gRPC calls the four methods
    on its own threads, any number at once."""

    core: LearnerCore
    limits: MessageLimits  # each method's largest request, and the largest reply
    spec: "pb2.Spec"  # what GetSpec answers: the run's config and env, and the limits

    def GetSpec(self, request, context) -> "pb2.Spec":
        """What an actor needs to know of the run; the same for every caller."""
        reject_undecodable(request, context)
        return self.spec

    @abc.abstractmethod
    def StreamSteps(self, request_iterator, context):
        """SEED: an actor's env group, one StepRequest per step, one StepResponse each."""

    @abc.abstractmethod
    def SendUnroll(self, request, context) -> "pb2.UnrollAck":
        """IMPALA: an actor's complete unroll of one env."""

    @abc.abstractmethod
    def GetParameters(self, request, context) -> "pb2.Parameters":
        """IMPALA: the parameters, if newer than the version the actor has."""

    @abc.abstractmethod
    def take_batch_stats(self) -> float | None:
        """The mean number of envs per inference call since the last call; None if no
        inference was seen."""

    @abc.abstractmethod
    def close(self) -> None:
        """Stop serving: wake and end the calls in progress; new ones are refused."""
