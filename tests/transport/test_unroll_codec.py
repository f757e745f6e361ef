"""The IMPALA unroll's wire: one codec of the run's unroll spec encodes (actor), decodes
(learner) and sizes it."""

import grpc
import numpy as np
import pytest
from gymnasium import spaces

from seed.transport import limits as limits_lib
from seed.transport import tensor as wire
from seed.transport.proto import pb2
from seed.transport.unroll_codec import UnrollCodec
from seed.types import ArraySpec, EnvOutput, Unroll
from seed.unroll_spec import UnrollSpec

T, A = 4, 3  # unroll length, actions
OBS = spaces.Box(0, 255, (6, 5, 2), np.uint8)


class _Agent:
    """The members UnrollSpec.of reads: a V-trace-like agent with an LSTM-like state."""

    unroll_length = T

    def initial_state(self, batch_size):
        return (np.zeros((batch_size, 8), np.float32), np.zeros((batch_size, 8), np.float32))

    def output_spec(self):
        return {"action": ArraySpec("int32", ()),
                "policy_logits": ArraySpec("float32", (A,)),
                "baseline": ArraySpec("float32", ())}


def _spec() -> UnrollSpec:
    return UnrollSpec.of(_Agent(), OBS)


def _codec() -> UnrollCodec:
    return UnrollCodec(_spec())


def _unroll(steps=T + 1, seed=0) -> Unroll:
    rng = np.random.default_rng(seed)
    return Unroll(
        core_state=(rng.normal(size=8).astype(np.float32),
                    rng.normal(size=8).astype(np.float32)),
        prev_action=rng.integers(0, A, steps).astype(np.int32),
        env_output=EnvOutput(reward=rng.normal(size=steps).astype(np.float32),
                             done=rng.integers(0, 2, steps).astype(bool),
                             observation=rng.integers(0, 256, (steps, 6, 5, 2)).astype(np.uint8)),
        agent_output={"action": rng.integers(0, A, steps).astype(np.int32),
                      "policy_logits": rng.normal(size=(steps, A)).astype(np.float32),
                      "baseline": rng.normal(size=steps).astype(np.float32)})


def _encode(codec, unroll, **fields):
    return codec.encode(unroll, actor_id=1, run_id="r", env_id=1, parameter_version=7, **fields)


def _one_line(error) -> str:
    text = str(error.value)
    assert text and "\n" not in text
    return text


def test_the_spec_is_the_agents_and_the_envs():
    spec = _spec()
    assert spec.steps == T + 1
    assert spec.observation == ArraySpec("uint8", (6, 5, 2))
    assert spec.core_state == (ArraySpec("float32", (8,)),) * 2
    assert spec.agent_output["policy_logits"] == ArraySpec("float32", (A,))


def test_an_unroll_round_trips_bit_for_bit_with_what_rides_with_it():
    codec, unroll = _codec(), _unroll()
    message = _encode(codec, unroll, episodes=[(2, 1.5, 9)], inference_ms=0.5,
                      parameter_pull_ms=2.0, action_latency_ms=[1.0, 2.0])
    back = codec.decode(pb2.UnrollMessage.FromString(message.SerializeToString()))
    for got, want in zip(back.core_state, unroll.core_state):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    for got, want in ((back.prev_action, unroll.prev_action),
                      *zip(back.env_output, unroll.env_output)):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    assert set(back.agent_output) == set(unroll.agent_output)
    for key, want in unroll.agent_output.items():
        assert back.agent_output[key].dtype == want.dtype
        np.testing.assert_array_equal(back.agent_output[key], want)
    assert (message.actor_id, message.env_id, message.parameter_version) == (1, 1, 7)
    assert [(e.env_id, e.episode_return, e.episode_length) for e in message.episodes] == [
        (2, 1.5, 9)]
    assert list(message.action_latency_ms) == [1.0, 2.0]


def _with(unroll, **changes) -> Unroll:
    env = unroll.env_output._replace(**{k: v for k, v in changes.items()
                                       if k in EnvOutput._fields})
    output = {**unroll.agent_output, **changes.get("agent_output", {})}
    for key in changes.get("drop", ()):
        output.pop(key)
    return Unroll(changes.get("core_state", unroll.core_state), unroll.prev_action, env, output)


@pytest.mark.parametrize("changes,message", [
    ({"observation": np.zeros((T + 1, 6, 5, 3), np.uint8)},
     r"observation: expected uint8 \(5, 6, 5, 2\), got uint8 \(5, 6, 5, 3\)"),
    ({"reward": np.zeros(T + 1, np.float64)}, r"reward: expected float32"),
    ({"agent_output": {"policy_logits": np.zeros((T + 1, A + 1), np.float32)}},
     r"agent_output\[policy_logits\]: expected float32 \(5, 3\)"),
    ({"drop": ["baseline"]}, r"agent_output: expected .*; missing \['baseline'\]"),
    ({"agent_output": {"q_values": np.zeros((T + 1, A), np.float32)}},
     r"unexpected \['q_values'\]"),
    ({"core_state": (np.zeros(8, np.float32),)}, "core_state: expected 2 tensors, got 1"),
])
def test_an_actor_refuses_to_encode_an_unroll_that_does_not_fit(changes, message):
    with pytest.raises(wire.WireError, match=message) as e:
        _encode(_codec(), _with(_unroll(), **changes))
    _one_line(e)


def test_a_longer_unroll_is_refused_at_both_ends():
    codec, longer = _codec(), _unroll(steps=T + 2)
    with pytest.raises(wire.WireError, match=r"expected int32 \(5,\), got int32 \(6,\)") as e:
        _encode(codec, longer)
    _one_line(e)
    longer_codec = UnrollCodec(
        UnrollSpec.of(type("Longer", (_Agent,), {"unroll_length": T + 1})(), OBS))
    with pytest.raises(wire.WireError, match=r"prev_action: expected shape \(5,\), got \(6,\)"):
        codec.decode(_encode(longer_codec, longer))


@pytest.mark.parametrize("field,tensor,message", [
    ("observation", np.zeros((T + 1, 6, 5, 2), np.float32),
     "observation: expected dtype uint8, got float32"),
    ("done", np.zeros(T, bool), r"done: expected shape \(5,\), got \(4,\)"),
])
def test_a_learner_refuses_a_tensor_that_does_not_fit(field, tensor, message):
    codec = _codec()
    msg = _encode(codec, _unroll())
    getattr(msg, field).CopyFrom(wire.encode(tensor))
    with pytest.raises(wire.WireError, match=message) as e:
        codec.decode(msg)
    _one_line(e)


def test_a_learner_refuses_missing_or_unexpected_agent_outputs():
    codec = _codec()
    msg = _encode(codec, _unroll())
    del msg.agent_output["policy_logits"]
    with pytest.raises(wire.WireError, match=r"missing \['policy_logits'\]") as e:
        codec.decode(msg)
    _one_line(e)
    msg = _encode(codec, _unroll())
    msg.agent_output["extra"].CopyFrom(wire.encode(np.zeros(T + 1, np.float32)))
    with pytest.raises(wire.WireError, match=r"unexpected \['extra'\]"):
        codec.decode(msg)


def test_the_size_limit_holds_the_largest_legitimate_unroll_and_refuses_more():
    codec = _codec()
    widest = codec.encode(_unroll(), actor_id=2 ** 31 - 1, run_id="f" * 64, env_id=2 ** 31 - 1,
                         parameter_version=2 ** 62,
                         episodes=[(2 ** 31 - 1, -1.0e300, 2 ** 62)] * (T + 1),
                         inference_ms=1.0, parameter_pull_ms=1.0,
                         action_latency_ms=[1.0] * (T + 1))
    assert widest.ByteSize() == codec.max_bytes
    assert codec.limit == limits_lib.with_slack(codec.max_bytes)
    assert codec.max_bytes > (T + 1) * 6 * 5 * 2  # the observations, at least
    too_many = 1 + (codec.limit - codec.max_bytes) // len(pb2.EpisodeSummary(
        env_id=1, episode_return=1.0, episode_length=1).SerializeToString())
    with pytest.raises(wire.WireError, match=f"exceeds the {codec.limit} bytes its spec") as e:
        _encode(codec, _unroll(), episodes=[(1, 1.0, 1)] * (T + 1 + 2 * too_many))
    _one_line(e)


# -- both ends of a real run ------------------------------------------------------------

@pytest.fixture(scope="module")
def impala():
    from seed.config import make_config
    from seed.runtime.impala_arch.learner import ImpalaLearnerService
    from seed.runtime.learner_core import EnvSpec, LearnerCore
    from seed.transport.channel import connect, start_server
    config = make_config(env="toy:catch", arch="impala", actors=1, envs_per_actor=2,
                         unroll_length=T, batch_size=2, train=False, frames=10**6, progress=False)
    core = LearnerCore(config, EnvSpec.probe(config.env, config.env_kwargs))
    service = ImpalaLearnerService(core)
    server, address = start_server(service, "", max_workers=8)
    channel, stub = connect(address)
    spec = stub.GetSpec(pb2.SpecRequest(actor_id=0), timeout=10)
    channel.close()
    channel, stub = connect(address, spec)
    yield core, service, stub, address
    channel.close()
    core.stop()
    server.stop(0)


def _catch_unroll(spec: UnrollSpec) -> Unroll:
    n = spec.steps
    zeros = {k: np.zeros((n,) + s.shape, s.dtype) for k, s in spec.agent_output.items()}
    return Unroll(core_state=(), prev_action=np.zeros(n, np.int32),
                  env_output=EnvOutput(np.zeros(n, np.float32), np.zeros(n, bool),
                                       np.zeros((n, 10, 5), np.float32)),
                  agent_output=zeros)


def test_the_impala_learner_sizes_and_decodes_by_the_spec_an_actor_builds(impala):
    from seed.agents import make_agent
    from seed.runtime.actor_process import spec_config
    core, service, stub, address = impala
    # The actor's own agent, from the config in the learner's spec: the same spec.
    from seed.transport.channel import connect
    channel, probe = connect(address)
    config = spec_config(probe.GetSpec(pb2.SpecRequest(actor_id=0), timeout=10))
    channel.close()
    obs = core.env_spec.observation_space
    actor_spec = UnrollSpec.of(make_agent(config, obs, core.env_spec.action_space), obs)
    assert actor_spec == service.unroll_codec.spec
    actor_codec = UnrollCodec(actor_spec)
    assert service.limits.request("SendUnroll") == actor_codec.limit
    assert set(actor_spec.agent_output) == {"action", "policy_logits", "baseline"}
    queued = len(core.buffer)
    ack = stub.SendUnroll(_encode(actor_codec, _catch_unroll(actor_spec)), timeout=30)
    assert ack.parameter_version == 0 and len(core.buffer) == queued  # serve mode: not kept
    assert core.stats.env_steps == T


def test_the_impala_learner_refuses_an_unroll_without_the_agents_outputs(impala):
    _, service, stub, _ = impala
    msg = _encode(service.unroll_codec, _catch_unroll(service.unroll_codec.spec))
    del msg.agent_output["policy_logits"]
    with pytest.raises(grpc.RpcError) as err:
        stub.SendUnroll(msg, timeout=30)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "missing ['policy_logits']" in err.value.details()


def test_the_impala_learner_refuses_an_unroll_over_its_limit_unparsed(impala):
    from seed.transport.channel import connect
    _, service, _, address = impala
    channel, stub = connect(address, pb2.Spec())  # a channel of gRPC's default limits
    msg = _encode(service.unroll_codec, _catch_unroll(service.unroll_codec.spec))
    msg.observation.CopyFrom(wire.encode(np.zeros((T + 1, 10, 5 * 1000), np.float32)))
    assert msg.ByteSize() > service.unroll_codec.limit
    with pytest.raises(grpc.RpcError) as err:
        stub.SendUnroll(msg, timeout=30)
    channel.close()
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
