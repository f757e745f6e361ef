"""A per-thread list that layers append to while a block of their thread is open.

:mod:`seed.networks.relu_recording` (ReLU outputs, for diagnostics) and
:mod:`seed.networks.flops` (each product's FLOPs) each keep one. Nothing is kept on the
modules, so an inference thread tracing the same network at the same time never sees what
another thread's block collects.
"""

from __future__ import annotations

import contextlib
import threading


class Recorder:
    """:meth:`recording` yields a list that :meth:`append` fills in this thread."""

    def __init__(self):
        self._local = threading.local()

    @contextlib.contextmanager
    def recording(self):
        """Yields the list every :meth:`append` of this thread adds to inside the block
        (an inner block takes them over until it ends)."""
        items: list = []
        previous = getattr(self._local, "items", None)
        self._local.items = items
        try:
            yield items
        finally:
            self._local.items = previous

    def active(self) -> bool:
        """Whether a block of this thread is open (a layer then computes what to append)."""
        return getattr(self._local, "items", None) is not None

    def append(self, item) -> None:
        """Add ``item`` to the open block's list; a no-op outside any block."""
        items = getattr(self._local, "items", None)
        if items is not None:
            items.append(item)
