"""docs/design.md's recipe for an agent, held to by a third agent written from it alone
(tests/support/pg_agent.py, a plain policy gradient): it is an Agent, its loss is the one it says,
and a step moves the policy the right way (registered by name it learns Catch in a real run:
tests/e2e/test_agent_recipe_learns.py).
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import tensorflow as tf
from gymnasium import spaces

from seed.agents import agent_names, make_agent, register_agent, unregister_agent
from seed.agents.contract import Agent, Buffer
from seed.buffers.prioritized import PrioritizedReplay
from seed.buffers.unroll_queue import QueueClosed, UnrollQueue
from seed.config import Config, ConfigError, from_saved, make_config
from seed.types import EnvOutput, Unroll

from tests.support.pg_agent import PGAgent, PGConfig

OBS = spaces.Box(0.0, 1.0, (3,), np.float32)
ACT = spaces.Discrete(3)


@pytest.fixture
def pg():
    register_agent("pg", PGAgent, PGConfig)
    yield
    unregister_agent("pg")


def pg_config(**fields):
    base = dict(agent="pg", network="mlp", network_kwargs={"hidden_sizes": (16,)}, actors=1,
                envs_per_actor=4, unroll_length=3, batch_size=4, seed=1)
    return make_config(**{**base, **fields})


def test_a_registered_agent_is_a_name_a_config_may_take_until_unregistered():
    assert agent_names() == ["vtrace", "r2d2"]
    with pytest.raises(ConfigError,
                       match=r"bad value for agent: 'pg' \(allowed: one of vtrace, r2d2\)"):
        pg_config().validate()
    register_agent("pg", PGAgent, PGConfig)
    try:
        assert agent_names() == ["vtrace", "r2d2", "pg"]
        pg_config().validate()
        assert type(make_agent(pg_config(), OBS, ACT)) is PGAgent
        for taken in ("pg", "vtrace"):
            with pytest.raises(ValueError, match=f"an agent named '{taken}' exists"):
                register_agent(taken, PGAgent, PGConfig)
    finally:
        unregister_agent("pg")
    with pytest.raises(ConfigError, match="bad value for agent: 'pg'"):
        pg_config()
    with pytest.raises(ConfigError, match="bad value for agent: 'pg'"):
        Config(agent="pg")
    actors_view = from_saved({**make_config().to_json(), "agent": "pg"}, unknown_agent_ok=True)
    with pytest.raises(ValueError, match="unknown agent 'pg': choose vtrace or r2d2"):
        make_agent(actors_view, OBS, ACT)
    with pytest.raises(ValueError, match="no registered agent named 'vtrace'"):
        unregister_agent("vtrace")


def test_the_recipes_agent_is_an_agent(pg):
    agent = make_agent(pg_config(network_kwargs={"hidden_sizes": (16,), "lstm_size": 4}),
                       OBS, ACT)
    assert isinstance(agent, Agent) and isinstance(agent.new_buffer(), Buffer)
    for name, member in inspect.getmembers(Agent, inspect.isfunction):
        if not name.startswith("_"):
            assert inspect.signature(getattr(PGAgent, name)).parameters.keys() == \
                inspect.signature(member).parameters.keys(), name
    assert agent.unroll_overlap == 1 and agent.relu_columns == ["dead_relu_0_torso_0"]
    ids = np.arange(4)
    agent.reset_core_state(ids)
    action, output = agent.infer(ids, np.zeros(4, np.int32), EnvOutput(
        np.zeros(4, np.float32), np.ones(4, bool), np.full((4, 3), 0.5, np.float32)))
    assert list(output) == ["action"] and action.dtype == np.int32 and action.shape == (4,)
    assert [s.shape for s in agent.read_core_state(ids)] == [(4, 4), (4, 4)]
    state = agent.checkpoint_state()
    assert "network/_torso/0/w" in state and "optimizer/network/_torso/0/w/momentum" in state
    assert len(agent.parameters()) == sum(k.startswith("network/") for k in state)


def hand_made_batch(rng, n, steps, rewarded_action=0):
    """``n`` unrolls of ``steps`` steps of one observation: the rewarded action earns 1 at
    the next step, the others 0; an episode ends after step 1."""
    unrolls = []
    for _ in range(n):
        action = rng.integers(0, 3, steps).astype(np.int32)
        reward = np.zeros(steps, np.float32)
        reward[1:] = action[:-1] == rewarded_action
        done = np.zeros(steps, bool)
        done[[0, 2]] = True
        unrolls.append(Unroll(
            core_state=(), prev_action=np.concatenate([[0], action[:-1]]).astype(np.int32),
            env_output=EnvOutput(reward, done, np.full((steps, 3), 0.5, np.float32)),
            agent_output={"action": action}))
    return unrolls


def numpy_losses(agent, batch, discounting):
    """(policy loss, baseline loss) of the recipe's agent on ``batch``, in NumPy."""
    prev = np.stack([u.prev_action for u in batch], 1)
    env = EnvOutput(*(np.stack([u.env_output[i] for u in batch], 1) for i in range(3)))
    out, _ = agent.network(tf.constant(prev), EnvOutput(*map(tf.constant, env)), (),
                           unroll=True)
    logits, baseline = out["policy_logits"].numpy(), out["baseline"].numpy()
    actions = np.stack([u.agent_output["action"] for u in batch], 1)[:-1]
    steps = len(actions)
    returns = np.zeros_like(baseline[:-1])
    future = baseline[-1]
    for t in reversed(range(steps)):
        future = env.reward[t + 1] + discounting * (1.0 - env.done[t + 1]) * future
        returns[t] = future
    log_pi = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    taken = np.take_along_axis(log_pi[:-1], actions[..., None], -1)[..., 0]
    policy = -np.mean(taken * (returns - baseline[:-1]))
    return policy, 0.5 * np.mean((returns - baseline[:-1]) ** 2)


def prob_of(agent, action):
    obs = EnvOutput(tf.zeros([1]), tf.constant([False]), tf.fill([1, 3], 0.5))
    out, _ = agent.network(tf.zeros([1], tf.int32), obs, ())
    return float(tf.nn.softmax(out["policy_logits"])[0, action])


def test_a_train_step_has_the_loss_it_says_and_moves_towards_the_reward(pg):
    config = pg_config(entropy_cost=0.0, learning_rate=1e-2, discounting=0.9)
    tf.random.set_seed(0)  # the network's initial weights: the baseline starts away from fit
    agent = make_agent(config, OBS, ACT)
    batch = hand_made_batch(np.random.default_rng(0), config.batch_size,
                            config.unroll_length + 1)
    buffer = agent.new_buffer()
    want_policy, want_baseline = numpy_losses(agent, batch, config.agent_config.discounting)
    p_before = prob_of(agent, 0)
    losses = []
    for step in range(20):
        for u in batch:
            buffer.put(u)
        metrics = agent.train_step(buffer)
        if step == 0:  # the first step is diagnosed, on the variables the test started from
            assert metrics["policy_loss"] == pytest.approx(want_policy, rel=1e-4, abs=1e-6)
            assert metrics["baseline_loss"] == pytest.approx(want_baseline, rel=1e-4)
            assert 0 < metrics["update_ratio"] < 1 and "dead_relu_0_torso_0" in metrics
        assert metrics["env_steps_trained"] == config.unroll_length * config.batch_size
        losses.append(metrics["baseline_loss"])
    assert prob_of(agent, 0) > p_before + 0.2  # the rewarded action gained
    # The baseline fits the returns as far as one observation can (their variance stays).
    assert losses[-1] < losses[0]


def test_every_buffer_closes_one_way_and_training_ends_on_it(pg):
    agent = make_agent(pg_config(), OBS, ACT)
    for buffer, take in ((UnrollQueue(4), lambda b: b.get_many(2)),
                         (PrioritizedReplay(4), lambda b: b.sample_when_ready(
                             2, np.random.default_rng(0)))):
        buffer.close()
        assert buffer.closed
        with pytest.raises(QueueClosed):
            take(buffer)
        with pytest.raises(QueueClosed):
            buffer.put(hand_made_batch(np.random.default_rng(0), 1, 4)[0])
    buffer = agent.new_buffer()
    buffer.close()
    assert agent.train_step(buffer) is None
