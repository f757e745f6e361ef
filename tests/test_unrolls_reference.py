"""The buffered UnrollBuilder gives exactly the unrolls the per-row builder gave (dtypes too)
on recorded batches: uneven env subsets in shuffled row order, evaluation envs skipped,
resets mid-unroll, V-trace's overlap and R2D2's; random ones, and a real V-trace and R2D2
agent's (LSTM state) on Catch, built by the spec of the agent and the env."""

import numpy as np
import pytest

from seed.types import ArraySpec, EnvOutput
from seed.unroll_spec import UnrollSpec
from seed.unrolls import UnrollBuilder
from tests.support.unroll_reference import RowUnrollBuilder


def recorded_spec(unroll_length):
    """The spec of the unrolls of :func:`recorded_batches`."""
    return UnrollSpec(steps=unroll_length + 1, observation=ArraySpec("uint8", (4, 4, 1)),
                      core_state=(ArraySpec("float32", (3,)), ArraySpec("uint8", (2, 2))),
                      agent_output={"policy_logits": ArraySpec("float32", (6,)),
                                    "baseline": ArraySpec("float32", ()),
                                    "action": ArraySpec("int32", ())})


def recorded_batches(rng, num_envs, steps):
    """Batches as a learner sees them: a random subset of envs, in random order, each row
    with uint8 frames, an LSTM-like (float32) and a frame-stack-like (uint8) state."""
    for t in range(steps):
        rows = rng.permutation(num_envs)[:rng.integers(1, num_envs + 1)]
        k = len(rows)
        yield t, rows, dict(
            core_state=(rng.standard_normal((k, 3)).astype(np.float32),
                        rng.integers(0, 255, (k, 2, 2), np.uint8)),
            prev_action=rng.integers(0, 6, k).astype(np.int32),
            env_output=EnvOutput(reward=rng.standard_normal(k).astype(np.float32),
                                 done=rng.random(k) < 0.1,
                                 observation=rng.integers(0, 255, (k, 4, 4, 1), np.uint8)),
            agent_output={"policy_logits": rng.standard_normal((k, 6)).astype(np.float32),
                          "baseline": rng.standard_normal(k).astype(np.float32)},
            action=rng.integers(0, 6, k).astype(np.int32))


def assert_same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


def assert_same_unroll(got, want):
    """Array for array, dtypes and shapes too."""
    assert len(got.core_state) == len(want.core_state)
    for g, w in zip(got.core_state, want.core_state):
        assert_same(g, w)
    assert_same(got.prev_action, want.prev_action)
    for g, w in zip(got.env_output, want.env_output):
        assert_same(g, w)
    assert got.agent_output.keys() == want.agent_output.keys()
    for key in want.agent_output:
        assert_same(got.agent_output[key], want.agent_output[key])


@pytest.mark.parametrize("unroll_length,overlap", [(5, 1), (8, 3), (1, 1), (4, 4)])
def test_buffered_unrolls_equal_the_per_row_builders(unroll_length, overlap):
    rng = np.random.default_rng(unroll_length * 10 + overlap)
    num_envs = 6
    buffered = UnrollBuilder(recorded_spec(unroll_length), num_envs, overlap)
    reference = RowUnrollBuilder(num_envs, unroll_length, overlap)
    skip = lambda env: env == 5  # noqa: E731  (an evaluation env)
    count = 0
    for t, rows, step in recorded_batches(rng, num_envs, 200):
        if t % 37 == 36:  # an actor reconnects: its envs drop their half-built unrolls
            for env in rows[:2].tolist():
                buffered.reset(env)
                reference.reset(env)
        wanted = buffered.rows_wanting_state(rows, skip)
        assert wanted.tolist() == reference.rows_wanting_state(rows, skip).tolist()
        step["core_state"] = tuple(leaf[wanted] for leaf in step["core_state"])
        got = buffered.append_batch(rows, **step, skip=skip)
        want = reference.append_batch(rows, **step, skip=skip)
        assert [env for env, _ in got] == [env for env, _ in want]
        for (_, g), (_, w) in zip(got, want):
            assert_same_unroll(g, w)
        count += len(got)
        assert [buffered.pending(e) for e in range(num_envs)] == \
            [reference.pending(e) for e in range(num_envs)]
    assert count > 20


def test_the_envs_of_a_batch_must_be_distinct():
    b = UnrollBuilder(recorded_spec(2), num_envs=2)
    two = np.zeros(2, np.float32)
    with pytest.raises(ValueError, match="distinct"):
        b.append_batch([1, 1], (np.zeros((2, 3), np.float32), np.zeros((2, 2, 2), np.uint8)),
                       two.astype(np.int32),
                       EnvOutput(two, two.astype(bool), np.zeros((2, 4, 4, 1), np.uint8)),
                       {"baseline": two, "policy_logits": np.zeros((2, 6), np.float32)},
                       two.astype(np.int32))


# -- a real agent's batches ----------------------------------------------------------------

def record(agent, envs, rng, steps):
    """Batches as the SEED learner makes them of ``agent`` acting on ``envs``: each step a
    random subset of the envs, in random order, inferred together; every 11th step an
    actor reconnects (two envs' core states and half-built unrolls reset). The per-row
    builder decides which rows' core states are read. Returns ``(resets, rows, wanted,
    batch, unrolls)`` a step: the rows whose core state was read, the step's arguments to
    ``append_batch`` and the reference's unrolls."""
    n = len(envs)
    reference = RowUnrollBuilder(n, agent.unroll_length, agent.unroll_overlap)
    agent.reset_core_state(np.arange(n))
    reward, done, obs = envs.reset_all()
    prev_action = np.zeros(n, np.int32)
    recorded = []
    for t in range(steps):
        resets = rng.permutation(n)[:2].tolist() if t % 11 == 10 else []
        if resets:
            agent.reset_core_state(np.asarray(resets))
            prev_action[resets] = 0
            for env in resets:
                reference.reset(env)
        rows = rng.permutation(n)[:rng.integers(1, n + 1)]
        wanted = reference.rows_wanting_state(rows, agent.is_eval_env)
        first_state = agent.read_core_state(rows[wanted]) if wanted.any() else ()
        env_output = EnvOutput(reward[rows], done[rows], obs[rows])
        action, agent_output = agent.infer(rows, prev_action[rows], env_output)
        batch = dict(core_state=first_state, prev_action=prev_action[rows],
                     env_output=env_output, agent_output=agent_output, action=action,
                     skip=agent.is_eval_env)
        recorded.append((resets, rows, wanted, batch, reference.append_batch(rows, **batch)))
        prev_action[rows] = action
        reward[rows], done[rows], obs[rows], _ = envs.step(action, rows)
    return recorded


@pytest.mark.parametrize("settings", [
    dict(agent="vtrace", unroll_length=5),  # overlap 1
    dict(agent="r2d2", unroll_length=6, burn_in=2, eval_envs=2, replay_min_size=4,
         replay_capacity=100),  # overlap 3, two evaluation envs skipped
])
def test_a_real_agents_unrolls_equal_the_per_row_builders(settings):
    from seed.agents import make_agent
    from seed.config import make_config
    from seed.runtime.actor_envs import ActorEnvs
    from seed.transport.unroll_codec import UnrollCodec
    config = make_config(env="toy:catch", network="mlp", actors=2, envs_per_actor=3,
                         network_kwargs={"hidden_sizes": (16,), "lstm_size": 4}, seed=5,
                         **settings)
    envs = ActorEnvs(config.env, {}, list(range(config.num_envs)), seed=5)
    space = envs.envs[0].observation_space
    agent = make_agent(config, space, envs.envs[0].action_space)
    recorded = record(agent, envs, np.random.default_rng(5), steps=80)
    spec = UnrollSpec.of(agent, space)
    codec = UnrollCodec(spec)
    buffered = UnrollBuilder(spec, config.num_envs, agent.unroll_overlap)
    count = 0
    for resets, rows, wanted, batch, want in recorded:
        for env in resets:
            buffered.reset(env)
        assert buffered.rows_wanting_state(rows, agent.is_eval_env).tolist() == wanted.tolist()
        got = buffered.append_batch(rows, **batch)
        assert [env for env, _ in got] == [env for env, _ in want]
        for (_, g), (_, w) in zip(got, want):
            assert_same_unroll(g, w)
            assert_same_unroll(codec.decode(codec.encode(
                g, actor_id=0, run_id="r", env_id=0, parameter_version=0)), w)
        count += len(got)
    evaluation = [e for e in range(config.num_envs) if agent.is_eval_env(e)]
    assert len(evaluation) == settings.get("eval_envs", 0)
    assert all(buffered.pending(e) == 0 for e in evaluation)
    assert count >= 20 and len(spec.core_state) == 2  # the LSTM's
