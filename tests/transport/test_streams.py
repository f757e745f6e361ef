"""Stalled, stray, duplicate and half-open streams never lock the SEED learner out."""

import time
import uuid

import grpc
import pytest

from seed.config import make_config
from seed.runtime.architectures import architecture
from seed.runtime.learner_core import EnvSpec, LearnerCore
from seed.runtime.seed_arch import sizing
from seed.runtime.seed_arch.actor import run_actor
from seed.runtime.seed_arch.learner import SeedLearnerService
from seed.transport.channel import connect, start_server
from seed.transport.proto import pb2
from seed.transport.streams import StreamRegistry
from tests.support.stream_peers import FreezingProxy, HeldStream


class Learner:
    def __init__(self, address="", keepalive=(5.0, 5.0), **overrides):
        values = dict(env="toy:catch", actors=2, envs_per_actor=2, train=False,
                      inference_timeout_ms=1.0, frames=10_000, progress=False)
        values.update(overrides)
        self.config = make_config(**values)
        self.core = LearnerCore(self.config, EnvSpec.probe(self.config.env, {}))
        self.service = SeedLearnerService(self.core)
        self.workers = architecture("seed").grpc_workers(self.config)
        self.server, self.address = start_server(self.service, address,
                                                 max_workers=self.workers, keepalive=keepalive)

    @property
    def streams(self) -> StreamRegistry:
        return self.service.streams

    def close(self):
        self.service.close()
        self.core.stop()
        self.server.stop(0)


@pytest.fixture()
def make_learner():
    made = []

    def make(**kw):
        made.append(Learner(**kw))
        return made[-1]
    yield make
    for learner in made:
        learner.close()


def wait_for(condition, seconds=60.0):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def spec_of(address):
    channel, stub = connect(address)
    try:
        return stub.GetSpec(pb2.SpecRequest(actor_id=0), timeout=10)
    finally:
        channel.close()


def test_more_silent_streams_than_threads_leave_spec_and_a_real_actor_served(make_learner):
    learner = make_learner(stream_idle_timeout_s=0)  # no idle limit: the cap alone
    channel, stub = connect(learner.address)
    strays = [HeldStream(stub) for _ in range(3 * learner.workers)]
    cap = sizing.max_streams(learner.config)
    # Each stray is either held (at most the cap), or closed to make room (CANCELLED), or,
    # in a burst faster than closed streams free their threads, refused at once.
    assert wait_for(lambda: sum(s.call.done() for s in strays) >= len(strays) - cap)
    assert learner.streams.open_streams <= cap
    assert spec_of(learner.address).num_actors == 2
    assert run_actor(learner.address, task=0, max_steps=200) == 0
    ended = {s.ended_with() for s in strays if s.call.done()}
    assert ended <= {grpc.StatusCode.CANCELLED, grpc.StatusCode.RESOURCE_EXHAUSTED}
    assert learner.streams.counts["evicted"] >= 1
    for s in strays:
        s.close()
    channel.close()


def test_at_the_cap_of_live_streams_a_new_one_is_refused_then_served_once_idle_ones_close(
        make_learner):
    learner = make_learner(envs_per_actor=4, stream_idle_timeout_s=2.0)
    cap = sizing.max_streams(learner.config)
    assert cap == learner.config.num_envs  # one live stray per env fills it
    channel, stub = connect(learner.address)
    run = uuid.uuid4().hex
    live = [HeldStream(stub) for _ in range(cap)]
    for env_id, s in enumerate(live):
        s.step([env_id], run)
    refused = HeldStream(stub)
    assert refused.ended_with() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert spec_of(learner.address).envs_per_actor == 4  # unary calls have their own threads
    # The strays go quiet; past the idle limit they are closed and a real actor gets in.
    assert run_actor(learner.address, task=1, max_steps=200) == 0
    assert {s.ended_with() for s in live} == {grpc.StatusCode.CANCELLED}
    assert learner.streams.counts["idle"] >= cap and learner.streams.counts["refused"] >= 1
    for s in live + [refused]:
        s.close()
    channel.close()


def test_a_new_stream_for_the_same_envs_supersedes_the_old_one(make_learner):
    learner = make_learner(stream_idle_timeout_s=0)
    channel, stub = connect(learner.address)
    old, new = HeldStream(stub), HeldStream(stub)
    old.step([0, 1], uuid.uuid4().hex)
    new.step([0, 1], uuid.uuid4().hex)  # a restarted actor, a new run id
    assert old.ended_with() == grpc.StatusCode.CANCELLED
    assert new.step([0, 1], uuid.uuid4().hex).shape == (2,)  # the new one keeps going
    assert learner.streams.counts["superseded"] == 1
    # Disjoint env ids (an actor's other split) supersede nothing.
    other = HeldStream(stub)
    other.step([2, 3], uuid.uuid4().hex)
    assert new.step([0, 1], uuid.uuid4().hex).shape == (2,)
    assert learner.streams.counts["superseded"] == 1
    for s in (old, new, other):
        s.close()
    channel.close()


def test_a_stream_that_goes_quiet_is_closed_after_the_idle_limit(make_learner):
    learner = make_learner(stream_idle_timeout_s=1.0)
    channel, stub = connect(learner.address)
    s = HeldStream(stub)
    s.step([0, 1], uuid.uuid4().hex)
    assert s.ended_with() == grpc.StatusCode.CANCELLED
    assert learner.streams.counts["idle"] == 1 and learner.streams.open_streams == 0
    s.close()
    channel.close()


def test_a_half_open_connection_is_dropped_by_keepalive(make_learner):
    learner = make_learner(address="127.0.0.1:0", keepalive=(1.0, 1.0),
                           stream_idle_timeout_s=0)  # no idle limit: keepalive alone
    proxy = FreezingProxy(int(learner.address.rsplit(":", 1)[1]))
    channel, stub = connect(f"127.0.0.1:{proxy.port}")
    s = HeldStream(stub, timeout=120)
    s.step([0, 1], uuid.uuid4().hex)
    assert learner.streams.open_streams == 1
    proxy.frozen.set()
    assert wait_for(lambda: learner.streams.open_streams == 0, seconds=60)
    # ... and the envs are free for the actor's next stream.
    assert run_actor(learner.address, task=0, max_steps=100) == 0
    s.close()
    channel.close()
    proxy.close()


def test_registry_bookkeeping_without_grpc():
    class Ctx:
        def __init__(self):
            self.cancelled = False
            self.callbacks = []

        def add_callback(self, fn):
            self.callbacks.append(fn)
            return True

        def peer(self):
            return "test"

        def cancel(self):
            self.cancelled = True
            for fn in self.callbacks:
                fn()

    reg = StreamRegistry(max_streams=2, idle_timeout_s=0)
    a, b = Ctx(), Ctx()
    sa, sb = reg.admit(a), reg.admit(b)
    reg.claim(sa, [0])
    c = Ctx()
    sc = reg.admit(c)  # evicts b, the silent one
    assert b.cancelled and not a.cancelled and sc is not None
    reg.claim(sc, [1])
    assert reg.admit(Ctx()) is None  # both slots live: refused
    d = Ctx()
    a.cancel()  # a's call ends: its slot frees
    sd = reg.admit(d)
    reg.claim(sd, [1])  # supersedes c
    assert c.cancelled and reg.counts == {"opened": 4, "refused": 1, "evicted": 1,
                                          "superseded": 1, "idle": 0}
    del sb
