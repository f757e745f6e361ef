"""A bounded FIFO of complete unrolls between inference (producer) and training (consumer).

Bounded on purpose: when the learner is slower than the actors, ``put`` blocks,
which stalls the inference thread that assembled the unroll, which stalls the
actors. Memory stays flat and the data path slows to the learner's pace, as in
upstream SEED.
"""

from __future__ import annotations

import collections
import threading


class QueueClosed(Exception):
    """The buffer was closed: every buffer's puts and takes raise it from then on (a train
    step that gets it returns None)."""


class UnrollQueue:
    def __init__(self, capacity: int):
        if capacity < 1:
            raise ValueError(f"UnrollQueue capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self._items: collections.deque = collections.deque()
        self._cond = threading.Condition()
        self._closed = False

    def __len__(self) -> int:
        return len(self._items)

    @property
    def closed(self) -> bool:
        return self._closed

    def put(self, item, timeout: float | None = None) -> bool:
        """Append ``item``, waiting while full. False on timeout; QueueClosed if closed."""
        with self._cond:
            room = self._cond.wait_for(
                lambda: len(self._items) < self.capacity or self._closed, timeout)
            if self._closed:
                raise QueueClosed()
            if not room:
                return False
            self._items.append(item)
            self._cond.notify_all()
            return True

    def get_many(self, n: int, timeout: float | None = None) -> list | None:
        """Take exactly ``n`` items in FIFO order, waiting for them up to ``timeout`` seconds
        (None: no limit).

        Returns None on timeout (nothing taken); raises QueueClosed once the queue is closed.
        """
        if n > self.capacity:
            raise ValueError(f"cannot take {n} items from a queue of capacity {self.capacity}")
        with self._cond:
            enough = self._cond.wait_for(lambda: len(self._items) >= n or self._closed, timeout)
            if self._closed:
                raise QueueClosed()
            if not enough:
                return None
            out = [self._items.popleft() for _ in range(n)]
            self._cond.notify_all()
            return out

    def close(self) -> None:
        """Wake every waiter; later puts and gets raise QueueClosed."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
