"""The bare TensorFlow inference step that ``seed roofline`` times the agent's against."""

import numpy as np
import pytest

from seed.bench import bare_infer
from seed.bench.costs import inference_inputs
from seed.bench.timing import alternate, rates
from seed.config import make_config
from seed.runtime.learner_core import EnvSpec
from seed.types import EnvOutput


def pong_agent(**fields):
    from seed.agents import make_agent
    config = make_config(env="atari:Pong", network="nature_cnn", actors=1, envs_per_actor=4,
                         unroll_length=2, batch_size=1, seed=4, **fields)
    spec = EnvSpec.probe(config.env, config.env_kwargs)
    return config, spec, make_agent(config, spec.observation_space, spec.action_space)


@pytest.mark.parametrize("compute_dtype,rtol", [
    ("float32", 1e-5),
    ("bfloat16", 2 ** -7)])  # /255 and *(1/255) may round to neighbouring bfloat16 values
def test_the_bare_step_does_the_agents_work(compute_dtype, rtol):
    """With the agent's weights, the bare step stacks frames, acts and samples as the agent:
    over steps with episode starts, the same actions and (to the ulp: /255 against
    *(1/255)) the same logits and baselines, in the agent's compute dtype."""
    config, spec, agent = pong_agent(jit_inference=False, compute_dtype=compute_dtype)
    net = agent.network
    bare = bare_infer.BareInference("nature_cnn", agent.num_actions, 4,
                                    spec.observation_space.shape, jit=False, seed=config.seed,
                                    compute_dtype=agent.inference_dtype.name)
    layers = [*net._torso._convs, net._torso._fc, net._policy, net._baseline]
    for var, value in zip(bare.variables, [w for layer in layers
                                           for w in (layer.kernel, layer.bias)], strict=True):
        var.assign(value)
    rng = np.random.default_rng(0)
    ids = np.array([2, 0, 3], np.int32)
    agent.reset_core_state(ids)
    for t in range(6):
        frame = rng.integers(0, 256, (3, 84, 84, 1)).astype(np.uint8)
        done = np.array([t == 0, t == 0 or t == 4, t == 0])
        action, out = agent.infer(ids, np.zeros(3, np.int32),
                                  EnvOutput(np.zeros(3, np.float32), done, frame))
        got = bare.step(ids, done, frame)
        np.testing.assert_array_equal(got[0], action)
        for bare_out, key in ((got[1], "policy_logits"), (got[2], "baseline")):
            want = out[key]
            assert np.linalg.norm(bare_out - want) <= rtol * np.linalg.norm(want) + 1e-6
    np.testing.assert_array_equal(bare._stacks.numpy()[ids], agent.read_core_state(ids)[0])


def test_unknown_network_is_refused():
    with pytest.raises(ValueError, match="no bare reference for network 'mlp'"):
        bare_infer.BareInference("mlp", 3, 2, (84, 84, 1))


@pytest.mark.parametrize("fields,has", [
    ({}, True), ({"network": "impala_resnet"}, True), ({"network": "mlp"}, False),
    ({"agent": "r2d2"}, False), ({"network_kwargs": {"lstm_size": 8}}, False)])
def test_which_configs_have_a_bare_reference(fields, has):
    assert bare_infer.has_bare_inference(make_config(**{"network": "nature_cnn", **fields})) == has


def test_timers_give_the_ratio_and_every_part_of_the_agents_call():
    config, spec, agent = pong_agent(jit_inference=True)
    inputs = inference_inputs(agent, spec.observation_space, 2)
    timers = bare_infer.inference_timers(agent, config, spec.observation_space, inputs, 4)
    m = bare_infer.summarize({name: rates(t) for name, t in alternate(timers, 0.0, 1).items()})
    assert set(m["agent_parts_ms"]) == {"network", "stack_update", "sampling",
                                        "host_copies_in", "host_copies_out"}
    assert all(v > 0 for v in m["agent_parts_ms"].values())
    assert m["infer_over_bare"] == pytest.approx(m["bare_ms_per_call"] / m["agent_ms_per_call"])
    assert m["agent_rest_ms"] == pytest.approx(
        m["agent_ms_per_call"] - sum(m["agent_parts_ms"].values()))
