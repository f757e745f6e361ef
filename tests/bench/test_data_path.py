"""The SEED data-path benchmark: the real learner service and actor streams, no inference."""

import numpy as np

from seed.agents import make_agent
from seed.bench.data_path import NoInference, measure_data_path
from seed.config import make_config
from seed.runtime.learner_core import EnvSpec
from seed.types import EnvOutput


def _catch():
    config = make_config(env="toy:catch", network="mlp", actors=2, envs_per_actor=3,
                         inference_timeout_ms=1.0)
    spec = EnvSpec.probe(config.env, config.env_kwargs)
    return config, spec, make_agent(config, spec.observation_space, spec.action_space)


def test_no_inference_answers_zeros_of_the_agents_shapes_and_initial_states():
    config, spec, agent = _catch()
    null = NoInference(agent)
    assert (null.unroll_length, null.unroll_overlap) == (agent.unroll_length,
                                                         agent.unroll_overlap)
    obs = np.ones((4,) + spec.observation_space.shape, spec.observation_space.dtype)
    env_output = EnvOutput(np.ones(4, np.float32), np.zeros(4, bool), obs)
    action, outputs = null.infer(np.arange(4), np.zeros(4, np.int32), env_output)
    _, real = agent.infer(np.arange(4), np.zeros(4, np.int32), env_output)
    assert action.tolist() == [0, 0, 0, 0] and action.dtype == np.int32
    assert set(outputs) == set(real) and null.output_spec() == agent.output_spec()
    for key, value in real.items():
        assert outputs[key].shape == value.shape and outputs[key].dtype == value.dtype, key
        assert not outputs[key].any(), key
    for got, want in zip(null.read_core_state(np.arange(3)), agent.initial_state(3)):
        np.testing.assert_array_equal(got, want)


def test_measure_reports_per_frame_costs_of_both_sides():
    config, spec, agent = _catch()
    r = measure_data_path(config, agent, spec, seconds=1.0)
    assert (r["actors"], r["envs_per_actor"]) == (2, 3)
    assert r["frames_per_s"] > 0
    assert r["learner_cpu_s_per_frame"] > 0 and r["actor_cpu_s_per_frame"] > 0
    assert 0 < r["round_trip_p50_ms"] <= r["round_trip_p99_ms"]
