"""The SEED learner service over a real gRPC server: bad input isolation, specs, actions;
and its inference thread's data path, fed straight through the batcher."""

import threading
import time
import uuid

import grpc
import numpy as np
import pytest

from seed.config import make_config
from seed.inference.batcher import BatcherClosed
from seed.runtime.architectures import architecture
from seed.runtime.learner_core import EnvSpec, LearnerCore
from seed.runtime.seed_arch import sizing
from seed.runtime.seed_arch.actor import run_actor
from seed.runtime.seed_arch.learner import ActorStep, SeedLearnerService
from seed.transport import tensor as wire
from seed.transport.channel import connect, start_server
from seed.transport.proto import pb2


@pytest.fixture(scope="module")
def learner():
    config = make_config(env="toy:catch", actors=2, envs_per_actor=2, train=False,
                         inference_timeout_ms=1.0, frames=10_000, progress=False)
    core = LearnerCore(config, EnvSpec.probe(config.env, config.env_kwargs))
    service = SeedLearnerService(core)
    server, address = start_server(service, "", max_workers=16)
    yield core, service, address
    service.close()
    core.stop()
    server.stop(0)


def good_request(ids, run, obs_shape=(10, 5), **overrides):
    k = len(ids)
    fields = dict(actor_id=0, run_id=run, env_ids=ids,
                  reward=wire.encode(np.zeros(k, np.float32)),
                  done=wire.encode(np.ones(k, bool)),
                  observation=wire.encode(np.zeros((k,) + obs_shape, np.float32)))
    fields.update(overrides)
    return pb2.StepRequest(**fields)


def stream_one(stub, request):
    return next(stub.StreamSteps(iter([request])))


def test_spec_tells_an_actor_everything_it_needs(learner):
    _, _, address = learner
    channel, stub = connect(address)
    spec = stub.GetSpec(pb2.SpecRequest(actor_id=0), timeout=10)
    channel.close()
    assert spec.arch == "seed" and spec.env == "toy:catch"
    assert spec.envs_per_actor == 2 and spec.num_actors == 2 and spec.num_actions == 3
    assert spec.observation.dtype == "float32" and list(spec.observation.shape) == [10, 5]
    assert spec.frames_per_step == 1


def test_a_step_gets_one_valid_action_per_env(learner):
    _, _, address = learner
    channel, stub = connect(address)
    reply = stream_one(stub, good_request([2, 3], uuid.uuid4().hex))
    channel.close()
    actions = wire.decode(reply.action, dtype="int32", shape=(2,))
    assert ((0 <= actions) & (actions < 3)).all()


@pytest.mark.parametrize("overrides,message", [
    (dict(reward=wire.encode(np.zeros(2, np.float64))), "expected dtype float32"),
    (dict(observation=wire.encode(np.zeros((2, 10, 6), np.float32))), "expected shape"),
    (dict(env_ids=[1, 4]), "env id out of range"),
    (dict(env_ids=[1, 1]), "duplicate env ids"),
    (dict(done=pb2.Tensor(dtype="bool", shape=[2], data=b"\x01")), "bytes do not fill"),
    (dict(run_id=""), "run_id must be set"),
])
def test_bad_requests_get_invalid_argument_with_a_reason(learner, overrides, message):
    _, _, address = learner
    channel, stub = connect(address)
    with pytest.raises(grpc.RpcError) as err:
        stream_one(stub, good_request([0, 1], uuid.uuid4().hex, **overrides))
    channel.close()
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in err.value.details()


def test_garbage_bytes_on_a_live_stream_leave_other_actors_running(learner):
    core, _, address = learner
    results = {}

    def actor():  # a well-formed actor stepping throughout
        results["exit"] = run_actor(address, task=1, max_steps=400)

    t = threading.Thread(target=actor)
    t.start()
    channel = grpc.insecure_channel(address.replace("unix:", "unix:"))
    raw = channel.stream_stream("/seedrl.Learner/StreamSteps")  # bytes in, bytes out
    with pytest.raises(grpc.RpcError) as err:
        next(raw(iter([b"\xff\xff\xff\xff garbage \x00"])))
    channel.close()
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "do not parse" in err.value.details()
    t.join(60)
    assert results.get("exit") == 0
    # And the learner still serves a brand-new stream afterwards.
    channel, stub = connect(address)
    reply = stream_one(stub, good_request([0, 1], uuid.uuid4().hex))
    channel.close()
    assert wire.decode(reply.action).shape == (2,)


def test_seed_learner_refuses_impala_calls(learner):
    _, _, address = learner
    channel, stub = connect(address)
    with pytest.raises(grpc.RpcError) as err:
        stub.GetParameters(pb2.ParametersRequest(have_version=-1), timeout=10)
    channel.close()
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_a_split_actor_keeps_one_stream_per_env_group_in_flight():
    """actor_splits=2: each of the actor's two groups of 2 envs is its own request, so every
    inference batch holds exactly one group and all 4 envs keep stepping."""
    config = make_config(env="toy:catch", actors=1, envs_per_actor=4, actor_splits=2, train=False,
                         inference_timeout_ms=50.0, frames=10_000, progress=False)
    assert sizing.inference_batch_size(config) == 2
    core = LearnerCore(config, EnvSpec.probe(config.env, config.env_kwargs))
    service = SeedLearnerService(core)
    server, address = start_server(service, "",
                                   max_workers=architecture("seed").grpc_workers(config))
    try:
        assert run_actor(address, task=0, max_steps=400) == 0
        batches, rows = service.batcher.take_stats()
        assert batches >= 200 and rows == 2 * batches
        assert core.stats.env_steps >= 400
    finally:
        service.close()
        core.stop()
        server.stop(0)


def test_action_latency_spans_the_round_trip_through_the_learner():
    """A SEED actor's action latency holds the learner's inference (slowed here by
    ``delay_ms`` a batch): one figure per step, each reported by the stream's next request."""
    delay_ms, steps = 20.0, 30
    config = make_config(env="toy:catch", actors=1, envs_per_actor=2, train=False,
                         inference_timeout_ms=1.0, frames=10_000, progress=False)
    core = LearnerCore(config, EnvSpec.probe(config.env, config.env_kwargs))
    infer = core.agent.infer

    def slow_infer(*args, **kwargs):
        time.sleep(delay_ms / 1000)
        return infer(*args, **kwargs)

    core.agent.infer = slow_infer
    service = SeedLearnerService(core)
    server, address = start_server(service, "",
                                   max_workers=architecture("seed").grpc_workers(config))
    try:
        assert run_actor(address, task=0, max_steps=2 * steps) == 0
    finally:
        service.close()
        core.stop()
        server.stop(0)
    sample = core.stats.take_interval()
    latency = sample["action_latencies_ms"]
    # Step i's latency rides on request i + 1; the last request may be cut off by the
    # actor's close before the learner reads it.
    assert steps - 1 <= len(latency) <= steps
    assert latency.min() >= delay_ms
    assert sample["learner_inference_ms"].min() >= delay_ms
    assert sample["actor_inference_ms"].size == 0


@pytest.fixture()
def direct_service():
    """A service without a server: tests submit ActorSteps to its batcher themselves."""
    made = []

    def make(actors):
        config = make_config(env="toy:catch", actors=actors, envs_per_actor=2, train=False,
                             inference_timeout_ms=1000.0, unroll_length=2, frames=10_000,
                             progress=False)
        core = LearnerCore(config, EnvSpec.probe(config.env, config.env_kwargs))
        made.append((core, SeedLearnerService(core)))
        return made[-1]

    yield make
    for core, service in made:
        service.close()
        core.stop()


def actor_step(env_ids, run_id):
    k = len(env_ids)
    return ActorStep(0, run_id, np.asarray(env_ids, np.int64), np.zeros(k, np.float32),
                     np.ones(k, bool), np.zeros((k, 10, 5), np.float32))


def wait_for(condition, seconds=10.0):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


def test_one_batch_of_two_actors_answers_each_its_envs_and_extends_their_unrolls(
        direct_service):
    core, service = direct_service(actors=2)
    futs = [service.batcher.submit(actor_step(ids, run), rows=2)
            for ids, run in (([2, 3], "run-b"), ([0, 1], "run-a"))]
    actions = [f.result(timeout=30) for f in futs]
    assert [a.shape for a in actions] == [(2,), (2,)]
    np.testing.assert_array_equal(service.runs.prev_action[[2, 3, 0, 1]],
                                  np.concatenate(actions))
    assert wait_for(lambda: [service.builder.pending(e) for e in range(4)] == [1, 1, 1, 1])
    assert core.stats.env_steps == 4
    assert service.batcher.take_stats() == (1, 4)  # both requests in one batch


def test_a_failure_in_unroll_assembly_ends_the_run_once_the_actors_have_their_actions(
        direct_service, monkeypatch):
    core, service = direct_service(actors=1)

    def broken(*args, **kwargs):
        raise ValueError("boom")

    monkeypatch.setattr(service.builder, "append_batch", broken)
    assert service.batcher(actor_step([0, 1], "run-a"), rows=2).shape == (2,)
    assert wait_for(lambda: service.batcher.error is not None)
    assert isinstance(service.batcher.error, ValueError)
    assert "unroll assembly failed" in str(core.error)
    with pytest.raises(BatcherClosed):
        service.batcher(actor_step([0, 1], "run-a"), rows=2)
