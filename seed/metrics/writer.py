"""Writes what docs/design.md says every run writes, append-only so a resumed run carries on.

* ``metrics.csv``: one row per log interval.
* ``episodes.csv``: one row per finished episode.
* TensorBoard event files of the metrics (under ``tb/``).

Both files are flushed at every metrics row (each log interval), so a crash
loses at most what happened since the last row.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

METRICS_COLUMNS = [
    "wall_time",            # seconds since the run started (continues across resumes)
    "env_steps",            # total env steps
    "env_frames",           # total env frames = steps x frames per step
    "fps",                  # env frames per second over the interval
    "learner_steps",        # total optimizer steps
    "learner_fps",          # env frames trained per second over the interval
    "inference_batch_size", # mean envs per inference batch (SEED) / per actor step (IMPALA)
    "queue_fill",           # unrolls waiting for the learner / buffer capacity
    "episodes",             # episodes finished in the interval
    "episode_return",       # mean raw episode return of those episodes
    "action_latency_p50_ms",  # action latency, both architectures: an actor's time from
    "action_latency_p99_ms",  # having a step's observations (its env step returned) to
                            # beginning the env step with their actions; one sample per actor
                            # step and env group. SEED: request encoding, the round trip
                            # through the learner, action decoding. IMPALA: local inference,
                            # unroll assembly and, on a step completing unrolls, sending them
                            # and pulling parameters.
    "parameter_pull_ms",    # mean parameter pull time (IMPALA)
    "loss",
    "learner_inference_ms", # SEED only: mean time of one inference call on the learner (one
                            # batch of actor requests)
    "actor_inference_ms",   # IMPALA only: mean time of one local inference call on an actor
                            # (its envs_per_actor envs), as actors report it once per unroll
    "eval_episodes",        # evaluation episodes finished in the interval (R2D2's eval envs:
    "eval_return",          # greedy, never trained on) and their mean raw return; the two
                            # columns above count the training envs' episodes only
    "foreign_cpu",          # share of the machine's CPU time over the interval used by
                            # processes outside the run's process tree (the learner and its
                            # local actors): other jobs on the machine, the hypervisor's steal
]
# Learning diagnostics (seed/agents/diagnostics.py): each the mean over the interval's train
# steps (a max_* column: their max); blank where the agent has no such quantity (R2D2 has no policy entropy or rho).
LEARNING_COLUMNS = [
    "entropy",              # policy entropy, nats per step
    "mean_rho",             # mean importance ratio pi/mu of the actions taken
    "mean_abs_log_rho",     # mean |log pi/mu|: policy lag between actor and learner
    "max_abs_log_rho",      # the largest |log pi/mu| of any step in the interval (the one
                            # learning column that is a max, not a mean): with the learning
                            # rate at 0 it is float rounding, or a recurrent path that gave
                            # the learner another core state or input than the actor had
    "value_loss",           # 0.5 mean squared error of the value against its target
    "explained_variance",   # 1 - Var(target - value) / Var(target)
    "critic_collapsed",     # 1 once the critic has collapsed (seed/metrics/critic_watch.py),
                            # 0 while it has not, blank before 0.5M frames
    "grad_norm",            # global gradient norm before clipping
    "learning_rate",
    "update_ratio",         # ||delta theta|| / ||theta|| of one optimizer step
    "replay_ratio",         # R2D2: sequences trained per sequence inserted (cumulative)
]
# ...then one dead_relu_<i>_<layer> column per ReLU layer of the network (the agent's
# relu_columns): the share of its units that are zero on every row of the batch.
EPISODE_COLUMNS = ["wall_time", "env_frames", "actor", "env_id", "episode_return",
                   "episode_length", "evaluation"]  # evaluation: 1 for an eval env's episode


def _open_csv(path: Path, columns: list[str]):
    """Open for appending; returns (file, writer, the columns its rows must follow).

    A file that already has a header (a resumed run) keeps it: rows follow the
    existing columns, so a run started by an older version stays one valid CSV.
    """
    new = not path.exists() or path.stat().st_size == 0
    if not new:
        with path.open(newline="") as f:
            header = next(csv.reader(f), None)
        if header:
            columns = [c.strip() for c in header]
    f = path.open("a", newline="")
    w = csv.writer(f)
    if new:
        w.writerow(columns)
        f.flush()
    return f, w, columns


def _fmt(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    return v


class MetricsWriter:
    def __init__(self, run_dir: str | Path, tensorboard: bool = True,
                 relu_columns: list[str] = ()):
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._mf, self._mw, self._metric_columns = _open_csv(
            self.run_dir / "metrics.csv", METRICS_COLUMNS + LEARNING_COLUMNS + list(relu_columns))
        self._ef, self._ew, self._episode_columns = _open_csv(self.run_dir / "episodes.csv",
                                                              EPISODE_COLUMNS)
        self._tb = None
        if tensorboard:
            import tensorflow as tf
            self._tb = tf.summary.create_file_writer(str(self.run_dir / "tb"))

    def write_metrics(self, row: dict) -> None:
        """One metrics row; flushes the episodes written before it too, so both files are
        complete up to this row (a checkpoint follows a row, never precedes its episodes)."""
        self._mw.writerow([_fmt(row.get(c)) for c in self._metric_columns])
        self.flush()
        if self._tb is not None:
            import tensorflow as tf
            with self._tb.as_default(step=int(row["env_frames"])):
                for c in self._metric_columns[3:]:
                    v = row.get(c)
                    if v is not None and not (isinstance(v, float) and math.isnan(v)):
                        tf.summary.scalar(c, float(v))
            self._tb.flush()

    def write_episode(self, wall_time, env_frames, actor, env_id, episode_return,
                      episode_length, evaluation: bool = False) -> None:
        row = {"wall_time": _fmt(float(wall_time)), "env_frames": env_frames, "actor": actor,
               "env_id": env_id, "episode_return": _fmt(float(episode_return)),
               "episode_length": episode_length, "evaluation": int(bool(evaluation))}
        self._ew.writerow([row.get(c, "") for c in self._episode_columns])

    def flush(self) -> None:
        self._ef.flush()
        self._mf.flush()

    def close(self) -> None:
        self.flush()
        self._mf.close()
        self._ef.close()
        if self._tb is not None:
            self._tb.close()
