"""Collects the outputs of ReLU layers during one network call, for diagnostics.

The layers (:mod:`seed.networks.layers`, :mod:`seed.networks.mlp`) hand each
ReLU output to :func:`record_relu_output`, which appends it to the list that
an open :func:`recording_relu_outputs` block in this thread yields
(:class:`seed.networks.recorder.Recorder`). Nothing is kept on the modules, so an
inference thread tracing the same network at the same time never sees a train step's
tensors (:mod:`seed.agents.diagnostics` turns them into dead-unit shares).
"""

from __future__ import annotations

from seed.networks.recorder import Recorder

_relus = Recorder()


def recording_relu_outputs():
    """A block that yields a list every ReLU layer called inside it appends ``(name, y)`` to."""
    return _relus.recording()


def record_relu_output(name: str, y) -> None:
    """Called by ReLU layers on their output; a no-op outside :func:`recording_relu_outputs`."""
    _relus.append((name, y))
