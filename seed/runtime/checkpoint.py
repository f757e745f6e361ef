"""Atomic checkpoints: the agent's variables (network + optimizer) and the run's counters.

One file, ``checkpoint.npz``, replaced atomically (write to a temp file in the
same directory, fsync, rename), so a crash or a full disk mid-write leaves the
previous checkpoint intact and never a half-written one. Replay contents are not saved
(a documented choice: R2D2 refills its replay after a resume; the FIFO queue
of V-trace holds seconds of data).

The agent's part is its ``checkpoint_state()``: arrays keyed by variable name
(:class:`seed.agents.contract.NamedVariables`, which also refuses a state that does
not fit). An ``.npz`` rather than ``tf.train.Checkpoint`` + ``CheckpointManager``:
the variables and the counters of the metrics row they belong to land in one
file with one fsynced rename (a TensorFlow checkpoint is several files and an
index, without fsync, and would keep the counters apart); it reads with NumPy
alone (``seed evaluate``, tools); and its keys are the agent's own names, where
TensorFlow would key a Keras 3 optimizer's state by position.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from seed.runtime.disk import replace_atomically

CHECKPOINT = "checkpoint.npz"
_COUNTERS_KEY = "__counters__"


class CheckpointError(RuntimeError):
    pass


def save(run_dir: str | Path, agent_state: dict, counters: dict) -> Path:
    """Replace the run's checkpoint (:func:`seed.runtime.disk.replace_atomically`): on any
    failure, a full disk among them, the previous one stays whole and an OSError names it."""
    arrays = {f"agent/{k}": np.asarray(v) for k, v in agent_state.items()}
    arrays[_COUNTERS_KEY] = np.frombuffer(json.dumps(counters).encode(), np.uint8)
    return replace_atomically(Path(run_dir) / CHECKPOINT, lambda f: np.savez(f, **arrays))


def load(run_dir: str | Path) -> tuple[dict, dict]:
    """(agent_state, counters) of the run's checkpoint; CheckpointError if absent or damaged."""
    path = Path(run_dir) / CHECKPOINT
    if not path.exists():
        raise CheckpointError(f"{run_dir} has no {CHECKPOINT}: nothing to resume from "
                              "(a run writes one periodically and when it stops cleanly)")
    try:
        with np.load(path) as data:
            counters = json.loads(bytes(data[_COUNTERS_KEY]).decode())
            state = {k[len("agent/"):]: data[k] for k in data.files if k.startswith("agent/")}
    except Exception as e:  # zip/npz/json damage
        raise CheckpointError(f"{path} is damaged and cannot be read ({e})") from e
    return state, counters
