"""Collects the outputs of ReLU layers during one network call, for diagnostics.

The layers (:mod:`seed.networks.layers`, :mod:`seed.networks.mlp`) hand each
ReLU output to :func:`record_relu_output`, which appends it to the list that
an open :func:`recording_relu_outputs` block in this thread yields. Nothing is
kept on the modules, so an inference thread tracing the same network at the
same time never sees a train step's tensors (:mod:`seed.agents.diagnostics`
turns them into dead-unit shares).
"""

from __future__ import annotations

import contextlib
import threading

_recording = threading.local()


@contextlib.contextmanager
def recording_relu_outputs():
    """Yields a list that every ReLU layer called inside the block appends ``(name, y)`` to."""
    outputs: list = []
    previous = getattr(_recording, "outputs", None)
    _recording.outputs = outputs
    try:
        yield outputs
    finally:
        _recording.outputs = previous


def record_relu_output(name: str, y) -> None:
    """Called by ReLU layers on their output; a no-op outside :func:`recording_relu_outputs`."""
    outputs = getattr(_recording, "outputs", None)
    if outputs is not None:
        outputs.append((name, y))
