"""Steady-state figures of one run, from its ``metrics.csv``.

The rule (what "steady state" means here)
-----------------------------------------
A run's first rows include start-up: actors importing TensorFlow and connecting,
``tf.function`` tracing, the unroll queue filling before the first train step.
Let the *warm-up row* be the first row with ``env_frames > 0`` and, in train mode,
also ``learner_steps > 0``. The steady window is every row *after* the warm-up row
(the warm-up row's own interval still contains start-up). Figures over the window:

* ``fps``: (env_frames[last] - env_frames[warm-up]) / (wall_time[last] -
  wall_time[warm-up]), i.e. the cumulative counters, not a mean of per-row rates.
* ``learner_fps``: the per-row ``learner_fps`` weighted by each row's duration
  (= trained frames over the window / window seconds).
* ``inference_batch_size``: rows per batch over the window: sum(steps) /
  sum(steps / batch) (each row's mean weighted by its number of batches).
* ``latency_p50_ms`` / ``latency_p99_ms`` / ``parameter_pull_ms``: each row's
  figure weighted by the env steps of its interval (requests and pulls are in
  proportion to steps). The p50/p99 of the window are approximated by these
  weighted means of per-interval percentiles.

When no row follows the warm-up row (a run too short for its log interval), the
figures are taken over all rows with ``env_frames > 0`` from the run start and
``steady`` is False, so a reader can tell.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path


def _num(v):
    if v is None or v == "":
        return None
    try:
        x = float(v)
    except ValueError:
        return None
    return None if math.isnan(x) else x


def read_metrics(path: str | Path) -> list[dict]:
    """Rows of a metrics.csv as dicts of floats (None for empty cells)."""
    with open(path, newline="") as f:
        return [{k: _num(v) for k, v in row.items()} for row in csv.DictReader(f)]


def warmup_index(rows: list[dict], train: bool) -> int | None:
    """Index of the warm-up row (see the module doc), or None when there is none."""
    for i, r in enumerate(rows):
        if (r.get("env_frames") or 0) > 0 and (not train or (r.get("learner_steps") or 0) > 0):
            return i
    return None


def _weighted(pairs):
    pairs = [(v, w) for v, w in pairs if v is not None and w is not None and w > 0]
    total = sum(w for _, w in pairs)
    return sum(v * w for v, w in pairs) / total if total > 0 else None


def steady_state(rows: list[dict], train: bool) -> dict:
    """Steady-state figures (see the module doc) of metrics rows in file order."""
    out = {"steady": False, "rows": len(rows), "steady_rows": 0, "warmup_s": None,
           "window_s": None, "fps": None, "learner_fps": None, "inference_batch_size": None,
           "latency_p50_ms": None, "latency_p99_ms": None, "parameter_pull_ms": None,
           "inference_ms": None, "env_frames": (rows[-1].get("env_frames") if rows else None)}
    w = warmup_index(rows, train)
    if w is not None and w + 1 < len(rows):
        start = rows[w]
        window = rows[w + 1:]
        out["steady"] = True
    else:
        # Too short for a steady window: everything since the start, flagged.
        start = {"wall_time": 0.0, "env_frames": 0.0, "env_steps": 0.0}
        window = [r for r in rows if (r.get("env_frames") or 0) > 0]
        if not window:
            return out
    out["steady_rows"] = len(window) if out["steady"] else 0
    out["warmup_s"] = start["wall_time"] if out["steady"] else None

    prev_t, prev_steps = start["wall_time"], start.get("env_steps") or 0.0
    durations, steps = [], []
    for r in window:
        durations.append(max(r["wall_time"] - prev_t, 0.0))
        steps.append(max((r.get("env_steps") or 0.0) - prev_steps, 0.0))
        prev_t, prev_steps = r["wall_time"], r.get("env_steps") or prev_steps
    span = window[-1]["wall_time"] - start["wall_time"]
    out["window_s"] = span
    if span > 0:
        out["fps"] = (window[-1]["env_frames"] - (start.get("env_frames") or 0.0)) / span
    out["learner_fps"] = _weighted((r.get("learner_fps"), d) for r, d in zip(window, durations))
    if train and out["learner_fps"] is None:
        out["learner_fps"] = 0.0
    batches = [(s / r["inference_batch_size"], s) for r, s in zip(window, steps)
               if r.get("inference_batch_size") and s > 0]
    if batches:
        out["inference_batch_size"] = sum(s for _, s in batches) / sum(b for b, _ in batches)
    for col in ("latency_p50_ms", "latency_p99_ms", "parameter_pull_ms", "inference_ms"):
        out[col] = _weighted((r.get(col), s) for r, s in zip(window, steps))
    return out


def steady_state_of_run(run_dir: str | Path, train: bool) -> dict:
    path = Path(run_dir) / "metrics.csv"
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: the run wrote no metrics")
    return steady_state(read_metrics(path), train)
