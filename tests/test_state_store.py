import numpy as np

from seed.inference.state_store import RecurrentStateStore


def initial_state(batch):
    return (np.zeros((batch, 3), np.float32), np.full((batch,), -1, np.int32))


def test_state_is_kept_per_env_across_steps():
    store = RecurrentStateStore(4, initial_state)
    ids = np.array([1, 3])
    assert store.begin(ids, "run-a").tolist() == [1, 3]
    (h, c), prev = store.gather(ids)
    np.testing.assert_array_equal(h, 0)
    np.testing.assert_array_equal(c, -1)
    store.scatter(ids, (np.ones((2, 3), np.float32) * [[1], [3]], np.array([10, 30])),
                  np.array([2, 1], np.int32))
    assert store.begin(ids, "run-a").tolist() == []  # same run: nothing reset
    (h, c), prev = store.gather(np.array([3, 1, 0]))
    np.testing.assert_array_equal(h[:, 0], [3, 1, 0])
    np.testing.assert_array_equal(c, [30, 10, -1])
    np.testing.assert_array_equal(prev, [1, 2, 0])


def test_a_new_run_id_resets_only_that_actors_envs():
    store = RecurrentStateStore(4, initial_state)
    store.begin(np.array([0, 1]), "actor0-run1")
    store.begin(np.array([2, 3]), "actor1-run1")
    all_ids = np.arange(4)
    store.scatter(all_ids, (np.full((4, 3), 5.0, np.float32), np.full(4, 7, np.int32)),
                  np.full(4, 2, np.int32))
    assert store.begin(np.array([0, 1]), "actor0-run2").tolist() == [0, 1]
    (h, c), prev = store.gather(all_ids)
    np.testing.assert_array_equal(h[:, 0], [0, 0, 5, 5])
    np.testing.assert_array_equal(c, [-1, -1, 7, 7])
    np.testing.assert_array_equal(prev, [0, 0, 2, 2])
