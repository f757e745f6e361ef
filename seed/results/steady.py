"""The steady-state rule: which rows of a run's metrics are start-up, which are steady,
and the figures over the steady ones (:func:`steady_state`).

``seed compare`` stops its runs and computes its table by this rule, and every other reader
of a run uses the same one. The rule:

A run's first rows include start-up: actors importing TensorFlow and connecting,
``tf.function`` tracing, the unroll queue filling before the first train step. The
*warm-up row* is the first row with ``env_frames > 0`` and, in train mode, also
``learner_steps > 0``. The steady window is every row *after* it (the warm-up row's own
interval still holds start-up). Figures over the window:

* ``fps``: (env_frames[last] - env_frames[warm-up]) / (wall_time[last] -
  wall_time[warm-up]): the cumulative counters, not a mean of per-row rates.
* ``learner_fps``: each row's ``learner_fps`` weighted by its duration (= trained frames
  over the window / window seconds).
* ``inference_batch_size``: env steps per batch over the window: sum(steps) /
  sum(steps / batch) (each row's mean weighted by its number of batches).
* ``action_latency_p50_ms``, ``action_latency_p99_ms``, ``parameter_pull_ms``,
  ``learner_inference_ms``, ``actor_inference_ms`` (:data:`STEADY_STEP_WEIGHTED`): each
  row's figure weighted by the env steps of its interval (requests and pulls are in
  proportion to steps); the window's p50/p99 are approximated by these weighted means of
  per-interval percentiles.

When no row follows the warm-up row (a run too short for its log interval), the figures
are taken over all rows with ``env_frames > 0`` from the run start and ``steady`` is
False, so a reader can tell.
"""

from __future__ import annotations

import pandas as pd

#: The steady-state figures that are step-weighted means of the rows' figures (the rule above).
STEADY_STEP_WEIGHTED = ("action_latency_p50_ms", "action_latency_p99_ms", "parameter_pull_ms",
                        "learner_inference_ms", "actor_inference_ms")


def _rows(metrics: pd.DataFrame) -> list[dict]:
    """Metrics rows as dicts of floats, None where a cell is empty."""
    return [{k: (None if pd.isna(v) else float(v)) for k, v in row.items()}
            for row in metrics.to_dict("records")]


def _warmup(rows: list[dict], train: bool) -> int | None:
    for i, r in enumerate(rows):
        if (r.get("env_frames") or 0) > 0 and (not train or (r.get("learner_steps") or 0) > 0):
            return i
    return None


def warmup_index(metrics: pd.DataFrame, train: bool) -> int | None:
    """Position of the warm-up row of a run's metrics (the rule above); None when no row
    has frames (and, in train mode, learner steps) yet."""
    return _warmup(_rows(metrics), train)


def _weighted(pairs):
    pairs = [(v, w) for v, w in pairs if v is not None and w is not None and w > 0]
    total = sum(w for _, w in pairs)
    return sum(v * w for v, w in pairs) / total if total > 0 else None


def steady_state(metrics: pd.DataFrame, train: bool = True) -> dict:
    """Steady-state figures of a run's metrics
    (:func:`seed.results.run_dirs.read_metrics`) by the rule.

    Keys: steady (False when the run was too short for a window), rows, steady_rows,
    warmup_s, window_s, fps, learner_fps, inference_batch_size, the
    :data:`STEADY_STEP_WEIGHTED` figures, env_frames (of the last row); None where a
    figure cannot be had (an architecture's own figure, in a run of the other one)."""
    rows = _rows(metrics)
    out = {"steady": False, "rows": len(rows), "steady_rows": 0, "warmup_s": None,
           "window_s": None, "fps": None, "learner_fps": None, "inference_batch_size": None,
           **{col: None for col in STEADY_STEP_WEIGHTED},
           "env_frames": (rows[-1].get("env_frames") if rows else None)}
    w = _warmup(rows, train)
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
    for col in STEADY_STEP_WEIGHTED:
        out[col] = _weighted((r.get(col), s) for r, s in zip(window, steps))
    return out


def steady_fps(metrics: pd.DataFrame, train: bool = True, column: str = "fps") -> float:
    """Steady-state env frames/s (``column="learner_fps"``: trained frames/s); NaN if
    the run logged no frames."""
    value = steady_state(metrics, train).get(column)
    return float("nan") if value is None else float(value)

