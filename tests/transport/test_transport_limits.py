"""Message size limits sized from the run's spec, per method, both architectures."""

import uuid

import grpc
import numpy as np
import pytest

from seed.config import make_config
from seed.runtime.architectures import architecture
from seed.runtime.learner_core import EnvSpec, LearnerCore
from seed.runtime.seed_arch.learner import SeedLearnerService
from seed.transport import limits as limits_lib
from seed.transport import tensor as wire
from seed.transport.channel import connect, start_server
from seed.transport.proto import pb2


def _serve(service_cls, **overrides):
    config = make_config(**dict(dict(env="toy:catch", actors=2, envs_per_actor=3, train=False,
                                inference_timeout_ms=1.0, frames=10_000, progress=False),
                           **overrides))
    core = LearnerCore(config, EnvSpec.probe(config.env, config.env_kwargs))
    service = service_cls(core)
    server, address = start_server(service, "",
                                   max_workers=architecture(config.arch).grpc_workers(config))
    return core, service, server, address


@pytest.fixture(scope="module")
def seed_learner():
    core, service, server, address = _serve(SeedLearnerService)
    yield core, service, address
    service.close()
    core.stop()
    server.stop(0)


def _unlimited(address):
    """A client that sends whatever it is given (a hostile peer)."""
    return grpc.insecure_channel(address, options=[("grpc.max_send_message_length", -1)])


def _step(k, run, env_ids=None, obs_rows=None):
    rows = k if obs_rows is None else obs_rows
    return pb2.StepRequest(
        actor_id=0, run_id=run, env_ids=list(range(k)) if env_ids is None else env_ids,
        reward=wire.encode(np.zeros(k, np.float32)), done=wire.encode(np.ones(k, bool)),
        observation=wire.encode(np.zeros((rows, 10, 5), np.float32)))


def test_the_spec_announces_limits_sized_from_the_run(seed_learner):
    _, service, address = seed_learner
    channel, stub = connect(address)
    spec = stub.GetSpec(pb2.SpecRequest(actor_id=0), timeout=10)
    channel.close()
    one_request = limits_lib.step_request_bytes(3, "float32", (10, 5))
    assert spec.max_request_bytes == service.limits.request("StreamSteps")
    assert one_request < spec.max_request_bytes < 2 * one_request + 2 * limits_lib.SLACK_BYTES
    assert spec.max_response_bytes < 1024 * 1024  # actions and the spec, nothing large
    assert service.limits.request("GetSpec") == limits_lib.SMALL_REQUEST_BYTES


def test_a_full_request_of_one_actor_fits_on_a_spec_sized_channel(seed_learner):
    _, _, address = seed_learner
    channel, stub = connect(address)
    spec = stub.GetSpec(pb2.SpecRequest(actor_id=0), timeout=10)
    channel.close()
    channel, stub = connect(address, spec)
    reply = next(stub.StreamSteps(iter([_step(3, uuid.uuid4().hex)])))
    channel.close()
    assert wire.decode(reply.action).shape == (3,)


def test_a_request_over_every_limit_is_refused_before_the_learner_reads_it(seed_learner):
    _, service, address = seed_learner
    channel = _unlimited(address)
    raw = channel.unary_unary("/seedrl.Learner/GetSpec")
    with pytest.raises(grpc.RpcError) as err:
        raw(b"\x00" * (service.limits.max_request + 1), timeout=10)
    channel.close()
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_a_request_over_its_own_methods_limit_is_refused_with_a_reason(seed_learner):
    _, service, address = seed_learner
    channel = _unlimited(address)
    raw = channel.unary_unary("/seedrl.Learner/GetSpec")
    size = service.limits.request("GetSpec") + 1  # under StreamSteps' limit, over GetSpec's
    assert size < service.limits.max_request
    with pytest.raises(grpc.RpcError) as err:
        raw(b"\x00" * size, timeout=10)
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "exceeds this learner's limit" in err.value.details()
    # An observation tensor of far more envs than one actor has: the stream ends, with why.
    stub_stream = channel.stream_stream(
        "/seedrl.Learner/StreamSteps", request_serializer=pb2.StepRequest.SerializeToString,
        response_deserializer=pb2.StepResponse.FromString)
    big = _step(3, uuid.uuid4().hex, obs_rows=3 * 400)
    assert big.ByteSize() > service.limits.request("StreamSteps")
    with pytest.raises(grpc.RpcError) as err:
        next(stub_stream(iter([big]), timeout=10))
    channel.close()
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_a_spec_sized_actor_channel_refuses_to_send_an_oversize_request(seed_learner):
    _, _, address = seed_learner
    channel, stub = connect(address)
    spec = stub.GetSpec(pb2.SpecRequest(actor_id=0), timeout=10)
    channel.close()
    channel, stub = connect(address, spec)
    with pytest.raises(grpc.RpcError) as err:
        next(stub.StreamSteps(iter([_step(3, uuid.uuid4().hex, obs_rows=3 * 400)]),
                              timeout=10))
    channel.close()
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_impala_limits_cover_an_unroll_and_the_parameters():
    from seed.runtime.impala_arch.learner import ImpalaLearnerService
    config = make_config(env="toy:catch", arch="impala", actors=1, envs_per_actor=2,
                         unroll_length=7, frames=10_000, progress=False)
    core = LearnerCore(config, EnvSpec.probe(config.env, config.env_kwargs))
    service = ImpalaLearnerService(core)
    limits = service.limits
    params = limits_lib.parameters_bytes([v.numpy() for v in core.agent.parameters()])
    assert params < limits.response < 2 * params + 2 * limits_lib.SLACK_BYTES
    obs_bytes = 8 * 10 * 5 * 4  # T+1 Catch observations
    assert obs_bytes < limits.request("SendUnroll") < limits.response
    assert limits.request("StreamSteps") == limits_lib.SMALL_REQUEST_BYTES
    assert service.spec.max_response_bytes == limits.response


def test_pong_sized_limits_are_a_fraction_of_a_megabyte_per_step():
    k = 16
    step = limits_lib.with_slack(limits_lib.step_request_bytes(k, "uint8", (84, 84, 1)))
    assert k * 84 * 84 < step < 2 * k * 84 * 84 + 2 * limits_lib.SLACK_BYTES


class _Error(grpc.RpcError):
    def __init__(self, code, details):
        self._code, self._details = code, details

    def code(self):
        return self._code

    def details(self):
        return self._details


def test_actors_retry_a_busy_learner_but_not_an_oversize_message():
    from seed.runtime.actor_process import retryable
    busy = grpc.StatusCode.RESOURCE_EXHAUSTED
    assert retryable(_Error(busy, "Concurrent RPC limit exceeded!"))
    assert retryable(_Error(busy, "the learner already serves 8 streams"))
    assert not retryable(_Error(busy, "Received message larger than max (9 vs. 8)"))
    assert not retryable(_Error(busy, "GetSpec: a 9-byte request exceeds this learner's limit"))
    assert retryable(_Error(grpc.StatusCode.CANCELLED, ""))
    assert not retryable(_Error(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong auth token"))
