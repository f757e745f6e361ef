"""Bounded, supervised long-lived streams: no peer can hold the learner's threads.

The learner serves each StreamSteps call on a thread of the gRPC pool for the
stream's whole life. :class:`StreamRegistry` keeps that pool from being taken
by streams that are not real actors:

- **a cap**: at most ``max_streams`` streams are open; the pool has threads
  left over for the unary calls (GetSpec) whatever the streams do.
- **eviction**: a new stream at the cap closes the oldest stream that has
  never sent a request (a stray or stalled client), so a real actor that
  connects next is served at once; with no such stream to close, the new one
  is refused with RESOURCE_EXHAUSTED instead of waiting.
- **supersession**: a stream's first request claims its env ids; an older
  stream holding any of them is closed (a restarted actor replaces the streams
  its dead process left behind; two streams never drive one env).
- **an idle limit**: a stream that has sent nothing for ``idle_timeout_s``
  while the learner waits on it is closed.

Closing a stream cancels its call (the peer sees CANCELLED and an actor
reconnects under a new run id); the thread serving it returns at once. Dead
peers are found by HTTP/2 keepalive (see :mod:`seed.transport.channel`),
which cancels their calls the same way.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time

log = logging.getLogger(__name__)


class StreamSlot:
    """One open stream: its call, since when it waits on its peer, what it claims."""

    __slots__ = ("number", "context", "opened", "waiting_since", "keys", "closed")

    def __init__(self, number: int, context):
        self.number = number
        self.context = context
        self.opened = time.monotonic()
        self.waiting_since: float | None = self.opened
        self.keys: tuple | None = None  # the env ids it claimed with its first request
        self.closed: str | None = None  # why the learner closed it


class StreamRegistry:
    def __init__(self, max_streams: int, idle_timeout_s: float, what: str = "stream"):
        if max_streams < 1:
            raise ValueError("max_streams must be >= 1")
        self.max_streams = max_streams
        self.idle_timeout_s = float(idle_timeout_s)
        self.what = what
        self._lock = threading.Lock()
        self._open: dict[int, StreamSlot] = {}  # by number: oldest first
        self._owner: dict = {}  # claimed key -> slot
        self._numbers = itertools.count()
        self.counts = {"opened": 0, "refused": 0, "evicted": 0, "superseded": 0, "idle": 0}
        self._stop = threading.Event()
        self._watchdog: threading.Thread | None = None
        if self.idle_timeout_s > 0:
            self._watchdog = threading.Thread(target=self._watch, name="stream-idle",
                                              daemon=True)
            self._watchdog.start()

    # -- a stream's life ----------------------------------------------------------
    def admit(self, context) -> StreamSlot | None:
        """A slot for a new stream, or None when every slot holds a stream that has spoken."""
        victim = None
        with self._lock:
            if len(self._open) >= self.max_streams:
                victim = next((s for s in self._open.values() if s.keys is None), None)
                if victim is None:
                    self.counts["refused"] += 1
                    return None
                self._drop(victim, "evicted")
            slot = StreamSlot(next(self._numbers), context)
            self._open[slot.number] = slot
            self.counts["opened"] += 1
        if victim is not None:
            self._cancel(victim, "the learner is at its stream limit and this stream has "
                                 "sent nothing")
        if not context.add_callback(lambda: self.release(slot)):
            self.release(slot)  # the call already ended
        return slot

    def claim(self, slot: StreamSlot, keys) -> None:
        """``slot`` drives ``keys`` (env ids) from now on; older streams holding any close."""
        keys = tuple(keys)
        superseded = []
        with self._lock:
            if slot.closed:
                return
            slot.keys = keys
            for key in keys:
                old = self._owner.get(key)
                if old is not None and old is not slot and not old.closed:
                    self._drop(old, "superseded")
                    superseded.append(old)
                self._owner[key] = slot
        for old in superseded:
            self._cancel(old, f"a newer stream claimed env ids {list(keys)}")

    def requests(self, slot: StreamSlot, request_iterator):
        """The stream's requests, with the time it waits on its peer kept for the idle limit."""
        while True:
            slot.waiting_since = time.monotonic()
            try:
                request = next(request_iterator)
            except StopIteration:
                return
            finally:
                slot.waiting_since = None
            yield request

    def release(self, slot: StreamSlot) -> None:
        """The call ended (for any reason): free its slot and its claims."""
        with self._lock:
            if self._open.get(slot.number) is slot:
                del self._open[slot.number]
            for key in slot.keys or ():
                if self._owner.get(key) is slot:
                    del self._owner[key]

    # -- watchdog -------------------------------------------------------------------
    def _watch(self) -> None:
        period = min(1.0, self.idle_timeout_s / 4)
        while not self._stop.wait(period):
            self.close_idle()

    def close_idle(self) -> int:
        """Close every stream that has waited on its peer longer than the idle limit."""
        now = time.monotonic()
        idle = []
        with self._lock:
            for slot in list(self._open.values()):
                since = slot.waiting_since
                if since is not None and now - since > self.idle_timeout_s:
                    self._drop(slot, "idle")
                    idle.append(slot)
        for slot in idle:
            self._cancel(slot, f"it sent nothing for {self.idle_timeout_s:g}s")
        return len(idle)

    # -- helpers ------------------------------------------------------------------------
    def _drop(self, slot: StreamSlot, why: str) -> None:
        """Under the lock: forget ``slot`` (its call is cancelled after the lock)."""
        slot.closed = why
        self.counts[why] += 1
        self._open.pop(slot.number, None)
        for key in slot.keys or ():
            if self._owner.get(key) is slot:
                del self._owner[key]

    def _cancel(self, slot: StreamSlot, why: str) -> None:
        try:
            peer = slot.context.peer()
        except Exception:  # the call is already gone
            peer = "?"
        log.warning("closing %s %d from %s (%s): %s", self.what, slot.number, peer,
                    slot.closed, why)
        slot.context.cancel()

    @property
    def open_streams(self) -> int:
        with self._lock:
            return len(self._open)

    def close(self) -> None:
        self._stop.set()
