"""SumTree and PrioritizedReplay: sampling proportions, weights, overwriting, closing."""

import threading

import numpy as np
import pytest

from seed.buffers.prioritized import PrioritizedReplay, SumTree
from seed.buffers.unroll_queue import QueueClosed
from seed.types import EnvOutput, Unroll


def make_unroll(tag: int, length: int = 3) -> Unroll:
    return Unroll(
        core_state=(np.full(2, tag, np.float32),),
        prev_action=np.full(length, tag, np.int32),
        env_output=EnvOutput(np.zeros(length, np.float32), np.zeros(length, bool),
                             np.full((length, 1), tag, np.float32)),
        agent_output={"action": np.full(length, tag, np.int32)},
    )


def tag_of(unroll: Unroll) -> int:
    return int(unroll.prev_action[0])


def test_sum_tree_total_and_find_by_prefix_sum():
    values = [1.0, 0.0, 2.0, 3.0, 0.5]
    tree = SumTree(len(values))
    for i, v in enumerate(values):
        tree.update(i, v)
    assert tree.total() == pytest.approx(6.5)
    cumulative = np.cumsum(values)
    queries = np.linspace(0, 6.5, 200, endpoint=False)
    expected = np.searchsorted(cumulative, queries, side="right")
    np.testing.assert_array_equal(tree.find(queries), expected)
    # Updating one leaf moves the total and the boundaries.
    tree.update(3, 0.0)
    assert tree.total() == pytest.approx(3.5)
    assert 3 not in set(tree.find(np.linspace(0, 3.5, 100, endpoint=False)).tolist())


def test_sum_tree_never_returns_an_empty_leaf_at_the_top_edge():
    tree = SumTree(6)
    tree.update(2, 1.0)
    assert tree.find([0.0, 0.5, 1.0, 1.0 + 1e-9]).tolist() == [2, 2, 2, 2]


def test_sum_tree_rejects_bad_values():
    tree = SumTree(3)
    with pytest.raises(ValueError):
        tree.update(0, -1.0)
    with pytest.raises(ValueError):
        tree.update(0, float("nan"))
    with pytest.raises(IndexError):
        tree.update(3, 1.0)


def test_sampling_proportions_follow_priority_power_and_track_updates():
    alpha = 0.7
    replay = PrioritizedReplay(8, priority_exponent=alpha, importance_sampling_exponent=0.5)
    for k in range(4):
        replay.put(make_unroll(k))
    # Serials are 0..3 for the first four puts.
    priorities = np.array([1.0, 2.0, 4.0, 8.0])
    replay.update_priorities(np.arange(4), priorities)
    rng = np.random.default_rng(0)
    n = 40_000
    _, items, _ = replay.sample(n, rng)
    freq = np.bincount([tag_of(u) for u in items], minlength=4) / n
    expected = priorities ** alpha / np.sum(priorities ** alpha)
    np.testing.assert_allclose(freq, expected, atol=0.01)

    # New priorities change the proportions.
    replay.update_priorities([0, 3], [8.0, 1.0])
    priorities = np.array([8.0, 2.0, 4.0, 1.0])
    _, items, _ = replay.sample(n, rng)
    freq = np.bincount([tag_of(u) for u in items], minlength=4) / n
    expected = priorities ** alpha / np.sum(priorities ** alpha)
    np.testing.assert_allclose(freq, expected, atol=0.01)


def test_importance_weights_match_the_formula():
    alpha, beta = 0.9, 0.6
    replay = PrioritizedReplay(10, alpha, beta)
    for k in range(5):
        replay.put(make_unroll(k))
    p = np.array([0.5, 1.0, 3.0, 0.1, 2.0])
    replay.update_priorities(np.arange(5), p)
    indices, items, weights = replay.sample(64, np.random.default_rng(1))
    assert weights.dtype == np.float32 and weights.shape == (64,)
    probs = p ** alpha / np.sum(p ** alpha)
    sampled = np.array([tag_of(u) for u in items])
    np.testing.assert_array_equal(sampled, indices)  # serial k holds tag k here
    raw = (5 * probs[sampled]) ** (-beta)
    np.testing.assert_allclose(weights, raw / raw.max(), rtol=1e-5)
    assert weights.max() == pytest.approx(1.0)


def test_new_items_get_the_largest_priority_seen():
    replay = PrioritizedReplay(4, priority_exponent=1.0, importance_sampling_exponent=0.0)
    replay.put(make_unroll(0))
    replay.update_priorities([0], [10.0])
    replay.put(make_unroll(1))  # gets 10 too
    replay.update_priorities([0], [0.0])
    _, items, _ = replay.sample(200, np.random.default_rng(2))
    assert {tag_of(u) for u in items} == {1}


def test_full_buffer_replaces_the_oldest_and_ignores_stale_updates():
    replay = PrioritizedReplay(3, 1.0, 0.0)
    for k in range(3):
        assert replay.put(make_unroll(k)) is True
    assert len(replay) == 3
    indices, _, _ = replay.sample(50, np.random.default_rng(3))
    assert replay.put(make_unroll(3)) is True  # replaces tag 0 (the oldest), never blocks
    assert len(replay) == 3 and replay.capacity == 3
    _, items, _ = replay.sample(500, np.random.default_rng(4))
    assert {tag_of(u) for u in items} == {1, 2, 3}
    # An update for serial 0 (replaced) must not touch the item now in its slot.
    replay.update_priorities([0, 1, 2], [0.0, 0.0, 0.0])
    indices, items, _ = replay.sample(100, np.random.default_rng(5))
    assert {tag_of(u) for u in items} == {3}
    assert set(indices.tolist()) == {3}


def test_all_zero_priorities_fall_back_to_uniform():
    replay = PrioritizedReplay(4, 0.9, 0.6)
    for k in range(2):
        replay.put(make_unroll(k))
    replay.update_priorities([0, 1], [0.0, 0.0])
    _, items, weights = replay.sample(100, np.random.default_rng(6))
    assert {tag_of(u) for u in items} == {0, 1}
    np.testing.assert_array_equal(weights, 1.0)


def test_errors_and_close():
    replay = PrioritizedReplay(2)
    with pytest.raises(ValueError):
        replay.sample(1, np.random.default_rng(0))
    with pytest.raises(ValueError):
        replay.update_priorities([0], [-1.0])
    assert not replay.closed
    replay.close()
    assert replay.closed
    with pytest.raises(QueueClosed):
        replay.put(make_unroll(0))


def test_concurrent_puts_and_samples_stay_consistent():
    replay = PrioritizedReplay(16, 0.9, 0.6)
    replay.put(make_unroll(0))
    errors = []

    def writer(offset):
        try:
            for k in range(300):
                replay.put(make_unroll(offset + k))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    def sampler():
        rng = np.random.default_rng(7)
        try:
            for _ in range(300):
                idx, items, w = replay.sample(4, rng)
                replay.update_priorities(idx, rng.uniform(0.1, 2.0, size=4))
                assert all(u is not None for u in items) and np.all(w > 0)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(1000 * i,)) for i in range(2)]
    threads.append(threading.Thread(target=sampler))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(replay) == 16 and replay.num_inserted == 601
    # The tree total equals the sum of the leaf values after all the concurrent updates.
    leaves = replay._tree.get(np.arange(16))
    assert replay._tree.total() == pytest.approx(leaves.sum())
