"""IMPALA learner over a real server: versioned pulls, no stale acting, bad unrolls."""

import threading
import time

import grpc
import numpy as np
import pytest

from seed.config import make_config
from seed.runtime.impala_arch.actor import run_actor
from seed.runtime.impala_arch.learner import ImpalaLearnerService
from seed.runtime.learner_core import EnvSpec, LearnerCore
from seed.transport import tensor as wire
from seed.transport.channel import connect, start_server
from seed.transport.proto import pb2


class RecordingService(ImpalaLearnerService):
    """Logs, per env, the version each pull handed out and the version each unroll used."""

    def __init__(self, core):
        super().__init__(core)
        self.events = []  # (kind, actor/env, version, learner version at the time)
        self.lock = threading.Lock()

    def GetParameters(self, request, context):
        reply = super().GetParameters(request, context)
        with self.lock:
            self.events.append(("pull", request.have_version, reply.version, self.version))
        return reply

    def SendUnroll(self, request, context):
        with self.lock:
            self.events.append(("unroll", request.env_id, request.parameter_version,
                                self.version))
        return super().SendUnroll(request, context)


@pytest.fixture()
def learner():
    config = make_config(env="toy:catch", arch="impala", actors=1, envs_per_actor=2,
                         unroll_length=5, batch_size=2, frames=10**6, progress=False)
    core = LearnerCore(config, EnvSpec.probe(config.env, config.env_kwargs))
    service = RecordingService(core)
    server, address = start_server(service, "", max_workers=8)
    core.start_training()
    yield core, service, address
    core.stop()
    server.stop(0)


def test_versions_increase_and_actors_never_act_with_parameters_older_than_one_unroll(learner):
    core, service, address = learner
    assert run_actor(address, task=0, max_steps=2 * 5 * 40) == 0
    events = service.events
    pulls = [e for e in events if e[0] == "pull"]
    unrolls = [e for e in events if e[0] == "unroll"]
    assert len(unrolls) >= 70 and core.stats.learner_steps > 10
    versions = [e[2] for e in pulls]
    assert versions == sorted(versions) and versions[-1] > versions[0]  # increase
    # Each unroll acted with exactly what the actor's latest pull returned, and that pull
    # happened right after the previous round of unrolls: the parameters an unroll used
    # were at most one unroll old.
    latest = None
    for kind, _, version, _ in events:
        if kind == "pull":
            latest = version
        else:
            assert version == latest
    # Between two pulls there is one round of unrolls: one per env of the actor.
    rounds, count = [], 0
    for kind, *_ in events[1:]:
        if kind == "unroll":
            count += 1
        else:
            rounds.append(count)
            count = 0
    assert set(rounds) == {2}


def test_pull_sends_nothing_when_the_actor_is_current(learner):
    _, service, address = learner
    channel, stub = connect(address)
    first = stub.GetParameters(pb2.ParametersRequest(have_version=-1), timeout=30)
    assert len(first.values) == len(service.core.agent.parameters())
    again = stub.GetParameters(pb2.ParametersRequest(have_version=10**9), timeout=30)
    channel.close()
    assert len(again.values) == 0 and again.version >= first.version


def test_malformed_unroll_is_invalid_argument(learner):
    _, _, address = learner
    channel, stub = connect(address)
    msg = pb2.UnrollMessage(
        actor_id=0, run_id="r", env_id=0,
        prev_action=wire.encode(np.zeros(6, np.int32)), reward=wire.encode(np.zeros(6, np.float32)),
        done=wire.encode(np.zeros(6, bool)),
        observation=wire.encode(np.zeros((6, 10, 5), np.float32)),
        agent_output={"action": wire.encode(np.zeros(6, np.int32)),
                      "policy_logits": wire.encode(np.zeros((6, 3), np.float32)),
                      "baseline": wire.encode(np.zeros(6, np.float32))})
    with pytest.raises(grpc.RpcError) as err:  # core_state missing: the MLP is stateless, so
        stub.SendUnroll(pb2.UnrollMessage(**{**{f.name: getattr(msg, f.name) for f, _ in
                                                 msg.ListFields()}, "env_id": 7}), timeout=30)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "env id 7 out of range" in err.value.details()
    bad_obs = pb2.UnrollMessage()
    bad_obs.CopyFrom(msg)
    bad_obs.observation.CopyFrom(wire.encode(np.zeros((6, 10, 4), np.float32)))
    with pytest.raises(grpc.RpcError) as err:
        stub.SendUnroll(bad_obs, timeout=30)
    assert "observation: expected shape" in err.value.details()
    assert stub.SendUnroll(msg, timeout=30).parameter_version >= 0  # well-formed is accepted
    channel.close()


class SlowUnrollService(RecordingService):
    """Takes DELAY_S over every unroll it receives, as a loaded learner or network would."""

    DELAY_S = 0.1

    def SendUnroll(self, request, context):
        time.sleep(self.DELAY_S)
        return super().SendUnroll(request, context)


def test_action_latency_holds_what_the_actor_does_between_observation_and_action():
    """An IMPALA actor's action latency is not its inference time: the step on which its
    envs complete an unroll does not act before it has sent the unrolls (and pulled
    parameters), so that step's latency holds both slow sends; the other steps' do not."""
    T, envs = 5, 2
    config = make_config(env="toy:catch", arch="impala", actors=1, envs_per_actor=envs,
                         unroll_length=T, batch_size=2, train=False, frames=10**6, progress=False)
    core = LearnerCore(config, EnvSpec.probe(config.env, config.env_kwargs))
    service = SlowUnrollService(core)
    server, address = start_server(service, "", max_workers=8)
    try:
        assert run_actor(address, task=0, max_steps=envs * T * 10) == 0
    finally:
        core.stop()
        server.stop(0)
    rounds = sum(e[0] == "unroll" for e in service.events) // envs
    sample = core.stats.take_interval()
    latency = sample["action_latencies_ms"]
    delay_ms = 1000 * SlowUnrollService.DELAY_S
    assert rounds >= 8
    # One latency per actor step, each reported with the first round of unrolls after it:
    # a round carries the T steps since the one before.
    assert len(latency) == T * rounds
    # Every round but the last held up the next action by its envs' two sends.
    assert np.sum(latency >= envs * delay_ms) >= rounds - 1
    # The other steps waited on local inference only.
    assert np.median(latency) < delay_ms
    # Local inference, the figure the old latency columns held, never saw the sends.
    assert sample["actor_inference_ms"].size and sample["actor_inference_ms"].max() < delay_ms
    assert sample["learner_inference_ms"].size == 0
