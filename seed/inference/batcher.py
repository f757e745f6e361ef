"""Dynamic batching of inference requests from many actor streams.

Each request is one actor's envs for one step (K rows). The batcher gathers
requests until ``max_batch_size`` rows are waiting or ``timeout_s`` has passed
since the oldest waiting request arrived, then calls ``fn(requests)`` once on
the inference thread and hands each caller its own result.

Upstream SEED waits for a *full* batch, which deadlocks when fewer envs than
the batch size are alive (an actor died, or is reconnecting). Here a partial
batch always goes after the timeout, so any number of live envs makes progress.
A request is never split: a batch may end below ``max_batch_size`` when the
next request does not fit.

``after(requests, results)``, when given, runs on the inference thread once every
caller of the batch has its result: work the callers need not wait for (the
SEED learner's unroll assembly) stays off their round trip.
"""

from __future__ import annotations

import collections
import threading
import time
from concurrent.futures import Future


class BatcherClosed(RuntimeError):
    """The batcher was stopped; no more inference."""


class InferenceBatcher:
    def __init__(self, fn, max_batch_size: int, timeout_s: float, name: str = "inference",
                 after=None):
        if max_batch_size < 1:
            raise ValueError(f"max_batch_size must be >= 1, got {max_batch_size}")
        self._fn = fn
        self._after = after
        self.max_batch_size = max_batch_size
        self.timeout_s = timeout_s
        self._pending: collections.deque = collections.deque()  # (rows, request, future, t)
        self._pending_rows = 0
        self._cond = threading.Condition()
        self._closed = False
        self.error: BaseException | None = None  # what stopped ``after``, if anything
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()
        # Statistics, read and reset by the metrics loop.
        self._stats_lock = threading.Lock()
        self._batches = 0
        self._rows = 0

    def submit(self, request, rows: int) -> Future:
        """Queue ``request`` (``rows`` env rows); the Future resolves to fn's result for it."""
        if rows < 1:
            raise ValueError("a request needs at least one row")
        if rows > self.max_batch_size:
            raise ValueError(f"request of {rows} rows exceeds max batch size {self.max_batch_size}")
        fut: Future = Future()
        with self._cond:
            if self._closed:
                raise BatcherClosed("inference batcher is stopped")
            self._pending.append((rows, request, fut, time.monotonic()))
            self._pending_rows += rows
            self._cond.notify_all()
        return fut

    def __call__(self, request, rows: int):
        """Submit and wait for the result."""
        return self.submit(request, rows).result()

    def _take_batch(self):
        with self._cond:
            while not self._pending and not self._closed:
                self._cond.wait()
            if self._closed:
                return None
            deadline = self._pending[0][3] + self.timeout_s
            while self._pending_rows < self.max_batch_size and not self._closed:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._cond.wait(remaining)
            if self._closed:
                return None
            batch, rows = [], 0
            while self._pending and rows + self._pending[0][0] <= self.max_batch_size:
                r, req, fut, _ = self._pending.popleft()
                batch.append((req, fut))
                rows += r
            self._pending_rows -= rows
            return batch, rows

    def _loop(self):
        while True:
            taken = self._take_batch()
            if taken is None:
                break
            batch, rows = taken
            requests = [req for req, _ in batch]
            try:
                results = self._fn(requests)
                if len(results) != len(batch):
                    raise RuntimeError(f"inference fn returned {len(results)} results for "
                                       f"{len(batch)} requests")
            except BaseException as e:  # hand the failure to every caller of the batch
                for _, fut in batch:
                    fut.set_exception(e)
                continue
            for (_, fut), res in zip(batch, results):
                fut.set_result(res)
            with self._stats_lock:
                self._batches += 1
                self._rows += rows
            if self._after is not None:
                try:
                    self._after(requests, results)
                except BaseException as e:  # nobody waits on it: stop serving, keep the error
                    self.error = e
                    with self._cond:
                        self._closed = True
                    break
        self._fail_pending()

    def _fail_pending(self):
        with self._cond:
            pending, self._pending = list(self._pending), collections.deque()
            self._pending_rows = 0
        for _, _, fut, _ in pending:
            fut.set_exception(BatcherClosed("inference batcher is stopped"))

    def take_stats(self) -> tuple[int, int]:
        """(batches, rows) since the last call."""
        with self._stats_lock:
            out = (self._batches, self._rows)
            self._batches = self._rows = 0
        return out

    def close(self, join_timeout: float = 10.0):
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if threading.current_thread() is not self._thread:
            self._thread.join(join_timeout)
        self._fail_pending()
