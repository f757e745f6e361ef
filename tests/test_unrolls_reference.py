"""The buffered UnrollBuilder gives exactly the unrolls the per-row builder gave (dtypes too)
on recorded batches: uneven env subsets in shuffled row order, evaluation envs skipped,
resets mid-unroll, V-trace's overlap and R2D2's."""

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

