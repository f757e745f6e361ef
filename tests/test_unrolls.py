import numpy as np
import pytest

from seed.types import ArraySpec, EnvOutput
from seed.unroll_spec import UnrollSpec
from seed.unrolls import UnrollBuilder


def spec(unroll_length):
    """Unrolls of ``unroll_length + 1`` steps as :func:`step_values` and :func:`batch_step`
    give them: a two-number observation, a baseline, a one-number core state."""
    return UnrollSpec(steps=unroll_length + 1, observation=ArraySpec("int32", (2,)),
                      core_state=(ArraySpec("float32", (1,)),),
                      agent_output={"action": ArraySpec("int32", ()),
                                    "baseline": ArraySpec("float32", ())})


def builder(num_envs, unroll_length, overlap=1):
    return UnrollBuilder(spec(unroll_length), num_envs, overlap)


def step_values(t):
    return dict(prev_action=t, reward=float(t), done=t == 0, observation=np.full(2, t, np.int32),
                agent_output={"action": np.int32(t + 1), "baseline": np.float32(-t)})


def test_unrolls_have_t_plus_one_steps_and_overlap_by_one():
    b = builder(num_envs=2, unroll_length=3)
    out = []
    for t in range(10):
        u = b.append(0, (np.array([100.0 + t]),), **step_values(t))
        if u is not None:
            out.append(u)
    assert len(out) == 3  # steps 0-3, 3-6, 6-9
    for i, u in enumerate(out):
        steps = list(range(3 * i, 3 * i + 4))
        np.testing.assert_array_equal(u.prev_action, steps)
        np.testing.assert_array_equal(u.env_output.reward, steps)
        np.testing.assert_array_equal(u.env_output.observation[:, 0], steps)
        np.testing.assert_array_equal(u.agent_output["action"], np.array(steps) + 1)
        # the stored core state is the one before the unroll's first step
        np.testing.assert_array_equal(u.core_state[0], [100.0 + 3 * i])
    assert out[0].env_output.done.tolist() == [True, False, False, False]
    assert b.pending(1) == 0


def test_reset_drops_the_half_built_unroll_so_runs_never_mix():
    b = builder(num_envs=1, unroll_length=3)
    for t in range(2):  # run A: two steps, then the actor reconnects
        assert b.append(0, (np.zeros(1),), **step_values(t)) is None
    b.reset(0)
    got = []
    for t in range(50, 54):  # run B
        u = b.append(0, (np.full(1, float(t)),), **step_values(t))
        if u is not None:
            got.append(u)
    assert len(got) == 1
    np.testing.assert_array_equal(got[0].prev_action, [50, 51, 52, 53])
    np.testing.assert_array_equal(got[0].core_state[0], [50.0])


def test_r2d2_overlap_gives_every_transition_a_loss_exactly_once():
    """Sequences of T + 1 = 9 steps, burn-in 2: overlap 3, so each unroll starts 6 steps on.

    R2D2 learns on the transitions t -> t + 1 for t in [burn_in, T) of each unroll; over the
    stream of steps those must tile every transition once (upstream SEED overlaps by burn-in).
    """
    T, burn_in = 8, 2
    b = builder(num_envs=1, unroll_length=T, overlap=burn_in + 1)
    unrolls = [u for t in range(40)
               if (u := b.append(0, (np.array([100.0 + t]),), **step_values(t))) is not None]
    assert [int(u.prev_action[0]) for u in unrolls] == [0, 6, 12, 18, 24, 30]
    for u in unrolls:  # the core state is the one before each unroll's first step
        assert u.core_state[0][0] == 100.0 + u.prev_action[0]
    learned = [int(u.prev_action[t]) for u in unrolls for t in range(burn_in, T)]
    assert learned == list(range(burn_in, burn_in + len(learned)))  # no gap, no repeat


@pytest.mark.parametrize("overlap", [0, 4])
def test_an_overlap_that_leaves_no_new_step_is_refused(overlap):
    with pytest.raises(ValueError, match="unroll overlap"):
        builder(num_envs=1, unroll_length=3, overlap=overlap)


def batch_step(b, t, rows, skip=None):
    """Step ``t`` of every env in ``rows``: env ``e``'s values are ``100 * e + t``; the core
    state only of the rows the builder asks it for."""
    v = np.asarray(rows) * 100 + t
    wanted = b.rows_wanting_state(rows, skip)
    return dict(core_state=(v.astype(np.float32)[wanted, None],), prev_action=v.astype(np.int32),
                env_output=EnvOutput(reward=v.astype(np.float32), done=v % 100 == 0,
                                     observation=np.repeat(v[:, None], 2, axis=1).astype(np.int32)),
                agent_output={"baseline": -v.astype(np.float32)}, action=(v + 1).astype(np.int32),
                skip=skip)


def test_the_core_state_is_asked_for_only_where_an_unroll_can_start():
    T = 4
    for overlap, starts in ((1, [0, 4, 8, 12]), (3, [0, 2, 4, 6, 8, 10, 12])):
        b = builder(num_envs=1, unroll_length=T, overlap=overlap)
        asked = []
        for t in range(13):
            if b.wants_state(0):
                asked.append(t)
            b.append(0, (np.full(1, t, np.float32),) if b.wants_state(0) else None,
                     **step_values(t))
        assert asked == starts


def test_a_step_that_can_start_an_unroll_needs_its_core_state():
    b = builder(num_envs=1, unroll_length=2)
    with pytest.raises(ValueError, match="without its core state"):
        b.append(0, None, **step_values(0))
    step = batch_step(b, 0, [0])
    step["core_state"] = (np.zeros((0, 1), np.float32),)
    with pytest.raises(ValueError, match="1 rows of this batch needed their core state"):
        b.append_batch([0], **step)


def test_a_batch_append_builds_each_rows_env_and_fills_in_the_action():
    b = builder(num_envs=4, unroll_length=2)
    rows = [3, 0, 2]  # a batch's rows need not be in env order
    completed = []
    for t in range(5):
        completed += b.append_batch(rows, **batch_step(b, t, rows))
    assert [env for env, _ in completed] == [3, 0, 2, 3, 0, 2]  # steps 0-2, then 2-4
    for n, (env, u) in enumerate(completed):
        steps = 100 * env + np.arange(3) + 2 * (n // 3)
        np.testing.assert_array_equal(u.prev_action, steps)
        np.testing.assert_array_equal(u.env_output.reward, steps)
        np.testing.assert_array_equal(u.env_output.observation[:, 1], steps)
        np.testing.assert_array_equal(u.agent_output["baseline"], -steps)
        np.testing.assert_array_equal(u.agent_output["action"], steps + 1)  # from ``action``
        np.testing.assert_array_equal(u.core_state[0], [steps[0]])
    assert b.pending(1) == 0


def test_a_batch_append_keeps_an_action_the_agent_output_already_has():
    b = builder(num_envs=1, unroll_length=1)
    completed = []
    for t in range(2):
        step = batch_step(b, t, [0])
        step["agent_output"]["action"] = np.array([7 + t], np.int32)
        completed += b.append_batch([0], **step)
    [(_, u)] = completed
    np.testing.assert_array_equal(u.agent_output["action"], [7, 8])


def test_a_batch_append_skips_evaluation_envs():
    b = builder(num_envs=4, unroll_length=1)
    rows = [0, 1, 2, 3]
    completed = []
    for t in range(3):
        completed += b.append_batch(rows, **batch_step(b, t, rows, skip=lambda env: env >= 2))
    assert [env for env, _ in completed] == [0, 1, 0, 1]
    assert b.pending(2) == b.pending(3) == 0  # never a step of theirs


def test_a_batch_append_overlaps_unrolls_by_the_burn_in():
    T, burn_in = 4, 1
    b = builder(num_envs=2, unroll_length=T, overlap=burn_in + 1)
    rows = [1, 0]
    completed = []
    for t in range(12):
        completed += b.append_batch(rows, **batch_step(b, t, rows))
    for env in rows:  # each unroll starts T + 1 - overlap = 3 steps after the previous one
        starts = [int(u.prev_action[0]) - 100 * env for e, u in completed if e == env]
        assert starts == [0, 3, 6]
        assert all(u.core_state[0][0] == u.prev_action[0] for e, u in completed if e == env)


def test_the_buffers_are_the_specs_from_the_start():
    """Allocated from the spec, not shaped from the first batch: a batch's Python numbers and
    wider dtypes of the same kind are kept as the spec's dtypes."""
    b = builder(num_envs=2, unroll_length=1)
    assert {name: (a.dtype.name, a.shape) for name, a in b._steps.items()} == {
        "prev_action": ("int32", (2, 2)), "reward": ("float32", (2, 2)),
        "done": ("bool", (2, 2)), "observation": ("int32", (2, 2, 2)),
        "agent_output[action]": ("int32", (2, 2)), "agent_output[baseline]": ("float32", (2, 2))}
    assert [(a.dtype.name, a.shape) for a in b._states] == [("float32", (2, 2, 1))]
    for t in range(2):
        values = step_values(t)
        values["observation"] = values["observation"].astype(np.int64)
        values["agent_output"]["baseline"] = np.float64(-t)
        u = b.append(1, (np.array([float(t)]),) if b.wants_state(1) else None, **values)
    assert [a.dtype.name for a in (u.prev_action, *u.env_output, *u.agent_output.values(),
                                   *u.core_state)] == [
        "int32", "float32", "bool", "int32", "int32", "float32", "float32"]


def _changed(step, **changes):
    step = dict(step, env_output=step["env_output"]._replace(
        **{k: v for k, v in changes.items() if k in EnvOutput._fields}))
    step["agent_output"] = {**step["agent_output"], **changes.get("agent_output", {})}
    for key in changes.get("drop", ()):
        step["agent_output"].pop(key)
    step.update({k: v for k, v in changes.items() if k in ("prev_action", "core_state")})
    return step


@pytest.mark.parametrize("changes,message", [
    ({"observation": np.zeros((2, 3), np.int32)},
     r"^observation: expected 2 rows of int32 \(2,\), got int32 \(2, 3\)$"),
    ({"observation": np.zeros((1, 2), np.int32)}, r"^observation: expected 2 rows"),
    ({"reward": np.zeros(2, np.int32)}, r"^reward: expected 2 rows of float32 \(\), got int32"),
    ({"done": np.zeros(2, np.float32)}, r"^done: expected 2 rows of bool \(\), got float32"),
    ({"prev_action": np.zeros(2, np.float32)}, r"^prev_action: expected 2 rows of int32"),
    ({"agent_output": {"baseline": np.zeros((2, 1), np.float32)}},
     r"^agent_output\[baseline\]: expected 2 rows of float32 \(\), got float32 \(2, 1\)$"),
    ({"drop": ["baseline"]}, r"^agent_output: expected \['action', 'baseline'\]; "
                             r"missing \['baseline'\]$"),
    ({"agent_output": {"q_values": np.zeros((2, 3), np.float32)}},
     r"^agent_output: expected .*; unexpected \['q_values'\]$"),
    ({"core_state": (np.zeros((2, 2), np.float32),)},
     r"^core_state\[0\]: expected 2 rows of float32 \(1,\), got float32 \(2, 2\)$"),
    ({"core_state": (np.zeros((2, 1), np.float32),) * 2},
     r"^core_state: expected 1 leaves, got 2$"),
    ({"core_state": ()}, r"^core_state: expected 1 leaves, got 0$"),
])
def test_a_batch_that_does_not_fit_the_spec_is_refused_and_nothing_kept(changes, message):
    b = builder(num_envs=2, unroll_length=1)
    rows = [0, 1]
    with pytest.raises(ValueError, match=message):
        b.append_batch(rows, **_changed(batch_step(b, 0, rows), **changes))
    assert b.pending(0) == b.pending(1) == 0
    completed = []
    for t in range(2):  # the builder goes on as if the refused batch never came
        completed += b.append_batch(rows, **batch_step(b, t, rows))
    assert [int(u.prev_action[0]) for _, u in completed] == [0, 100]
