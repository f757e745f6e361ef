"""Writes what docs/design.md says every run writes, append-only so a resumed run carries on.

* ``metrics.csv``: one row per log interval.
* ``episodes.csv``: one row per finished episode.
* TensorBoard event files of the metrics (under ``tb/``).

Both files are written out at every metrics row (each log interval), so a crash
loses at most what happened since the last row. A row is appended whole or not at
all: a write that fails (a full disk) cuts both files back to their last metrics row,
and TensorBoard's file back to its last whole event, and raises an OSError naming the
file (:mod:`seed.runtime.disk` turns it into the run's last line).
"""

from __future__ import annotations

import csv
import errno
import io
import math
import os
import time
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
    "torso_output_mean",    # mean activation of the torso's output layer (sampled steps)
    "replay_ratio",         # R2D2: sequences trained per sequence inserted (cumulative)
]
# ...then one dead_relu_<i>_<layer> column per ReLU layer of the network (the agent's
# relu_columns): the share of its units that are zero on every row of the batch.
EPISODE_COLUMNS = ["wall_time", "env_frames", "actor", "env_id", "episode_return",
                   "episode_length", "evaluation"]  # evaluation: 1 for an eval env's episode


class _CsvFile:
    """A CSV file that rows are appended to whole: :meth:`add` keeps a row, :meth:`write_out`
    appends the rows kept, or none of them and raises an OSError naming the file.

    A file that already has a header (a resumed run) keeps it: rows follow the
    existing columns, so a run started by an older version stays one valid CSV.
    """

    def __init__(self, path: Path, columns: list[str]):
        self.path = path
        new = not path.exists() or path.stat().st_size == 0
        if not new:
            with path.open(newline="") as f:
                header = next(csv.reader(f), None)
            if header:
                columns = [c.strip() for c in header]
        self.columns = columns
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._kept = io.StringIO()
        self._csv = csv.writer(self._kept)
        if new:
            self.add(columns)
            try:
                self.write_out()
            except OSError:
                os.close(self._fd)
                raise

    def add(self, values) -> None:
        self._csv.writerow(values)

    def size(self) -> int:
        return os.fstat(self._fd).st_size

    def write_out(self) -> None:
        """Append the rows kept; if that fails, cut the file back to where it ended and
        raise an OSError naming it (the rows kept are dropped either way)."""
        data = memoryview(self._kept.getvalue().encode())
        self._kept.seek(0)
        self._kept.truncate()
        if not data:
            return
        end = self.size()
        try:
            while data:
                data = data[os.write(self._fd, data):]
        except OSError as e:
            self.cut(end)
            raise OSError(e.errno, e.strerror, str(self.path)) from e

    def cut(self, size: int) -> None:
        """Cut the file back to ``size`` bytes (where a row ended)."""
        os.ftruncate(self._fd, size)

    def close(self) -> None:
        try:
            self.write_out()
        finally:
            os.close(self._fd)


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
        self._metrics = _CsvFile(self.run_dir / "metrics.csv",
                                 METRICS_COLUMNS + LEARNING_COLUMNS + list(relu_columns))
        self._episodes = _CsvFile(self.run_dir / "episodes.csv", EPISODE_COLUMNS)
        self._tb = _TensorBoard(self.run_dir / "tb") if tensorboard else None

    def write_metrics(self, row: dict) -> None:
        """One metrics row, with the episodes written before it: both files are complete up
        to this row (a checkpoint follows a row, never precedes its episodes), or, when a
        write fails, both end at the previous row as they did before."""
        episodes_end = self._episodes.size()
        self._episodes.write_out()
        self._metrics.add([_fmt(row.get(c)) for c in self._metrics.columns])
        try:
            self._metrics.write_out()
        except OSError:
            self._episodes.cut(episodes_end)
            raise
        if self._tb is not None:
            self._tb.write({c: float(row[c]) for c in self._metrics.columns[3:]
                            if row.get(c) is not None
                            and not (isinstance(row[c], float) and math.isnan(row[c]))},
                           step=int(row["env_frames"]))

    def write_episode(self, wall_time, env_frames, actor, env_id, episode_return,
                      episode_length, evaluation: bool = False) -> None:
        """Keep one episode's row; it is written out with the next metrics row."""
        row = {"wall_time": _fmt(float(wall_time)), "env_frames": env_frames, "actor": actor,
               "env_id": env_id, "episode_return": _fmt(float(episode_return)),
               "episode_length": episode_length, "evaluation": int(bool(evaluation))}
        self._episodes.add([row.get(c, "") for c in self._episodes.columns])

    def close(self) -> None:
        """Write out any episode kept and close every file (each one, whatever the others
        raise; the first error is raised)."""
        closes = [self._episodes.close, self._metrics.close]
        if self._tb is not None:
            closes.append(self._tb.close)
        error = None
        for close in closes:
            try:
                close()
            except Exception as e:
                error = error or e
        if error is not None:
            raise error


class _TensorBoard:
    """The metrics as TensorBoard scalars, in an event file of its own under ``tb/``.

    When a write fails for want of space (TensorFlow's ResourceExhausted), the writer is
    closed, its file cut back to the last whole event it held, and an OSError (ENOSPC)
    naming the file is raised."""

    def __init__(self, tb_dir: Path):
        import tensorflow as tf
        self._tf = tf
        # A suffix of this writer's own, to find its file among a resumed run's.
        self._suffix = f".seed-{time.time_ns()}"
        self._writer = tf.summary.create_file_writer(str(tb_dir), filename_suffix=self._suffix)
        self._dir = tb_dir
        self._closed = False

    def _file(self) -> Path | None:
        return next(iter(self._dir.glob(f"*{self._suffix}")), None)

    def write(self, scalars: dict, step: int) -> None:
        path = self._file()
        end = path.stat().st_size if path else 0
        try:
            with self._writer.as_default(step=step):
                for name, value in scalars.items():
                    self._tf.summary.scalar(name, value)
            self._writer.flush()
        except self._tf.errors.ResourceExhaustedError as e:
            try:
                self.close()
            except self._tf.errors.OpError:
                pass  # it failed to write what it held: cut back below
            path = self._file() or self._dir
            if path.is_file():
                os.truncate(path, end)
            raise OSError(errno.ENOSPC, f"{os.strerror(errno.ENOSPC)} (TensorFlow: "
                          f"{type(e).__name__})", str(path)) from e

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._writer.close()
