"""An opt-in per-cycle timeline of a SEED run (``timeline: true``, with the run's logging).

The learner and each SEED actor append ``time.perf_counter()`` stamps (CLOCK_MONOTONIC on
Linux, so the processes of one host share the clock) to preallocated NumPy arrays, and write
them into the run directory when they stop: ``timeline-learner.npz`` and
``timeline-actor-<task>.npz``. ``seed timeline RUN_DIR`` (:mod:`seed.bench.timeline`)
matches them up into cycles.

Each recorder is a ring: it keeps the last ``capacity`` rows, so memory stays bounded
however long the run. Rows carry their absolute index, so a reader knows which were lost.
No lock is taken: a learner request's row is claimed with ``next()`` on an
``itertools.count`` (atomic under the GIL) and then written by the one thread serving that
request, and a batch's row by the inference thread alone.

A recorder is always there, as Sample Factory's ``Timing`` is: the SEED learner service and
actor stamp into :data:`OFF` (a :class:`NoTimeline`, whose every call does nothing) when the
run records no timeline, so their hot paths hold no branch on it. Stamps are named (a
field of :data:`REQUEST_FIELDS`, :data:`BATCH_FIELDS`); one taken without a time reads the
clock.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import time
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

FORMAT = 1
LEARNER_FILE = "timeline-learner.npz"
ACTOR_FILE = "timeline-actor-{task}.npz"

# Learner, per request: the columns of ``request_t``.
REQUEST_FIELDS = ("in", "decoded", "submitted", "woken", "yielded")
IN, DECODED, SUBMITTED, WOKEN, YIELDED = range(len(REQUEST_FIELDS))
# Learner, per batch: the columns of ``batch_t``.
BATCH_FIELDS = ("wake", "infer_start", "infer_end", "reply_start", "replied", "done")
_REQUEST_COLUMN = {name: i for i, name in enumerate(REQUEST_FIELDS)}
_BATCH_COLUMN = {name: i for i, name in enumerate(BATCH_FIELDS)}
# Actor, per env-group step: the columns of ``step_t``.
ACTOR_FIELDS = ("received", "stepped", "put")

MAX_BATCHES = 1 << 15  # the learner keeps its last 32768 batches (minutes of a Pong run)


def _ordered(count: int, capacity: int) -> tuple[np.ndarray, np.ndarray]:
    """(absolute indices, ring rows) of the last ``min(count, capacity)`` rows, oldest first."""
    index = np.arange(max(0, count - capacity), count, dtype=np.int64)
    return index, index % capacity


def _cores() -> int:
    """The cores this process may run on (what the learner and local actors share)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _save(path: Path, kind: str, meta: dict, arrays: dict) -> None:
    tmp = path.with_name(path.name + ".tmp.npz")  # whole or absent, never half a file
    np.savez(tmp, kind=np.array(kind), format=np.array(FORMAT),
             meta=np.array(json.dumps(meta)), **arrays)
    tmp.replace(path)


class LearnerTimeline:
    """The learner's stamps: one row per request its streams take, one per batch it infers.

    ``meta``: what a reader needs of the run (actors, envs, schedule, frames per step)."""

    def __init__(self, meta: dict, max_batches: int = MAX_BATCHES, requests_per_batch: int = 2):
        self.meta = {"cores": _cores(), **meta}
        self.batch_capacity = int(max_batches)
        self.request_capacity = int(max_batches) * max(1, int(requests_per_batch))
        self.request_t = np.full((self.request_capacity, len(REQUEST_FIELDS)), np.nan)
        self.request_actor = np.full(self.request_capacity, -1, np.int32)
        self.request_key = np.full(self.request_capacity, -1, np.int64)
        self.request_batch = np.full(self.request_capacity, -1, np.int64)
        self.batch_t = np.full((self.batch_capacity, len(BATCH_FIELDS)), np.nan)
        self.batch_rows = np.zeros(self.batch_capacity, np.int32)
        self._requests = itertools.count()
        self._batches = itertools.count()

    def now(self) -> float:
        return time.perf_counter()

    def request(self, actor_id: int, key: int, t_in: float, t_decoded: float | None = None
                ) -> int:
        """A request came off a stream at ``t_in`` and was decoded at ``t_decoded`` (None:
        now); ``key`` names its stream (its first env id). Returns its index for
        :meth:`mark`."""
        t_decoded = time.perf_counter() if t_decoded is None else t_decoded
        index = next(self._requests)
        row = index % self.request_capacity
        self.request_t[row] = np.nan
        self.request_t[row, IN] = t_in
        self.request_t[row, DECODED] = t_decoded
        self.request_actor[row] = actor_id
        self.request_key[row] = key
        self.request_batch[row] = -1
        return index

    def mark(self, index: int, field: str, t: float | None = None) -> None:
        """Request ``index`` reached ``field`` ("submitted", "woken", "yielded") at ``t``
        (None: now)."""
        self.request_t[index % self.request_capacity, _REQUEST_COLUMN[field]] = \
            time.perf_counter() if t is None else t

    def open_batch(self, t_wake: float | None = None) -> int:
        """The inference thread took a batch at ``t_wake`` (None: now); returns its index
        for :meth:`mark_batch` and :meth:`close_batch` (that thread alone calls them)."""
        index = next(self._batches)
        row = index % self.batch_capacity
        self.batch_t[row] = np.nan
        self.batch_t[row, 0] = time.perf_counter() if t_wake is None else t_wake
        return index

    def mark_batch(self, index: int, field: str, t: float | None = None) -> None:
        """Batch ``index`` reached ``field`` (one of :data:`BATCH_FIELDS`) at ``t`` (None:
        now)."""
        self.batch_t[index % self.batch_capacity, _BATCH_COLUMN[field]] = \
            time.perf_counter() if t is None else t

    def close_batch(self, index: int, requests, rows: int, t_done: float | None = None
                    ) -> None:
        """Batch ``index``, of the requests of these indices (``rows`` env rows), was done at
        ``t_done`` (None: now)."""
        self.mark_batch(index, "done", t_done)
        self.batch_rows[index % self.batch_capacity] = rows
        for r in requests:
            if r >= 0:
                self.request_batch[r % self.request_capacity] = index

    def write_into(self, logdir: str, name: str = LEARNER_FILE) -> Path | None:
        return _write_into(self, logdir, name)

    def write(self, path: Path) -> Path:
        # next() claims an index nobody uses: the count so far, read once the run is over
        requests, request_rows = _ordered(next(self._requests), self.request_capacity)
        batches, batch_rows = _ordered(next(self._batches), self.batch_capacity)
        _save(Path(path), "seed-timeline-learner", self.meta, {
            "request_index": requests, "request_t": self.request_t[request_rows],
            "request_actor": self.request_actor[request_rows],
            "request_key": self.request_key[request_rows],
            "request_batch": self.request_batch[request_rows],
            "batch_index": batches, "batch_t": self.batch_t[batch_rows],
            "batch_rows": self.batch_rows[batch_rows]})
        return Path(path)


class ActorTimeline:
    """One SEED actor's stamps: a row per env-group step (actions received and decoded,
    envs stepped, next request put on the stream's queue). A group's first request, sent
    before any actions, is a row with only ``put``."""

    def __init__(self, task: int, meta: dict | None = None, max_steps: int = MAX_BATCHES):
        self.task = int(task)
        self.meta = dict(meta or {}, task=self.task)
        self.capacity = int(max_steps)
        self.step_t = np.full((self.capacity, len(ACTOR_FIELDS)), np.nan)
        self.step_key = np.full(self.capacity, -1, np.int64)
        self._count = 0  # one thread (the actor's loop) writes

    def step(self, key: int, t_received: float, t_stepped: float, t_put: float | None = None
             ) -> None:
        """A step of stream ``key``: actions received, envs stepped, next request put (None:
        now)."""
        row = self._count % self.capacity
        self.step_t[row] = (t_received, t_stepped, time.perf_counter() if t_put is None else t_put)
        self.step_key[row] = key
        self._count += 1

    def write_into(self, logdir: str, name: str | None = None) -> Path | None:
        return _write_into(self, logdir, name or ACTOR_FILE.format(task=self.task))

    def write(self, path: Path) -> Path:
        index, rows = _ordered(self._count, self.capacity)
        _save(Path(path), "seed-timeline-actor", self.meta, {
            "step_index": index, "step_t": self.step_t[rows], "step_key": self.step_key[rows]})
        return Path(path)


def _write_into(timeline, logdir: str, name: str) -> Path | None:
    """Write ``timeline`` as ``name`` in the run directory ``logdir``; a warning and None
    when that directory is not here (an actor on another host, a service with no run)."""
    run_dir = Path(logdir) if logdir else None
    if run_dir is None or not run_dir.is_dir():
        log.warning("timeline: run directory %r not found here; %s not written", logdir, name)
        return None
    return timeline.write(run_dir / name)


class NoTimeline:
    """The recorder of a run that records no timeline (learner and actor alike): every call
    does nothing, and nothing is written."""

    def now(self) -> float:
        return 0.0

    def request(self, actor_id, key, t_in, t_decoded=None) -> int:
        return -1

    def mark(self, index, field, t=None) -> None:
        pass

    def open_batch(self, t_wake=None) -> int:
        return -1

    def mark_batch(self, index, field, t=None) -> None:
        pass

    def close_batch(self, index, requests, rows, t_done=None) -> None:
        pass

    def step(self, key, t_received, t_stepped, t_put=None) -> None:
        pass

    def write_into(self, logdir, name=None) -> None:
        return None


#: The one :class:`NoTimeline`: what the learner and actors stamp into when off.
OFF = NoTimeline()
