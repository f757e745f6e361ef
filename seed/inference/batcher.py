"""Dynamic batching of inference requests from many actor streams.

Each request is one actor's envs for one step (K rows). The batcher gathers
requests until ``max_batch_size`` rows are waiting or ``timeout_s`` has passed
since the oldest waiting request arrived, then hands them as one :class:`Batch`
to ``handle(batch)`` on its inference thread. ``handle`` infers, answers every
caller at once with ``batch.reply(results)``, and may go on with work the
callers need not wait for (the SEED learner's unroll assembly), which so stays
off their round trip.

Upstream SEED waits for a *full* batch, which deadlocks when fewer envs than
the batch size are alive (an actor died, or is reconnecting). Here a partial
batch always goes after the timeout, so any number of live envs makes progress.
A request is never split: a batch may end below ``max_batch_size`` when the
next request does not fit.

An exception in ``handle`` before its batch is answered (or a ``handle`` that
returns without answering) goes to every caller of the batch, and the batcher
goes on. One after the reply has nobody waiting on it: the batcher stops
serving and keeps it in ``error``.
"""

from __future__ import annotations

import collections
import threading
import time
from concurrent.futures import Future


class BatcherClosed(RuntimeError):
    """The batcher was stopped; no more inference."""


class Batch:
    """Requests taken together for one inference call; ``reply`` answers their callers."""

    def __init__(self, requests: list, futures: list[Future], rows: int, on_reply):
        self.requests = requests
        self.rows = rows  # env rows over all requests
        self.results: list | None = None  # one per request, once replied
        self._futures = futures
        self._on_reply = on_reply

    @property
    def answered(self) -> bool:
        return self.results is not None

    def reply(self, results) -> None:
        """Hand each caller its result, in request order; the callers go on at once."""
        if self.answered:
            raise RuntimeError("this batch was already answered")
        results = list(results)
        if len(results) != len(self.requests):
            raise RuntimeError(f"{len(results)} results for {len(self.requests)} requests")
        self.results = results
        for fut, res in zip(self._futures, results):
            fut.set_result(res)
        self._on_reply(self)

    def _fail(self, error: BaseException) -> None:
        for fut in self._futures:
            fut.set_exception(error)


class InferenceBatcher:
    def __init__(self, handle, max_batch_size: int, timeout_s: float, name: str = "inference"):
        """``handle(batch)`` runs on the batcher's thread once per :class:`Batch`."""
        if max_batch_size < 1:
            raise ValueError(f"max_batch_size must be >= 1, got {max_batch_size}")
        self._handle = handle
        self.max_batch_size = max_batch_size
        self.timeout_s = timeout_s
        self._pending: collections.deque = collections.deque()  # (rows, request, future, t)
        self._pending_rows = 0
        self._cond = threading.Condition()
        self._closed = False
        self.error: BaseException | None = None  # what stopped the batcher after a reply
        # Statistics, read and reset by the metrics loop.
        self._stats_lock = threading.Lock()
        self._batches = 0
        self._rows = 0
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def submit(self, request, rows: int) -> Future:
        """Queue ``request`` (``rows`` env rows); the Future resolves to its batch's reply."""
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

    def _take_batch(self) -> Batch | None:
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
            requests, futures, rows = [], [], 0
            while self._pending and rows + self._pending[0][0] <= self.max_batch_size:
                r, req, fut, _ = self._pending.popleft()
                requests.append(req)
                futures.append(fut)
                rows += r
            self._pending_rows -= rows
            return Batch(requests, futures, rows, self._count)

    def _count(self, batch: Batch) -> None:
        with self._stats_lock:
            self._batches += 1
            self._rows += batch.rows

    def _loop(self):
        while (batch := self._take_batch()) is not None:
            try:
                self._handle(batch)
            except BaseException as e:
                if not batch.answered:  # hand the failure to every caller of the batch
                    batch._fail(e)
                    continue
                self.error = e  # nobody waits on it: stop serving, keep the error
                with self._cond:
                    self._closed = True
                break
            if not batch.answered:
                batch._fail(RuntimeError("the inference handler returned without a reply"))
        self._fail_pending()

    def _fail_pending(self):
        with self._cond:
            pending, self._pending = list(self._pending), collections.deque()
            self._pending_rows = 0
        for _, _, fut, _ in pending:
            fut.set_exception(BatcherClosed("inference batcher is stopped"))

    def take_stats(self) -> tuple[int, int]:
        """(batches, rows) answered since the last call."""
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
