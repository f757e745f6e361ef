"""seed/bench/turns.py: inference and simulation in turns, and a worker that fails."""

import pytest

from seed.bench import costs, turns
from seed.config import make_config


def _agent(**kw):
    cfg = make_config(env="toy:catch", network="mlp", actors=2, envs_per_actor=3, **kw)
    agent, spec = costs.build_agent(cfg)
    return cfg, agent, spec


def test_each_cycle_infers_then_every_worker_steps_its_envs():
    cfg, agent, spec = _agent()
    calls = []
    infer = agent.infer

    def counted(env_ids, prev, env_out):
        calls.append(len(env_ids))
        return infer(env_ids, prev, env_out)

    agent.infer = counted
    inputs = costs.inference_inputs(agent, spec.observation_space, 6)
    r = turns.measure_turns(cfg, agent, inputs, 1, seconds=0.2, warmup_cycles=3)
    assert set(calls) == {6}  # the learner's batch of every env, every cycle
    assert len(calls) == r["cycles"] + 3
    assert r["cycle_wall_s"] == pytest.approx(r["inference_wall_s"] + r["simulation_wall_s"])
    assert r["frames_per_s"] == pytest.approx(2 * 3 / r["cycle_wall_s"])
    assert r["inference_wall_s"] > 0 and r["simulation_wall_s"] > 0
    # the workers' own stepping is part of the turn; the rest is the hand-off
    assert 0 < r["stepping_wall_s"] < r["simulation_wall_s"]
    assert r["handoff_wall_s"] == pytest.approx(r["simulation_wall_s"] - r["stepping_wall_s"])


def test_a_worker_that_cannot_make_its_env_is_named_in_one_line():
    cfg, agent, spec = _agent()
    bad = make_config(env="toy:catch", network="mlp", actors=2, envs_per_actor=3,
                      env_kwargs={"no_such_argument": 1})
    inputs = costs.inference_inputs(agent, spec.observation_space, 6)
    with pytest.raises(RuntimeError) as e:
        turns.measure_turns(bad, agent, inputs, 1, seconds=0.1)
    assert str(e.value).startswith("turns: simulation worker 0 failed: ")
    assert "\n" not in str(e.value)
