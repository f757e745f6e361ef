"""SampleToInsertRatio by hand, and PrioritizedReplay waiting on it from two threads."""

import threading
import time

import numpy as np
import pytest

from seed.buffers.prioritized import PrioritizedReplay
from seed.buffers.rate_limiter import SampleToInsertRatio
from seed.buffers.unroll_queue import QueueClosed


def test_hand_computed_credit():
    # r = 2, min_size 3, error buffer 5: credit = 2 (inserted - 3) - sampled.
    lim = SampleToInsertRatio(2.0, 3, 5.0)
    assert [lim.can_insert(n, 0) for n in range(6)] == [True] * 5 + [False]
    # at 5 inserted, nothing sampled: credit 4, one more insert would make 6 > 5.
    assert lim.credit(5, 0) == 4
    assert lim.can_insert(5, 1)  # credit 3 + 2 = 5 <= 5
    assert not lim.can_sample(2, 0, 1)  # under min_size
    assert lim.can_sample(3, 0, 5)  # credit 0 - 5 = -5 >= -5
    assert not lim.can_sample(3, 0, 6)
    assert lim.can_sample(4, 6, 1)  # credit 2 - 6 - 1 = -5
    assert not lim.can_sample(4, 7, 1)


def test_no_ratio_never_holds_inserts_and_waits_for_min_size_only():
    lim = SampleToInsertRatio(0.0, 4, 0.0)
    assert all(lim.can_insert(n, 0) for n in range(1000))
    assert not lim.can_sample(3, 0, 8)
    assert lim.can_sample(4, 10_000, 8)


def test_settings_that_could_wait_forever_are_refused():
    with pytest.raises(ValueError, match="error_buffer"):
        SampleToInsertRatio(4.0, 1, 3.0)  # no insert could pass
    with pytest.raises(ValueError, match="samples_per_insert"):
        SampleToInsertRatio(-1.0, 1, 3.0)
    with pytest.raises(ValueError, match="min_size"):
        SampleToInsertRatio(1.0, 0, 3.0)
    with pytest.raises(ValueError, match="wait forever"):
        # 2 * 4 < 2 + 8: at credit 3, inserts wait (3 + 2 > 4) and samples too (3 - 8 < -4)
        SampleToInsertRatio(2.0, 1, 4.0).can_sample(10, 0, 8)


def test_producer_and_consumer_threads_end_near_the_ratio():
    # The consumer samples as fast as it can, the producer inserts as fast as it can:
    # the limiter alone sets the pace, and the ratio holds within the error buffer.
    ratio, min_size, error_buffer, batch = 3.0, 10, 12.0, 4
    replay = PrioritizedReplay(64, limiter=SampleToInsertRatio(ratio, min_size, error_buffer))
    worst = [0.0]
    stop = threading.Event()

    def producer():
        try:
            k = 0
            while not stop.is_set():
                if replay.put(k, timeout=0.05):
                    k += 1
        except QueueClosed:
            pass

    def consumer():
        rng = np.random.default_rng(0)
        while replay.num_sampled < 3000:
            if replay.sample_when_ready(batch, rng, timeout=1.0) is None:
                raise AssertionError("sampling stalled")
            credit = replay.limiter.credit(replay.num_inserted, replay.num_sampled)
            worst[0] = max(worst[0], abs(credit))

    threads = [threading.Thread(target=producer), threading.Thread(target=consumer)]
    for t in threads:
        t.start()
    threads[1].join(60)
    stop.set()
    replay.close()
    threads[0].join(10)
    assert not any(t.is_alive() for t in threads)
    assert worst[0] <= error_buffer + ratio
    inserted_after_min = replay.num_inserted - min_size
    tolerance = (error_buffer + ratio) / inserted_after_min
    assert replay.num_sampled / inserted_after_min == pytest.approx(ratio, abs=tolerance)


def test_a_held_put_times_out_then_a_sample_lets_it_go():
    # r = 1, min_size 1, error buffer 1: "a" fills min_size, "b" takes credit 0 -> 1, and
    # "c" would take it to 2 > 1 until one item is sampled.
    replay = PrioritizedReplay(8, limiter=SampleToInsertRatio(1.0, 1, 1.0))
    assert replay.put("a", timeout=0) and replay.put("b", timeout=0)
    assert not replay.put("c", timeout=0.05) and replay.num_inserted == 2
    waiting = threading.Thread(target=lambda: replay.put("c"))  # no timeout: waits
    waiting.start()
    time.sleep(0.1)
    assert waiting.is_alive()
    replay.sample_when_ready(1, np.random.default_rng(0), timeout=1.0)
    waiting.join(5)
    assert not waiting.is_alive() and replay.num_inserted == 3


def test_close_wakes_a_waiting_put_and_a_waiting_sample():
    replay = PrioritizedReplay(8, limiter=SampleToInsertRatio(1.0, 2, 1.0))
    outcome = {}

    def sample():
        try:
            replay.sample_when_ready(1, np.random.default_rng(0))
        except QueueClosed:
            outcome["sample"] = "closed"

    waiting = threading.Thread(target=sample)
    waiting.start()
    time.sleep(0.1)
    assert waiting.is_alive()  # nothing inserted: waits
    replay.close()
    waiting.join(5)
    assert outcome == {"sample": "closed"}
    with pytest.raises(QueueClosed):
        replay.put("x", timeout=None)
