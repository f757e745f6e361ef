import numpy as np
import pytest

from seed.unrolls import UnrollBuilder


def step_values(t):
    return dict(prev_action=t, reward=float(t), done=t == 0, observation=np.full(2, t, np.uint8),
                agent_output={"action": np.int32(t + 1), "baseline": np.float32(-t)})


def test_unrolls_have_t_plus_one_steps_and_overlap_by_one():
    b = UnrollBuilder(num_envs=2, unroll_length=3)
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
    b = UnrollBuilder(num_envs=1, unroll_length=3)
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
    b = UnrollBuilder(num_envs=1, unroll_length=T, overlap=burn_in + 1)
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
        UnrollBuilder(num_envs=1, unroll_length=3, overlap=overlap)
