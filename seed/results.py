"""Reading what runs and benchmarks wrote under a results root: the one reading layer of
the suite (``seed compare``, the plots, the notebooks and tests all read runs through it).

A *run directory* is what ``seed train`` writes (docs/design.md, "What every run writes"):
``config.json``, ``metrics.csv``, ``episodes.csv`` (plus ``summary.json``,
``checkpoint.npz`` and TensorBoard files, which are optional here). Usually it lies at
``results/<benchmark>/<architecture>/<run_id>/``, but any directory holding a
``config.json`` is one.

* :func:`find_runs` lists run directories under a root; :func:`load_run` reads one into a
  :class:`Run` (config, architecture, benchmark, metrics and episodes as pandas
  DataFrames), raising :class:`RunDirError` with one line naming the file and what is
  wrong when the directory is partial or damaged; :func:`load_runs` loads all of them and
  returns the ones it had to skip, with the reason.
* :func:`load_compare`, :func:`load_sweep`, :func:`load_roofline` read what
  ``seed compare`` / ``seed roofline`` write (``compare.csv``, ``sweep.csv``,
  ``results/roofline/*.json``), raising :class:`ResultsFileError` on a bad file;
  :func:`find_compare_files` and friends find them.
* :func:`read_metrics` reads one ``metrics.csv``; :func:`steady_state` computes a run's
  steady-state figures from it by the rule ``seed compare`` measures with (described at
  "steady state" below), :func:`steady_fps` one of them.
* Older runs' columns whose meaning depended on the architecture (``latency_p50_ms``,
  ``latency_p99_ms``, ``inference_ms``) are renamed on reading to what they measured, by
  the one table :data:`OLD_COLUMNS` (:func:`convert_old_columns`), in metrics.csv and
  compare.csv alike.
* :func:`rolling_returns`, :func:`return_curve` and :func:`curve_over_runs` shape episode
  returns into curves.

Frames are env frames (emulator frames: an Atari step with frame skip 4 is 4 frames), as
the runs write them; ``Run.frames_per_step`` tells how many frames one env step is.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd

from seed.metrics.writer import EPISODE_COLUMNS, LEARNING_COLUMNS, METRICS_COLUMNS

CONFIG = "config.json"
METRICS = "metrics.csv"
EPISODES = "episodes.csv"
SUMMARY = "summary.json"

#: Columns a metrics.csv must have to be read; the writer's other columns are optional
#: (filled with NaN when absent, so an older run still loads).
REQUIRED_METRICS = ["wall_time", "env_steps", "env_frames", "fps", "learner_steps",
                    "learner_fps", "episodes", "episode_return"]
#: Columns an episodes.csv must have.
REQUIRED_EPISODES = ["wall_time", "env_frames", "episode_return", "episode_length"]
#: Columns a compare.csv must have (one row per run of ``seed compare``).
REQUIRED_COMPARE = ["arch", "run", "fps"]
#: Columns a sweep.csv must have (one row per network size of ``seed compare --sweep-network``).
REQUIRED_SWEEP = ["size", "seed_fps", "impala_fps"]

# Files whose presence marks a directory as (part of) a run.
_RUN_MARKERS = (CONFIG, METRICS, EPISODES)

#: Columns that runs wrote before each measured quantity had its own name, and what each
#: measured under each architecture: ``OLD_COLUMNS[old][architecture]`` is the column that
#: names that quantity today. The one place an old column's meaning is decided:
#:
#: * ``latency_p50_ms`` / ``latency_p99_ms`` under **SEED**: the percentiles of the actor's
#:   round trip, request sent to reply received: the action latency
#:   (``action_latency_p50_ms`` / ``action_latency_p99_ms``) less the actor's encoding of the
#:   request and decoding of the actions, which are small beside the round trip.
#: * ``latency_p50_ms`` / ``latency_p99_ms`` under **IMPALA**: percentiles, over the
#:   interval's unroll messages, of each message's *mean local inference call time* over its
#:   unroll (``actor_inference_p50_ms`` / ``actor_inference_p99_ms``, columns only old IMPALA
#:   runs have). **Not** an action latency: it leaves out unroll assembly, the unroll sends
#:   and parameter pulls an actor makes before acting, and a mean over an unroll hides its
#:   slow steps. Old IMPALA runs have no action latency.
#: * ``inference_ms`` under SEED: one inference call on the learner (``learner_inference_ms``);
#:   under IMPALA: one local inference call on an actor (``actor_inference_ms``).
OLD_COLUMNS = {
    "latency_p50_ms": {"seed": "action_latency_p50_ms", "impala": "actor_inference_p50_ms"},
    "latency_p99_ms": {"seed": "action_latency_p99_ms", "impala": "actor_inference_p99_ms"},
    "inference_ms": {"seed": "learner_inference_ms", "impala": "actor_inference_ms"},
}


class ResultsError(ValueError):
    """Something under a results root cannot be read; the message is one line."""


class RunDirError(ResultsError):
    """A run directory that is partial or damaged."""


class ResultsFileError(ResultsError):
    """A compare/sweep/roofline file that is missing, empty or damaged."""


#: Config fields that say where, how long, with which random seed or how watched a run goes,
#: not what it learns per frame.
NOT_LEARNING = frozenset({
    "logdir", "progress", "frames", "seconds", "arch", "benchmark", "seed", "log_interval_s",
    "checkpoint_interval_s", "stream_idle_timeout_s", "tls_cert_file", "tls_key_file",
    "tls_ca_file", "auth_token_file"})


def learning_settings(config: dict) -> str:
    """A run's settings that change what it learns per frame, as one comparable string.

    Fields a run did not record take today's defaults (a field is added with the default
    that keeps the old behaviour); :data:`NOT_LEARNING` fields are left out, so repeats of
    one setting with other seeds or budgets compare equal.
    """
    from seed.config import Config
    full = {**Config().to_json(), **config}
    return json.dumps({k: full[k] for k in sorted(full) if k not in NOT_LEARNING},
                      sort_keys=True, default=str)


@dataclasses.dataclass
class Run:
    path: Path
    config: dict            # config.json["config"]: the run's Config fields
    architecture: str       # "seed" or "impala"
    benchmark: str          # experiments/ config name, else the env name ("toy_catch")
    env: str
    frames_per_step: int    # env frames per env step (Atari: the frame skip)
    machine: dict           # config.json["machine"], {} when absent
    metrics: pd.DataFrame   # metrics.csv, numeric columns
    episodes: pd.DataFrame  # episodes.csv, numeric columns (may have no rows)
    summary: dict | None    # summary.json, None when the run did not finish cleanly
    env_engine: dict | None = None  # config.json["env_engine"]: the engine build (DMLab)

    @property
    def run_id(self) -> str:
        return self.path.name

    @property
    def seed(self) -> int | None:
        return self.config.get("seed")

    @property
    def label(self) -> str:
        return f"{self.benchmark}/{self.architecture}/{self.run_id}"

    @property
    def engine_caveat(self) -> str | None:
        """What a reader must know of the engine the run ran on: a DMLab engine built from a
        partial source (the files it lacked drawn with placeholders). None otherwise."""
        engine = self.env_engine or {}
        if engine.get("complete") is not False:
            return None
        named = engine.get("level_absent_assets") or []
        return (f"engine built from a partial source ({len(engine.get('absent') or [])} files "
                f"absent, {len(named)} of them named by this level)")


# --------------------------------------------------------------------------- discovery

def _check_root(root) -> Path:
    root = Path(root)
    if not root.exists():
        raise ResultsError(f"results root {root} does not exist")
    if not root.is_dir():
        raise ResultsError(f"results root {root} is not a directory")
    return root


def find_runs(root, include_partial: bool = False) -> list[Path]:
    """Run directories under ``root`` (``root`` itself included), sorted.

    A run directory holds a ``config.json``. With ``include_partial`` a directory that
    holds only a ``metrics.csv`` or ``episodes.csv`` counts too (a run whose
    ``config.json`` was lost), so that :func:`load_runs` can say why it skips it.
    TensorBoard folders (``tb/``) are not searched.
    """
    root = _check_root(root)
    markers = _RUN_MARKERS if include_partial else (CONFIG,)
    found = set()
    for marker in markers:
        for f in root.rglob(marker):
            if f.is_file() and "tb" not in f.relative_to(root).parts[:-1]:
                found.add(f.parent)
    return sorted(found)


# --------------------------------------------------------------------------- CSV reading

def _read_csv(path: Path, required: list[str], optional: list[str], error,
              allow_no_rows: bool) -> pd.DataFrame:
    """A strictly checked numeric CSV: every row has the header's field count, every
    value is a number or empty, the required columns are there. A column whose cells are
    all integers is int64, any other float64 (NaN where a cell is empty); ``optional``
    columns the file lacks are added, all NaN."""
    if not path.exists():
        raise error(f"{path}: missing")
    if not path.is_file():
        raise error(f"{path}: not a file")
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise error(f"{path}: cannot be read ({type(e).__name__}: {e})") from e
    if not text.strip():
        raise error(f"{path}: empty (no header)")
    try:
        rows = list(csv.reader(text.splitlines()))
    except csv.Error as e:
        raise error(f"{path}: not valid CSV ({e})") from e
    header = [h.strip() for h in rows[0]]
    missing = [c for c in required if c not in header]
    if missing:
        raise error(f"{path}: missing column(s) {', '.join(missing)} "
                    f"(header is {','.join(header)[:120]})")
    body = [r for r in rows[1:] if r]
    for i, r in enumerate(body, start=2):
        if len(r) != len(header):
            raise error(f"{path}: line {i} has {len(r)} fields, the header has {len(header)} "
                        "(truncated or garbled row)")
    if not body and not allow_no_rows:
        raise error(f"{path}: header only, no rows (the run logged nothing)")
    data = {}
    for j, col in enumerate(header):
        cells = [r[j] for r in body]
        data[col], bad = _numbers(cells)
        if bad is not None:
            raise error(f"{path}: line {bad + 2}, column {col}: {cells[bad]!r} is not a "
                        "number")
    for col in optional:
        data.setdefault(col, np.full(len(body), np.nan))
    return pd.DataFrame(data)


def _numbers(cells: list[str]) -> tuple[np.ndarray, int | None]:
    """One column's cells parsed as Python parses numbers (``int``, else ``float``), so
    every reader of a run sees the values ``seed compare`` computed its figures from;
    with the index of the first cell that is not a number (None when all are)."""
    stripped = [c.strip() for c in cells]
    if stripped and all(stripped):
        try:
            return np.array([int(c) for c in stripped], dtype=np.int64), None
        except (ValueError, OverflowError):
            pass
    out = np.full(len(cells), np.nan)
    for i, c in enumerate(stripped):
        if c:
            try:
                out[i] = float(c)
            except ValueError:
                return out, i
    return out, None


def convert_old_columns(df: pd.DataFrame, arch) -> pd.DataFrame:
    """``df`` (metrics or compare rows) with the :data:`OLD_COLUMNS` it holds renamed to
    what they measured under ``arch``: one architecture for every row, or one per row (a
    compare's ``arch`` column).

    A converted value goes to its new column where that is empty; an old column is
    dropped once every value in it went somewhere, and kept as it is where a row's
    architecture is unknown (its meaning cannot be told). ``df.attrs["old_columns"]``
    records what was converted: ``{old: {architecture: new}}``."""
    archs = pd.Series(arch, index=df.index, dtype=object)
    converted: dict = {}
    for old, by_arch in OLD_COLUMNS.items():
        if old not in df.columns:
            continue
        values = pd.to_numeric(df[old], errors="coerce")
        for a, new in by_arch.items():
            rows = (archs == a) & values.notna()
            if not rows.any():
                continue
            if new not in df.columns:
                df[new] = np.nan
            fill = rows & df[new].isna()
            df[new] = df[new].astype(np.float64)
            df.loc[fill, new] = values[fill]
            converted.setdefault(old, {})[a] = new
        if not (values.notna() & ~archs.isin(list(by_arch))).any():
            df = df.drop(columns=old)
    df.attrs["old_columns"] = converted
    return df


def _architecture_beside(path: Path) -> str | None:
    """The architecture the config.json beside a metrics.csv names, None if it names none."""
    try:
        data = json.loads((path.parent / CONFIG).read_text())
        arch = data.get("architecture") or data["config"].get("arch")
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        return None
    return arch if isinstance(arch, str) and arch else None


def read_metrics(path, arch: str | None = None) -> pd.DataFrame:
    """A run's metrics.csv; RunDirError (one line) when it is missing, empty or damaged
    (a row being written while it is read shows as a truncated row).

    Old columns are converted by :func:`convert_old_columns` for the run's architecture:
    ``arch``, else the one the ``config.json`` beside the file names."""
    path = Path(path)
    df = _read_csv(path, REQUIRED_METRICS, METRICS_COLUMNS + LEARNING_COLUMNS,
                   RunDirError, allow_no_rows=False)
    return convert_old_columns(df, arch or _architecture_beside(path))


def read_episodes(path) -> pd.DataFrame:
    return _read_csv(Path(path), REQUIRED_EPISODES, EPISODE_COLUMNS, RunDirError,
                     allow_no_rows=True)


def _read_json(path: Path, error, what: str):
    if not path.exists():
        raise error(f"{path}: missing ({what})")
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as e:
        raise error(f"{path}: cannot be read ({type(e).__name__}: {e})") from e
    except ValueError as e:
        raise error(f"{path}: not valid JSON ({e})") from e


# --------------------------------------------------------------------------- runs

def load_config(run_dir) -> dict:
    """The whole config.json of a run, checked to hold a ``config`` mapping."""
    path = Path(run_dir) / CONFIG
    data = _read_json(path, RunDirError, "not a run directory, or the run never started")
    if not isinstance(data, dict) or not isinstance(data.get("config"), dict):
        raise RunDirError(f"{path}: has no 'config' mapping (not written by seed train)")
    return data


def _benchmark_name(config: dict) -> str:
    if config.get("benchmark"):
        return str(config["benchmark"])
    return str(config.get("env", "unknown")).replace(":", "_")


def load_run(run_dir) -> Run:
    """Read one run directory; RunDirError (one line) if it is partial or damaged."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise RunDirError(f"{run_dir}: not a directory")
    data = load_config(run_dir)
    config = data["config"]
    arch = data.get("architecture") or config.get("arch")
    if not isinstance(arch, str) or not arch:
        raise RunDirError(f"{run_dir / CONFIG}: names no architecture (config.arch)")
    try:
        fps_unit = int(data.get("frames_per_step", 1))
    except (TypeError, ValueError):
        raise RunDirError(f"{run_dir / CONFIG}: frames_per_step "
                          f"{data.get('frames_per_step')!r} is not an integer") from None
    summary = None
    if (run_dir / SUMMARY).exists():
        summary = _read_json(run_dir / SUMMARY, RunDirError, "")
    return Run(path=run_dir, config=config, architecture=arch,
               benchmark=_benchmark_name(config), env=str(config.get("env", "")),
               frames_per_step=fps_unit, machine=data.get("machine") or {},
               metrics=read_metrics(run_dir / METRICS, arch),
               episodes=read_episodes(run_dir / EPISODES), summary=summary,
               env_engine=data.get("env_engine"))


def load_runs(root) -> tuple[list[Run], list[tuple[Path, str]]]:
    """Every readable run under ``root``, and ``(dir, reason)`` for each one skipped."""
    runs, skipped = [], []
    for d in find_runs(root, include_partial=True):
        try:
            runs.append(load_run(d))
        except RunDirError as e:
            skipped.append((d, str(e)))
    return runs, skipped


def is_training_run(run: Run) -> bool:
    """A run made to learn: not serve mode, not one of ``seed compare``'s or ``make demo``'s.

    Those last a minute or less and are there for their frames per second; on a
    reward curve they would only crowd the start and skew the mean over runs.
    """
    if not run.config.get("train", True):
        return False
    return not any(part.startswith("compare-") or part == "demo" for part in run.path.parts)


def run_mode(run: Run) -> str:
    """``train``, or ``serve`` for a run that only served inference (``train: false``)."""
    return "train" if run.config.get("train", True) else "serve"


def runs_table(runs: list[Run]) -> pd.DataFrame:
    """One row per run: what it is and what it reached (for printing)."""
    rows = []
    for r in runs:
        m = r.metrics
        rows.append({
            "benchmark": r.benchmark, "arch": r.architecture, "run": r.run_id,
            "mode": run_mode(r), "seed": r.seed, "env": r.env,
            "frames_per_step": r.frames_per_step,
            "env_frames": int(m["env_frames"].max()), "wall_s": float(m["wall_time"].max()),
            "episodes": len(r.episodes),
            "steady_fps": steady_fps(m, run_mode(r) == "train"),
            "final_return": final_return(training_episodes(r.episodes)),
            "final_eval_return": final_return(evaluation_episodes(r.episodes)),
        })
    return pd.DataFrame(rows, columns=["benchmark", "arch", "run", "mode", "seed", "env",
                                       "frames_per_step", "env_frames", "wall_s",
                                       "episodes", "steady_fps", "final_return",
                                       "final_eval_return"])


def final_return(episodes: pd.DataFrame, window: int = 100) -> float:
    """Mean return of the last ``window`` episodes (by frames); NaN without episodes."""
    if not len(episodes):
        return float("nan")
    ordered = episodes.sort_values(["env_frames", "wall_time"], kind="stable")
    return float(ordered["episode_return"].tail(window).mean())


def training_episodes(episodes: pd.DataFrame) -> pd.DataFrame:
    """The episodes of envs that act with the training policy (``evaluation`` not 1; a run
    written before the column existed has only those)."""
    return episodes[episodes["evaluation"].fillna(0) != 1]


def evaluation_episodes(episodes: pd.DataFrame) -> pd.DataFrame:
    """The episodes of evaluation envs (R2D2's greedy envs that are never trained on)."""
    return episodes[episodes["evaluation"].fillna(0) == 1]


def first_reaching(episodes: pd.DataFrame, threshold: float, window: int = 100) -> dict | None:
    """Where the mean return of ``window`` consecutive episodes first reaches ``threshold``.

    Episodes in frame order; returns ``{"env_frames", "wall_time", "episodes"}`` of the
    episode that completed the window (frames and wall time as logged with it), or None
    if no window of ``window`` episodes reaches it.
    """
    ordered = episodes.sort_values(["env_frames", "wall_time"], kind="stable")
    means = ordered["episode_return"].rolling(window).mean().to_numpy()
    hits = np.flatnonzero(means >= threshold)
    if not hits.size:
        return None
    i = int(hits[0])
    return {"env_frames": int(ordered["env_frames"].iloc[i]),
            "wall_time": float(ordered["wall_time"].iloc[i]), "episodes": i + 1}


# --------------------------------------------------------------------------- steady state

# The rule (what "steady state" means here; ``seed compare`` stops its runs and computes
# its table by it, and every other reader of a run uses the same one):
#
# A run's first rows include start-up: actors importing TensorFlow and connecting,
# ``tf.function`` tracing, the unroll queue filling before the first train step. The
# *warm-up row* is the first row with ``env_frames > 0`` and, in train mode, also
# ``learner_steps > 0``. The steady window is every row *after* it (the warm-up row's own
# interval still holds start-up). Figures over the window:
#
# * ``fps``: (env_frames[last] - env_frames[warm-up]) / (wall_time[last] -
#   wall_time[warm-up]): the cumulative counters, not a mean of per-row rates.
# * ``learner_fps``: each row's ``learner_fps`` weighted by its duration (= trained frames
#   over the window / window seconds).
# * ``inference_batch_size``: env steps per batch over the window: sum(steps) /
#   sum(steps / batch) (each row's mean weighted by its number of batches).
# * ``action_latency_p50_ms``, ``action_latency_p99_ms``, ``parameter_pull_ms``,
#   ``learner_inference_ms``, ``actor_inference_ms`` (:data:`STEADY_STEP_WEIGHTED`): each
#   row's figure weighted by the env steps of its interval (requests and pulls are in
#   proportion to steps); the window's p50/p99 are approximated by these weighted means of
#   per-interval percentiles.
#
# When no row follows the warm-up row (a run too short for its log interval), the figures
# are taken over all rows with ``env_frames > 0`` from the run start and ``steady`` is
# False, so a reader can tell.

#: The steady-state figures that are step-weighted means of the rows' figures (above).
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
    """Steady-state figures of a run's metrics (:func:`read_metrics`) by the rule above.

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


# --------------------------------------------------------------------------- computations

def rolling_returns(episodes: pd.DataFrame, window: int) -> pd.DataFrame:
    """Episodes sorted by frames, with ``return_rolling``: the mean return of the last
    ``window`` episodes (fewer at the start)."""
    if window < 1:
        raise ValueError(f"rolling window must be >= 1, got {window}")
    out = episodes.sort_values(["env_frames", "wall_time"], kind="stable").reset_index(drop=True)
    out["return_rolling"] = out["episode_return"].rolling(window, min_periods=1).mean()
    return out


def return_curve(rolled: pd.DataFrame, x: str = "env_frames") -> tuple[np.ndarray, np.ndarray]:
    """(x, rolling return) with one point per distinct ``x``: episodes are logged once per
    log interval, so many share one ``env_frames``/``wall_time``; the point is the rolling
    mean after the last of them. ``rolled`` comes from :func:`rolling_returns`."""
    if rolled.empty:
        return np.zeros(0), np.zeros(0)
    last = rolled.groupby(x, sort=True)["return_rolling"].last()
    return last.index.to_numpy(float), last.to_numpy(float)


def curve_over_runs(curves: list[tuple[np.ndarray, np.ndarray]],
                    points: int = 200) -> pd.DataFrame:
    """Median, mean, std, min and max over runs of curves ``(x, y)``, on a common grid of x.

    Each curve is interpolated (linearly) onto ``points`` values of x from the largest
    first x to the smallest last x of the curves: the grid spans only what every run
    reached (a curve is never extrapolated). Returns columns x, median, mean, std, min,
    max, runs.
    """
    columns = ["x", "median", "mean", "std", "min", "max", "runs"]
    curves = [(np.asarray(x, float), np.asarray(y, float)) for x, y in curves if len(x)]
    if not curves:
        return pd.DataFrame(columns=columns)
    lo = max(float(x[0]) for x, _ in curves)
    hi = min(float(x[-1]) for x, _ in curves)
    if hi < lo:  # curves do not overlap: nothing to average over
        return pd.DataFrame(columns=columns)
    grid = np.linspace(lo, hi, points if hi > lo else 1)
    ys = np.stack([np.interp(grid, x, y) for x, y in curves])
    return pd.DataFrame({"x": grid, "median": np.median(ys, 0), "mean": ys.mean(0),
                         "std": ys.std(0), "min": ys.min(0), "max": ys.max(0),
                         "runs": len(curves)})


# --------------------------------------------------------------------------- compare outputs

def find_compare_files(root) -> list[Path]:
    """Every ``compare.csv`` under ``root``, sorted."""
    return sorted(p for p in _check_root(root).rglob("compare.csv") if p.is_file())


def find_sweep_files(root) -> list[Path]:
    """Every ``sweep.csv`` under ``root``, sorted."""
    return sorted(p for p in _check_root(root).rglob("sweep.csv") if p.is_file())


def find_roofline_files(root) -> list[Path]:
    """The ``*.json`` files of ``<root>/roofline/`` (and below), sorted."""
    d = _check_root(root) / "roofline"
    return sorted(p for p in d.rglob("*.json") if p.is_file()) if d.is_dir() else []


def _read_table(path: Path, required: list[str], numeric: tuple) -> pd.DataFrame:
    """A CSV whose columns are partly text (arch, run, network): pandas, then checks."""
    if not path.exists():
        raise ResultsFileError(f"{path}: missing")
    if path.stat().st_size == 0:
        raise ResultsFileError(f"{path}: empty (no header)")
    try:
        df = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ResultsFileError(f"{path}: not valid CSV ({first})") from e
    df.columns = [str(c).strip() for c in df.columns]
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise ResultsFileError(f"{path}: missing column(s) {', '.join(missing)} "
                               f"(header is {','.join(df.columns)[:120]})")
    if df.empty:
        raise ResultsFileError(f"{path}: header only, no rows")
    for col in numeric:
        if col in df.columns:
            values = pd.to_numeric(df[col], errors="coerce")
            bad = values.isna() & df[col].notna()
            if bad.any():
                raise ResultsFileError(f"{path}: column {col}: {df[col][bad].iloc[0]!r} is "
                                       "not a number")
            df[col] = values
    return df


def _benchmark_of(path: Path, root: Path | None) -> str:
    """The benchmark a compare/sweep file belongs to: the ``benchmark`` (else the env) of
    the ``base_config.json`` that ``seed compare`` writes beside it (a sweep: in its
    first size's folder), else its first folder under the root."""
    candidates = [path.parent / "base_config.json"]
    candidates += sorted(path.parent.glob("*/base_config.json"))
    for cfg in candidates:
        try:
            values = json.loads(cfg.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(values, dict) and (values.get("benchmark") or values.get("env")):
            return _benchmark_name(values)
    if root is not None:
        try:
            parts = path.parent.relative_to(root).parts
            if parts:
                return parts[0]
        except ValueError:
            pass
    return path.parent.name


def load_compare(path, root=None) -> pd.DataFrame:
    """One compare.csv (``seed compare``: one row per run, columns run, arch, fps,
    learner_fps, ...), with columns added: ``source`` (the file), ``compare_dir``,
    ``benchmark`` (the first folder under ``root``), and from the ``compare.json``
    beside it, when readable, ``mode`` (train/serve) and ``fps_ratio`` (SEED/IMPALA).
    Old columns are converted per row by its ``arch`` (:func:`convert_old_columns`)."""
    path = Path(path)
    df = _read_table(path, REQUIRED_COMPARE, ("fps", "learner_fps", "cpu_util", "env_frames"))
    df["arch"] = df["arch"].astype(str)
    df = convert_old_columns(df, df["arch"])
    df["run"] = df["run"].astype(str)
    df["source"] = str(path)
    df["compare_dir"] = str(path.parent)
    if "benchmark" not in df.columns:
        df["benchmark"] = _benchmark_of(path, Path(root) if root else None)
    meta = load_compare_json(path.parent / "compare.json")
    df["mode"] = meta.get("mode", "")
    ratio = meta.get("fps_ratio")
    if ratio is None:  # compute it as seed compare does: mean SEED fps / mean IMPALA fps
        s_fps = df.loc[df["arch"] == "seed", "fps"].mean()
        i_fps = df.loc[df["arch"] == "impala", "fps"].mean()
        ratio = s_fps / i_fps if i_fps and not math.isnan(i_fps) else float("nan")
    df["fps_ratio"] = float(ratio)
    return df


def load_compare_json(path) -> dict:
    """compare.json as a dict ({} when it is absent or unreadable: it only adds detail)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def load_sweep(path, root=None) -> pd.DataFrame:
    """One sweep.csv (``seed compare --sweep-network``: one row per network size, columns
    size, network, parameters, seed_fps, impala_fps, fps_ratio, ...), with ``source``
    and ``benchmark`` added as :func:`load_compare` does."""
    path = Path(path)
    df = _read_table(path, REQUIRED_SWEEP,
                     ("seed_fps", "impala_fps", "fps_ratio", "parameters",
                      "inf_cpu_us_per_sample_b1", "inf_cpu_us_per_sample_actor_batch",
                      "inf_cpu_us_per_sample_seed_batch", "seed_frames_per_cpu_s",
                      "impala_frames_per_cpu_s", "frames_per_cpu_s_ratio"))
    df["size"] = df["size"].astype(str)
    df["source"] = str(path)
    if "benchmark" not in df.columns:
        df["benchmark"] = _benchmark_of(path, Path(root) if root else None)
    return df


def load_roofline(path) -> dict:
    """One roofline JSON: a mapping, with ``source`` added."""
    path = Path(path)
    data = _read_json(path, ResultsFileError, "")
    if not isinstance(data, dict):
        raise ResultsFileError(f"{path}: expected a JSON object, got {type(data).__name__}")
    if not isinstance(data.get("ceilings"), dict):
        raise ResultsFileError(f"{path}: has no 'ceilings' mapping (not written by seed roofline)")
    data = dict(data)
    data["source"] = str(path)
    return data


def load_all(root, finder, loader) -> tuple[list, list[tuple[Path, str]]]:
    """``loader`` over every file ``finder(root)`` finds: (loaded, [(file, reason)])."""
    loaded, skipped = [], []
    for p in finder(root):
        try:
            loaded.append(loader(p))
        except ResultsFileError as e:
            skipped.append((p, str(e)))
    return loaded, skipped


# --------------------------------------------------------------------------- summaries

def final_returns(runs: list[Run]) -> pd.DataFrame:
    """Per benchmark x architecture, over the training runs among ``runs`` (compare and
    demo runs measure throughput and would pass for seeds here): the number of runs, the
    mean and std of their final returns (:func:`final_return`), the mean final return of
    their evaluation envs, and their mean env frames."""
    table = runs_table([r for r in runs if is_training_run(r)]).dropna(subset=["final_return"])
    return (table.groupby(["benchmark", "arch"])
            .agg(runs=("final_return", "count"), mean=("final_return", "mean"),
                 std=("final_return", "std"), eval_mean=("final_eval_return", "mean"),
                 env_frames=("env_frames", "mean"))
            .reset_index())


#: The data-path options (README: off by default): a compare whose runs set one otherwise
#: than the config default is told apart on the ratio figure.
DATA_PATH_OPTIONS = ("actor_splits", "jit_inference", "inference_batch_size")


def compare_config(compare_dir) -> dict:
    """The config every run of a compare started from: compare.json's ``config``, else the
    ``base_config.json`` beside it; {} when neither can be read."""
    compare_dir = Path(compare_dir)
    config = load_compare_json(compare_dir / "compare.json").get("config")
    if isinstance(config, dict):
        return config
    base = load_compare_json(compare_dir / "base_config.json")  # same reading rules
    return base if isinstance(base, dict) else {}


def network_text(network: str, kwargs: dict | None) -> str:
    """``mlp hidden_sizes 64x64``: a network and its keyword arguments, short."""
    parts = [str(network or "?")]
    for k, v in sorted((kwargs or {}).items()):
        parts.append(f"{k} {'x'.join(map(str, v)) if isinstance(v, (list, tuple)) else v}")
    return " ".join(parts)


def options_text(config: dict) -> str:
    """The data-path options a config sets otherwise than by default ("" for none)."""
    from seed.config import Config
    out = []
    for name in DATA_PATH_OPTIONS:
        value, default = config.get(name, getattr(Config, name)), getattr(Config, name)
        if value is not None and value != default:
            out.append(name if value is True else f"{name}={value}")
    return ", ".join(out)


def _sweep_position(compare_dir: Path) -> int | None:
    """Where a compare stands in the sweep it belongs to (its folder's place among the
    sizes of the ``sweep.csv`` one level up), None outside a sweep."""
    sweep = compare_dir.parent / "sweep.csv"
    if not sweep.is_file():
        return None
    try:
        sizes = load_sweep(sweep)["size"].tolist()
    except ResultsFileError:
        sizes = []
    return sizes.index(compare_dir.name) if compare_dir.name in sizes else len(sizes)


def compare_ratios(compares: list[pd.DataFrame]) -> pd.DataFrame:
    """One row per compare (each a :func:`load_compare` frame): the SEED/IMPALA ratios
    of one measurement, and the group of repeats it belongs to.

    Columns: benchmark, mode, network (its name; inside a sweep, where sizes differ, with
    its keyword arguments as :func:`network_text` writes them), sweep_size (the size's
    folder inside a sweep, "" outside one), options (:func:`options_text`),
    fps_ratio, cpu_ratio (frames per CPU-second, SEED/IMPALA; NaN when not measured),
    seed_fps (mean of the SEED runs), impala_fps, compare_dir, and group ("benchmark ·
    mode · network", or "benchmark · mode · sweep <size> (network)"): compares of one
    group are repeats of one measurement. Rows are in group order (benchmark, mode,
    outside a sweep before a sweep's sizes in its order), then by folder."""
    rows = []
    for df in compares:
        d = Path(df["compare_dir"].iloc[0])
        config = compare_config(d)
        position = _sweep_position(d)
        size = d.name if position is not None else ""
        network = network_text(config.get("network", ""), config.get("network_kwargs")
                               if size else None)
        meta = load_compare_json(d / "compare.json")
        cpu = meta.get("frames_per_cpu_s_ratio")
        rows.append({
            "benchmark": df["benchmark"].iloc[0], "mode": df["mode"].iloc[0] or "?",
            "network": network, "sweep_size": size, "options": options_text(config),
            "fps_ratio": float(df["fps_ratio"].iloc[0]),
            "cpu_ratio": float("nan") if cpu is None else float(cpu),
            "seed_fps": float(df.loc[df["arch"] == "seed", "fps"].mean()),
            "impala_fps": float(df.loc[df["arch"] == "impala", "fps"].mean()),
            "compare_dir": str(d),
            "group": " · ".join([df["benchmark"].iloc[0], df["mode"].iloc[0] or "?",
                                 f"sweep {size} ({network})" if size else network]),
            "_order": (-1 if position is None else position, d.name),
        })
    columns = ["benchmark", "mode", "network", "sweep_size", "options", "fps_ratio",
               "cpu_ratio", "seed_fps", "impala_fps", "compare_dir", "group"]
    if not rows:
        return pd.DataFrame(columns=columns)
    rows.sort(key=lambda r: (r["benchmark"], r["mode"], r["_order"][0], r["network"],
                             r["_order"][1]))
    return pd.DataFrame(rows)[columns]


def roofline_fractions(runs: list[Run], compares: list[pd.DataFrame], roofs: list[dict],
                       root=None) -> pd.DataFrame:
    """Each architecture's steady frames/s as a fraction of this machine's ceiling
    (``seed roofline``: cores / CPU seconds per frame of simulation + inference
    [+ training]), from two sources: the fractions ``seed compare`` stored in compare.json
    (one row per architecture and compare, ``source`` the compare's folder, ``run``
    "mean"), and every run whose env,
    network and shape (actors, envs per actor, unroll length, batch size) match a roofline
    file. Columns: source, mode, arch, run, fps, ceiling, fraction."""
    rows = []
    for df in compares:
        d = Path(df["compare_dir"].iloc[0])
        where = os.path.relpath(d, root) if root is not None else str(d)
        roof = load_compare_json(d / "compare.json").get("roofline") or {}
        for arch in ("seed", "impala"):
            if roof.get(f"{arch}_fraction") is None:
                continue
            note = (" (roofline shape differs: " + ", ".join(roof["mismatched"]) + ")"
                    if roof.get("mismatched") else "")
            rows.append({"source": f"{where}{note}", "mode": roof.get("mode", ""),
                         "arch": arch, "run": "mean",
                         "fps": roof[f"{arch}_fraction"] * roof[f"{arch}_ceiling_fps"],
                         "ceiling": roof[f"{arch}_ceiling_fps"],
                         "fraction": roof[f"{arch}_fraction"]})
    for roof in roofs:
        shape = roof.get("config", {})
        for r in runs:
            c = r.config
            if (c.get("env"), c.get("network")) != (roof.get("env"), roof.get("network")):
                continue
            if c.get("network_kwargs", {}) != roof.get("network_kwargs", {}):
                continue
            if any(k in shape and shape[k] != c.get(k)
                   for k in ("actors", "envs_per_actor", "unroll_length", "batch_size")):
                continue
            mode = run_mode(r)
            ceiling = roof["ceilings"].get(f"{r.architecture}_{mode}")
            fps = steady_fps(r.metrics, mode == "train")
            if ceiling and not math.isnan(fps):
                rows.append({"source": f"runs vs {Path(roof['source']).name}", "mode": mode,
                             "arch": r.architecture, "run": r.run_id, "fps": fps,
                             "ceiling": ceiling, "fraction": fps / ceiling})
    return pd.DataFrame(rows, columns=["source", "mode", "arch", "run", "fps", "ceiling",
                                       "fraction"])
