"""Prioritized replay of whole unrolls (Schaul et al., 2016), as R2D2 uses it.

Items are sampled with probability ``P(i) = p_i^alpha / sum_j p_j^alpha`` and
come with importance weights ``(N P(i))^-beta``, divided by the largest
weight of the sampled batch (as upstream SEED RL and Ape-X do).

When full, ``put`` replaces the oldest item. A new item gets the largest
priority seen so far, so it is likely to be replayed soon. A
:class:`seed.buffers.rate_limiter.SampleToInsertRatio` decides when ``put`` and
:meth:`PrioritizedReplay.sample_when_ready` may go on: by default samples wait
for one item and nothing else waits.

Sampled indices are insertion serial numbers, not slots: an item replaced
between ``sample`` and ``update_priorities`` keeps its new priority, the stale
update is ignored.
"""

from __future__ import annotations

import threading

import numpy as np

from seed.buffers.rate_limiter import SampleToInsertRatio
from seed.buffers.unroll_queue import QueueClosed


class SumTree:
    """A binary tree of non-negative values, each node the sum of its children.

    ``update`` and ``find`` are O(log n); ``total`` is O(1).
    """

    def __init__(self, capacity: int):
        if capacity < 1:
            raise ValueError(f"SumTree capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self._depth = max(int(capacity - 1).bit_length(), 0)
        self._leaves = 1 << self._depth
        # Node 1 is the root; node k has children 2k and 2k+1; leaves start at _leaves.
        self._nodes = np.zeros(2 * self._leaves, np.float64)

    def total(self) -> float:
        return float(self._nodes[1])

    def get(self, indices) -> np.ndarray:
        return self._nodes[self._leaves + np.asarray(indices, np.int64)]

    def update(self, index: int, value: float) -> None:
        if not 0 <= index < self.capacity:
            raise IndexError(f"SumTree index {index} out of range [0, {self.capacity})")
        if not (value >= 0 and np.isfinite(value)):
            raise ValueError(f"SumTree values must be finite and >= 0, got {value}")
        node = self._leaves + int(index)
        self._nodes[node] = value
        node //= 2
        while node >= 1:  # recompute (not add deltas) so rounding errors do not pile up
            self._nodes[node] = self._nodes[2 * node] + self._nodes[2 * node + 1]
            node //= 2

    def find(self, prefix_sums) -> np.ndarray:
        """Leaf index ``i`` per value ``v`` with ``sum(values[:i]) <= v < sum(values[:i+1])``.

        Vectorised over an array of values in ``[0, total())``; never returns a
        leaf of value 0 while the total is positive.
        """
        values = np.array(prefix_sums, np.float64, ndmin=1)
        node = np.ones(values.shape, np.int64)
        for _ in range(self._depth):
            left = 2 * node
            left_sum = self._nodes[left]
            right_sum = self._nodes[left + 1]
            go_right = (values >= left_sum) & (right_sum > 0)
            go_right |= left_sum <= 0
            values = np.where(go_right, values - left_sum, values)
            node = np.where(go_right, left + 1, left)
        return node - self._leaves


class PrioritizedReplay:
    """A bounded, thread-safe prioritized buffer of :class:`seed.types.Unroll` items."""

    def __init__(self, capacity: int, priority_exponent: float = 0.9,
                 importance_sampling_exponent: float = 0.6,
                 limiter: SampleToInsertRatio | None = None):
        if capacity < 1:
            raise ValueError(f"PrioritizedReplay capacity must be >= 1, got {capacity}")
        if priority_exponent < 0 or importance_sampling_exponent < 0:
            raise ValueError("priority and importance sampling exponents must be >= 0")
        self.capacity = capacity
        self.priority_exponent = float(priority_exponent)
        self.importance_sampling_exponent = float(importance_sampling_exponent)
        self._tree = SumTree(capacity)
        self._items: list = [None] * capacity
        self._serials = np.full(capacity, -1, np.int64)  # insertion number held by each slot
        self.limiter = limiter or SampleToInsertRatio(0.0, 1, 0.0)
        self._inserted = 0
        self._sampled = 0  # items drawn, over every sample() call
        self._max_priority = 1.0
        self._cond = threading.Condition()
        self._closed = False

    def __len__(self) -> int:
        return min(self._inserted, self.capacity)

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def num_inserted(self) -> int:
        return self._inserted

    @property
    def num_sampled(self) -> int:
        return self._sampled

    def _wait(self, ready, timeout: float | None) -> bool:
        """Under the lock: wait until closed (QueueClosed) or ``ready()``; False on timeout."""
        if not self._cond.wait_for(lambda: self._closed or ready(), timeout):
            return False
        if self._closed:
            raise QueueClosed()
        return True

    def put(self, unroll, timeout: float | None = None) -> bool:
        """Add ``unroll`` with the largest priority seen so far.

        Waits while the limiter holds inserts back, up to ``timeout`` seconds (None:
        no limit); False if it still does then. Raises QueueClosed once closed.
        """
        with self._cond:
            if not self._wait(lambda: self.limiter.can_insert(self._inserted, self._sampled),
                              timeout):
                return False
            slot = self._inserted % self.capacity
            self._items[slot] = unroll
            self._serials[slot] = self._inserted
            self._tree.update(slot, self._max_priority ** self.priority_exponent)
            self._inserted += 1
            self._cond.notify_all()
            return True

    def sample_when_ready(self, batch_size: int, rng: np.random.Generator,
                          timeout: float | None = None):
        """:meth:`sample`, once the limiter lets a batch of ``batch_size`` go; waits up to
        ``timeout`` seconds (None: no limit) and returns None if it still does not then.
        Raises QueueClosed once closed."""
        with self._cond:
            if not self._wait(lambda: self.limiter.can_sample(self._inserted, self._sampled,
                                                              batch_size), timeout):
                return None
            return self.sample(batch_size, rng)

    def sample(self, batch_size: int, rng: np.random.Generator):
        """Draw ``batch_size`` items (with replacement) in proportion to ``p^alpha``.

        Returns ``(indices int64 [B], list of unrolls, importance_weights float32 [B])``.
        Does not wait for the limiter, but counts as sampled for it.
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        with self._cond:
            size = len(self)
            if size == 0:
                raise ValueError("cannot sample from an empty replay buffer")
            total = self._tree.total()
            if total > 0:
                draws = rng.uniform(0.0, total, size=batch_size)
                slots = self._tree.find(np.minimum(draws, np.nextafter(total, 0.0)))
                probabilities = self._tree.get(slots) / total
                weights = np.power(size * probabilities, -self.importance_sampling_exponent)
                weights = weights / weights.max()
            else:  # every priority is 0: nothing to prefer, sample uniformly
                slots = rng.integers(0, size, size=batch_size)
                weights = np.ones(batch_size)
            items = [self._items[s] for s in slots]
            self._sampled += batch_size
            self._cond.notify_all()
            return self._serials[slots].copy(), items, weights.astype(np.float32)

    def update_priorities(self, indices, priorities) -> None:
        """Set new priorities (e.g. from |TD|) for items returned by ``sample``."""
        indices = np.asarray(indices, np.int64).reshape(-1)
        priorities = np.asarray(priorities, np.float64).reshape(-1)
        if indices.shape != priorities.shape:
            raise ValueError(f"{indices.size} indices but {priorities.size} priorities")
        if not np.all(np.isfinite(priorities)) or np.any(priorities < 0):
            raise ValueError(f"priorities must be finite and >= 0, got {priorities}")
        with self._cond:
            for serial, priority in zip(indices, priorities):
                slot = serial % self.capacity
                if self._serials[slot] != serial:
                    continue  # replaced since it was sampled
                self._tree.update(int(slot), priority ** self.priority_exponent)
                self._max_priority = max(self._max_priority, float(priority))

    def close(self) -> None:
        """Later puts and waits raise QueueClosed; a train step waiting for data stops."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
