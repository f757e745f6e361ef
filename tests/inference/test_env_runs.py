import numpy as np

from seed.inference.env_runs import EnvRuns


def test_a_run_claims_its_envs_once():
    runs = EnvRuns(4)
    ids = np.array([1, 3])
    assert runs.begin(ids, "run-a").tolist() == [1, 3]
    runs.prev_action[ids] = [2, 1]
    assert runs.begin(ids, "run-a").tolist() == []  # same run: nothing starts over
    np.testing.assert_array_equal(runs.prev_action, [0, 2, 0, 1])


def test_a_new_run_id_starts_only_that_actors_envs_over():
    runs = EnvRuns(4)
    runs.begin(np.array([0, 1]), "actor0-run1")
    runs.begin(np.array([2, 3]), "actor1-run1")
    runs.prev_action[:] = 2
    assert runs.begin(np.array([0, 1]), "actor0-run2").tolist() == [0, 1]
    np.testing.assert_array_equal(runs.prev_action, [0, 0, 2, 2])
