import threading
import time

import pytest

from seed.inference.batcher import BatcherClosed, InferenceBatcher


class Recorder:
    """A handler that answers each request ``r`` with ``("result", r)``."""

    def __init__(self, delay=0.0):
        self.batches = []
        self.delay = delay
        self.lock = threading.Lock()

    def __call__(self, batch):
        with self.lock:
            self.batches.append(list(batch.requests))
        time.sleep(self.delay)
        batch.reply([("result", r) for r in batch.requests])


def echo(batch):
    batch.reply(batch.requests)


def test_full_batch_goes_without_waiting_for_the_timeout():
    rec = Recorder()
    b = InferenceBatcher(rec, max_batch_size=4, timeout_s=30.0)
    try:
        futs = [b.submit(i, rows=2) for i in range(2)]
        t0 = time.monotonic()
        assert [f.result(timeout=5) for f in futs] == [("result", 0), ("result", 1)]
        assert time.monotonic() - t0 < 5  # far below the 30 s timeout
        assert rec.batches == [[0, 1]]
    finally:
        b.close()


def test_partial_batch_goes_after_the_timeout():
    rec = Recorder()
    b = InferenceBatcher(rec, max_batch_size=64, timeout_s=0.05)
    try:
        t0 = time.monotonic()
        assert b(7, rows=3) == ("result", 7)
        assert time.monotonic() - t0 >= 0.04
        assert rec.batches == [[7]]
    finally:
        b.close()


def test_requests_are_never_split_and_batches_respect_the_maximum():
    rec = Recorder(delay=0.05)  # requests pile up while a batch runs
    b = InferenceBatcher(rec, max_batch_size=5, timeout_s=0.01)
    try:
        futs = [b.submit(i, rows=2) for i in range(7)]
        assert [f.result(timeout=5)[1] for f in futs] == list(range(7))
        assert all(2 * len(batch) <= 5 for batch in rec.batches)
        assert sorted(r for batch in rec.batches for r in batch) == list(range(7))
    finally:
        b.close()


def test_many_concurrent_streams_each_get_their_own_results():
    rec = Recorder()
    b = InferenceBatcher(rec, max_batch_size=8, timeout_s=0.005)
    errors = []

    def stream(sid):
        for step in range(50):
            out = b((sid, step), rows=1)
            if out != ("result", (sid, step)):
                errors.append(out)

    threads = [threading.Thread(target=stream, args=(s,)) for s in range(16)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert not errors
        assert sum(len(x) for x in rec.batches) == 16 * 50
        assert max(len(x) for x in rec.batches) > 1  # it did batch
    finally:
        b.close()


def test_a_stream_that_disconnects_mid_batch_does_not_stall_the_others():
    rec = Recorder(delay=0.02)
    b = InferenceBatcher(rec, max_batch_size=4, timeout_s=0.01)
    try:
        abandoned = b.submit("gone", rows=1)  # its caller never reads the result
        del abandoned
        ok = [b.submit(i, rows=1) for i in range(3)]
        assert [f.result(timeout=5)[1] for f in ok] == [0, 1, 2]
        assert b("after", rows=1) == ("result", "after")
    finally:
        b.close()


def test_fewer_live_envs_than_the_batch_size_still_progress():
    # Upstream SEED waits for a full batch and deadlocks here.
    rec = Recorder()
    b = InferenceBatcher(rec, max_batch_size=32, timeout_s=0.002)
    try:
        for i in range(20):
            assert b(i, rows=4)[1] == i
    finally:
        b.close()


def test_failures_reach_every_caller_of_the_batch_and_the_batcher_goes_on():
    def handle(batch):
        if "bad" in batch.requests:
            raise ValueError("boom")
        batch.reply(batch.requests)

    b = InferenceBatcher(handle, max_batch_size=2, timeout_s=1.0)
    try:
        f1, f2 = b.submit("bad", rows=1), b.submit("x", rows=1)
        for f in (f1, f2):
            with pytest.raises(ValueError, match="boom"):
                f.result(timeout=5)
        assert b.submit("y", rows=2).result(timeout=5) == "y"
        assert b.error is None
    finally:
        b.close()


@pytest.mark.parametrize("handle,message", [
    (lambda batch: None, "returned without a reply"),
    (lambda batch: batch.reply(batch.requests[:1]), "1 results for 2 requests"),
])
def test_a_batch_left_unanswered_fails_its_callers_and_the_batcher_goes_on(handle, message):
    def first_wrong(batch):
        (handle if batch.requests == ["a", "b"] else echo)(batch)

    b = InferenceBatcher(first_wrong, max_batch_size=2, timeout_s=1.0)
    try:
        futs = [b.submit(r, rows=1) for r in "ab"]
        for f in futs:
            with pytest.raises(RuntimeError, match=message):
                f.result(timeout=5)
        assert b.submit("c", rows=2).result(timeout=5) == "c"
    finally:
        b.close()


def test_close_fails_waiters_and_refuses_new_requests():
    started = threading.Event()
    release = threading.Event()

    def slow(batch):
        started.set()
        release.wait(5)
        batch.reply(batch.requests)

    b = InferenceBatcher(slow, max_batch_size=1, timeout_s=0.0)
    first = b.submit("a", rows=1)
    started.wait(5)
    queued = b.submit("b", rows=1)
    closer = threading.Thread(target=b.close)
    closer.start()
    release.set()
    closer.join(10)
    assert first.result(timeout=5) == "a"
    with pytest.raises(BatcherClosed):
        queued.result(timeout=5)
    with pytest.raises(BatcherClosed):
        b.submit("c", rows=1)


def test_request_larger_than_the_batch_is_refused():
    b = InferenceBatcher(echo, max_batch_size=2, timeout_s=0.01)
    try:
        with pytest.raises(ValueError, match="exceeds max batch size"):
            b.submit("x", rows=3)
    finally:
        b.close()


def test_stats_count_the_batches_and_rows_answered():
    def handle(batch):
        if batch.requests == ["bad"]:
            raise ValueError("not answered, not counted")
        assert batch.rows == 2 * len(batch.requests)
        batch.reply(batch.requests)

    b = InferenceBatcher(handle, max_batch_size=4, timeout_s=0.001)
    try:
        for _ in range(3):
            b("x", rows=2)
        with pytest.raises(ValueError):
            b("bad", rows=2)
        batches, rows = b.take_stats()
        assert rows == 6 and 1 <= batches <= 3
        assert b.take_stats() == (0, 0)
    finally:
        b.close()


def test_callers_have_their_results_while_the_work_after_the_reply_runs():
    release, recorded, seen = threading.Event(), threading.Event(), []

    def handle(batch):
        batch.reply([("result", r) for r in batch.requests])
        seen.append((batch.requests, batch.results))
        recorded.set()
        release.wait(5)  # the caller must not be waiting on this

    b = InferenceBatcher(handle, max_batch_size=2, timeout_s=30.0)
    try:
        futs = [b.submit(i, rows=1) for i in range(2)]
        assert [f.result(timeout=2) for f in futs] == [("result", 0), ("result", 1)]
        assert recorded.wait(5)
        assert seen == [([0, 1], [("result", 0), ("result", 1)])]  # the batch keeps both
    finally:
        release.set()
        b.close()


def test_a_batch_is_answered_once():
    def handle(batch):
        batch.reply(batch.requests)
        batch.reply(batch.requests)

    b = InferenceBatcher(handle, max_batch_size=1, timeout_s=0.0)
    try:
        assert b("a", rows=1) == "a"
        deadline = time.monotonic() + 5
        while b.error is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert "already answered" in str(b.error)
    finally:
        b.close()


def test_a_failure_after_the_reply_stops_the_batcher_and_keeps_the_error():
    def handle(batch):
        batch.reply([("result", r) for r in batch.requests])
        raise KeyError("boom")

    b = InferenceBatcher(handle, max_batch_size=1, timeout_s=0.0)
    try:
        assert b(1, rows=1) == ("result", 1)  # the caller still got its answer
        deadline = time.monotonic() + 5
        while b.error is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert isinstance(b.error, KeyError)
        with pytest.raises(BatcherClosed):
            b(2, rows=1)
    finally:
        b.close()
