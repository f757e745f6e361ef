import numpy as np
import pytest

from seed.runtime.actor_envs import ActorEnvs


def test_stepping_a_subset_leaves_the_other_envs_alone():
    envs = ActorEnvs("toy:catch", {}, env_ids=[10, 11, 12, 13], seed=3)
    reference = ActorEnvs("toy:catch", {}, env_ids=[10, 11, 12, 13], seed=3)
    _, _, obs = envs.reset_all()
    _, _, ref_obs = reference.reset_all()
    np.testing.assert_array_equal(obs, ref_obs)
    # Step envs 1 and 3 five times, then 0 and 2 five times: each env sees the same
    # actions as in the all-at-once reference, so the observations must agree.
    actions = np.array([0, 1, 2, 1])
    for _ in range(5):
        r_odd, d_odd, o_odd, _ = envs.step(actions[[1, 3]], [1, 3])
    for _ in range(5):
        r_even, d_even, o_even, _ = envs.step(actions[[0, 2]], [0, 2])
    for _ in range(5):
        r_all, d_all, o_all, _ = reference.step(actions)
    np.testing.assert_array_equal(o_odd, o_all[[1, 3]])
    np.testing.assert_array_equal(o_even, o_all[[0, 2]])
    np.testing.assert_array_equal(np.concatenate([r_even, r_odd]), r_all[[0, 2, 1, 3]])


def test_episode_ends_name_the_env_of_the_subset():
    envs = ActorEnvs("toy:catch", {}, env_ids=[4, 5], seed=0)
    envs.reset_all()
    finished = []
    for _ in range(100):
        _, done, _, eps = envs.step([1], [1])
        finished += eps
        if done[0]:
            break
    assert finished and {e[0] for e in finished} == {5}


def test_actions_must_match_the_envs_stepped():
    envs = ActorEnvs("toy:catch", {}, env_ids=[0, 1], seed=0)
    envs.reset_all()
    with pytest.raises(ValueError, match="2 actions for 1 envs"):
        envs.step([0, 1], [0])
