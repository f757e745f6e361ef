"""Run directories: finding them under a results root and reading one into a :class:`Run`.

A *run directory* is what ``seed train`` writes (docs/design.md, "What every run writes"):
``config.json``, ``metrics.csv``, ``episodes.csv`` (plus ``summary.json``,
``checkpoint.npz`` and TensorBoard files, which are optional here). Usually it lies at
``results/<benchmark>/<architecture>/<run_id>/``, but any directory holding a
``config.json`` is one.

:func:`find_runs` lists run directories under a root; :func:`load_run` reads one (config,
architecture, benchmark, metrics and episodes as pandas DataFrames), raising
:class:`~seed.results.files.RunDirError` with one line naming the file and what is wrong
when the directory is partial or damaged; :func:`load_runs` loads all of them and returns
the ones it had to skip, with the reason. A run without ``summary.json`` loads, with
``summary`` None: it is in progress, or was stopped.

Older runs' columns whose meaning depended on the architecture (``latency_p50_ms``,
``latency_p99_ms``, ``inference_ms``) are renamed on reading to what they measured, by the
one table :data:`OLD_COLUMNS` (:func:`convert_old_columns`), in metrics.csv and compare.csv
alike.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pandas as pd

from seed.metrics.writer import EPISODE_COLUMNS, LEARNING_COLUMNS, METRICS_COLUMNS
from seed.results.files import RunDirError, check_root, read_csv, read_json

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

# Files whose presence marks a directory as (part of) a run.
_RUN_MARKERS = (CONFIG, METRICS, EPISODES)
PROBES = "probes"  # a folder of diagnostic runs that find_runs leaves out

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

#: Config fields that say where, how long, with which random seed or how watched a run goes,
#: not what it learns per frame.
NOT_LEARNING = frozenset({
    "logdir", "progress", "frames", "seconds", "arch", "benchmark", "seed", "log_interval_s",
    "checkpoint_interval_s", "stream_idle_timeout_s", "tls_cert_file", "tls_key_file",
    "tls_ca_file", "auth_token_file", "timeline"})


def learning_settings(config: dict) -> str:
    """A run's settings that change what it learns per frame, as one comparable string.

    Read as :func:`seed.config.saved_fields` reads it, in either saved form: fields a run
    did not record take today's defaults (a field is added with the default that keeps the
    old behaviour), and another agent's are dropped. :data:`NOT_LEARNING` fields are left
    out, so repeats of one setting with other seeds or budgets compare equal. A config this
    version cannot read compares as written.
    """
    from seed.config import ConfigError, saved_fields
    try:
        full = saved_fields(config)
    except (ConfigError, TypeError):
        full = dict(config)
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


def find_runs(root, include_partial: bool = False) -> list[Path]:
    """Run directories under ``root`` (``root`` itself included), sorted.

    A run directory holds a ``config.json``. With ``include_partial`` a directory that
    holds only a ``metrics.csv`` or ``episodes.csv`` counts too (a run whose
    ``config.json`` was lost), so that :func:`load_runs` can say why it skips it.
    TensorBoard folders (``tb/``) are not searched, nor probe folders (``probes/``: short
    diagnostic runs of a changed config, such as ``scripts/dmlab_probes.py`` makes and
    tabulates; they are no run of the benchmark's config and stay out of its tables).
    """
    root = check_root(root)
    markers = _RUN_MARKERS if include_partial else (CONFIG,)
    found = set()
    for marker in markers:
        for f in root.rglob(marker):
            parts = f.relative_to(root).parts[:-1]
            if f.is_file() and "tb" not in parts and PROBES not in parts:
                found.add(f.parent)
    return sorted(found)


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
        data = load_config(path.parent)
    except RunDirError:
        return None
    arch = data.get("architecture") or data["config"].get("arch")
    return arch if isinstance(arch, str) and arch else None


def read_metrics(path, arch: str | None = None) -> pd.DataFrame:
    """A run's metrics.csv; RunDirError (one line) when it is missing, empty or damaged
    (a row being written while it is read shows as a truncated row).

    Old columns are converted by :func:`convert_old_columns` for the run's architecture:
    ``arch``, else the one the ``config.json`` beside the file names."""
    path = Path(path)
    df = read_csv(path, REQUIRED_METRICS, RunDirError,
                  optional=METRICS_COLUMNS + LEARNING_COLUMNS)
    return convert_old_columns(df, arch or _architecture_beside(path))


def read_episodes(path) -> pd.DataFrame:
    """A run's episodes.csv (it may have no rows yet); RunDirError (one line) when it is
    missing, empty or damaged."""
    return read_csv(path, REQUIRED_EPISODES, RunDirError, optional=EPISODE_COLUMNS,
                    allow_no_rows=True)


def load_config(run_dir) -> dict:
    """The whole config.json of a run, checked to hold a ``config`` mapping."""
    path = Path(run_dir) / CONFIG
    data = read_json(path, RunDirError, "not a run directory, or the run never started")
    if not isinstance(data, dict) or not isinstance(data.get("config"), dict):
        raise RunDirError(f"{path}: has no 'config' mapping (not written by seed train)")
    return data


def benchmark_name(config: dict) -> str:
    """The benchmark a config names: its ``benchmark`` (an experiments/ config), else its
    env with ``:`` as ``_`` (``toy_catch``)."""
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
        frames_per_step = int(data.get("frames_per_step", 1))
    except (TypeError, ValueError):
        raise RunDirError(f"{run_dir / CONFIG}: frames_per_step "
                          f"{data.get('frames_per_step')!r} is not an integer") from None
    summary = None
    if (run_dir / SUMMARY).exists():
        summary = read_json(run_dir / SUMMARY, RunDirError)
    return Run(path=run_dir, config=config, architecture=arch,
               benchmark=benchmark_name(config), env=str(config.get("env", "")),
               frames_per_step=frames_per_step, machine=data.get("machine") or {},
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


def training_episodes(episodes: pd.DataFrame) -> pd.DataFrame:
    """The episodes of envs that act with the training policy (``evaluation`` not 1; a run
    written before the column existed has only those)."""
    return episodes[episodes["evaluation"].fillna(0) != 1]


def evaluation_episodes(episodes: pd.DataFrame) -> pd.DataFrame:
    """The episodes of evaluation envs (R2D2's greedy envs that are never trained on)."""
    return episodes[episodes["evaluation"].fillna(0) == 1]

