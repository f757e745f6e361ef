"""``compare.csv`` and ``compare.json``: one ``seed compare`` (SEED, IMPALA, SEED), as a type.

:mod:`seed.bench.compare` writes a row per run of the :data:`RUN_COLUMNS`
(:func:`write_runs`) and, beside it, ``compare.json`` (the mode, the ratios, the cores, the
roofline fractions, the config every run started from, the runs' rows again). The report,
the tables and the figures read both back with :func:`load_compare`, once: old column names
are converted per run, and what an older compare lacks is absent (no compare.json: the ratio
computed from the rows; no config in it: ``base_config.json``). A :class:`Compare` gives the
rows it contributes to the report's throughput tables (:meth:`Compare.ratio_row`,
:meth:`Compare.details_row`).
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pandas as pd

from seed.results.files import ResultsFileError, check_root, read_csv, write_rows
from seed.results.run_dirs import benchmark_name, convert_old_columns

#: compare.csv's columns, one row per run, as seed compare writes them.
RUN_COLUMNS = ["run", "arch", "rc", "steady", "warmup_s", "window_s", "fps", "learner_fps",
               "inference_batch_size", "learner_inference_ms", "actor_inference_ms",
               "action_latency_p50_ms", "action_latency_p99_ms",
               "parameter_pull_ms", "cpu_util", "learner_cpu_util", "cpu_util_run",
               "frames_per_cpu_s", "env_frames",
               "wall_s", "run_dir"]
#: Columns a compare.csv must have.
REQUIRED = ["arch", "run", "fps"]
_NAN = float("nan")


@dataclasses.dataclass
class Compare:
    """One compare: its runs (compare.csv, one row per run, ``arch`` and ``run`` as text)
    and what compare.json adds (absent in older compares: ``mode`` "", the ratios NaN,
    ``roofline`` and ``config`` {})."""

    runs: pd.DataFrame
    directory: Path
    benchmark: str
    mode: str = ""
    fps_ratio: float = _NAN  # mean SEED fps / IMPALA fps
    cpu_ratio: float = _NAN  # the same per CPU-second of the process tree
    cores: int | None = None
    roofline: dict = dataclasses.field(default_factory=dict)  # what it read of the ceilings
    config: dict = dataclasses.field(default_factory=dict)  # what every run started from
    source: Path | None = None

    def seed_runs(self) -> list[str]:
        return self.runs.loc[self.runs["arch"] == "seed", "run"].tolist()

    def fps(self, arch: str) -> list[float]:
        return [float(x) for x in self.runs.loc[self.runs["arch"] == arch, "fps"]]

    def mean(self, arch: str, column: str) -> float:
        """The mean of ``column`` over the runs of ``arch`` (NaN where none has it)."""
        if column not in self.runs.columns:
            return _NAN
        values = pd.to_numeric(self.runs.loc[self.runs["arch"] == arch, column],
                               errors="coerce").dropna()
        return float(values.mean()) if len(values) else _NAN

    def details_row(self) -> dict:
        """What its runs measured besides frames/s (the columns of
        :func:`seed.results.tables.compare_details`)."""
        seed_fps = self.mean("seed", "fps")
        seed_fpc, impala_fpc = (self.mean(a, "frames_per_cpu_s") for a in ("seed", "impala"))
        learner, cores, roof = self.mean("seed", "learner_cpu_util"), self.cores, self.roofline
        return {
            "compare_dir": str(self.directory), "mode": self.mode or "?",
            "seed_run_fps": self.fps("seed"),
            "seed_cores_busy": self.mean("seed", "cpu_util"),
            "impala_cores_busy": self.mean("impala", "cpu_util"),
            "seed_cpu_us": 1e6 / seed_fpc if seed_fpc else _NAN,
            "impala_cpu_us": 1e6 / impala_fpc if impala_fpc else _NAN,
            "seed_learner_cpu_us": (1e6 * learner * cores / seed_fps
                                    if cores and seed_fps and not math.isnan(learner) else _NAN),
            "seed_frames_per_cpu_s": seed_fpc, "impala_frames_per_cpu_s": impala_fpc,
            "seed_latency_p50_ms": self.mean("seed", "action_latency_p50_ms"),
            "seed_latency_p99_ms": self.mean("seed", "action_latency_p99_ms"),
            "seed_batch": self.mean("seed", "inference_batch_size"),
            "seed_batch_ms": self.mean("seed", "learner_inference_ms"),
            "impala_inference_ms": self.mean("impala", "actor_inference_ms"),
            "impala_pull_ms": self.mean("impala", "parameter_pull_ms"),
            "ceiling_mismatch": ", ".join(roof.get("mismatched") or []),
            **{k: float(roof.get(k) or _NAN) for k in (
                "seed_lockstep_fps", "seed_lockstep_fraction", "seed_turns_fps",
                "seed_turns_fraction")},
        }


def write_runs(path: Path, rows: list[dict]) -> None:
    """compare.csv: ``rows`` (one per run) in the :data:`RUN_COLUMNS`."""
    write_rows(path, rows, RUN_COLUMNS)


def find_compare_files(root) -> list[Path]:
    """Every ``compare.csv`` under ``root``, sorted."""
    return sorted(p for p in check_root(root).rglob("compare.csv") if p.is_file())


def load_compare_json(path) -> dict:
    """A compare.json (or base_config.json) as a dict ({} when it is absent or unreadable:
    it only adds detail)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def compare_config(compare_dir) -> dict:
    """The config every run of a compare started from: compare.json's ``config``, else the
    ``base_config.json`` beside it; {} when neither can be read."""
    compare_dir = Path(compare_dir)
    config = load_compare_json(compare_dir / "compare.json").get("config")
    if isinstance(config, dict):
        return config
    return load_compare_json(compare_dir / "base_config.json")


def benchmark_of(path: Path, root: Path | None) -> str:
    """The benchmark a compare/sweep file belongs to: the ``benchmark`` (else the env) of
    the ``base_config.json`` that ``seed compare`` writes beside it (a sweep: in its
    first size's folder), else its first folder under the root."""
    candidates = [path.parent / "base_config.json"]
    candidates += sorted(path.parent.glob("*/base_config.json"))
    for cfg in candidates:
        values = load_compare_json(cfg)  # same reading rules
        if values.get("benchmark") or values.get("env"):
            return benchmark_name(values)
    if root is not None:
        try:
            parts = path.parent.relative_to(root).parts
            if parts:
                return parts[0]
        except ValueError:
            pass
    return path.parent.name


def load_compare(path, root=None) -> Compare:
    """One compare.csv and the compare.json beside it. Old columns are converted per row by
    its ``arch`` (:func:`~seed.results.run_dirs.convert_old_columns`); the benchmark is the
    file's ``benchmark`` column, else :func:`benchmark_of`; without compare.json's
    ``fps_ratio``, it is computed as seed compare does (mean SEED fps / mean IMPALA fps)."""
    path = Path(path)
    df = read_csv(path, REQUIRED, ResultsFileError,
                  numeric=("fps", "learner_fps", "cpu_util", "env_frames"))
    df["arch"] = df["arch"].astype(str)
    df = convert_old_columns(df, df["arch"])
    df["run"] = df["run"].astype(str)
    benchmark = (str(df["benchmark"].iloc[0]) if "benchmark" in df.columns
                 else benchmark_of(path, Path(root) if root else None))
    meta = load_compare_json(path.parent / "compare.json")
    ratio = meta.get("fps_ratio")
    if ratio is None:
        s_fps = df.loc[df["arch"] == "seed", "fps"].mean()
        i_fps = df.loc[df["arch"] == "impala", "fps"].mean()
        ratio = s_fps / i_fps if i_fps and not math.isnan(i_fps) else _NAN
    cpu = meta.get("frames_per_cpu_s_ratio")
    return Compare(runs=df, directory=path.parent, benchmark=benchmark,
                   mode=meta.get("mode", ""), fps_ratio=float(ratio),
                   cpu_ratio=_NAN if cpu is None else float(cpu), cores=meta.get("cores"),
                   roofline=meta.get("roofline") or {}, config=compare_config(path.parent),
                   source=path)
