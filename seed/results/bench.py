"""What ``seed compare`` writes: ``compare.csv`` and ``compare.json`` (one compare: SEED,
IMPALA, SEED) and ``sweep.csv`` (a model-size sweep of compares); ``seed roofline``'s files
are :mod:`seed.results.roofline`'s, a SEED run's ``timeline.json``
:mod:`seed.results.timeline`'s. Finders list them under a results root; loaders raise
:class:`~seed.results.files.ResultsFileError` on a bad file."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from seed.results.files import ResultsFileError, check_root, read_csv
from seed.results.run_dirs import benchmark_name, convert_old_columns

#: Columns a compare.csv must have (one row per run of ``seed compare``).
REQUIRED_COMPARE = ["arch", "run", "fps"]
#: Columns a sweep.csv must have (one row per network size of ``seed compare --sweep-network``).
REQUIRED_SWEEP = ["size", "seed_fps", "impala_fps"]


def find_compare_files(root) -> list[Path]:
    """Every ``compare.csv`` under ``root``, sorted."""
    return sorted(p for p in check_root(root).rglob("compare.csv") if p.is_file())


def find_sweep_files(root) -> list[Path]:
    """Every ``sweep.csv`` under ``root``, sorted."""
    return sorted(p for p in check_root(root).rglob("sweep.csv") if p.is_file())


def _benchmark_of(path: Path, root: Path | None) -> str:
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


def load_compare(path, root=None) -> pd.DataFrame:
    """One compare.csv (``seed compare``: one row per run, columns run, arch, fps,
    learner_fps, ...), with columns added: ``source`` (the file), ``compare_dir``,
    ``benchmark`` (the first folder under ``root``), and from the ``compare.json``
    beside it, when readable, ``mode`` (train/serve) and ``fps_ratio`` (SEED/IMPALA).
    Old columns are converted per row by its ``arch`` (:func:`convert_old_columns`)."""
    path = Path(path)
    df = read_csv(path, REQUIRED_COMPARE, ResultsFileError,
                  numeric=("fps", "learner_fps", "cpu_util", "env_frames"))
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
    df = read_csv(path, REQUIRED_SWEEP, ResultsFileError, numeric=(
        "seed_fps", "impala_fps", "fps_ratio", "parameters", "inf_cpu_us_per_sample_b1",
        "inf_cpu_us_per_sample_actor_batch", "inf_cpu_us_per_sample_seed_batch",
        "seed_frames_per_cpu_s", "impala_frames_per_cpu_s", "frames_per_cpu_s_ratio"))
    df["size"] = df["size"].astype(str)
    df["source"] = str(path)
    if "benchmark" not in df.columns:
        df["benchmark"] = _benchmark_of(path, Path(root) if root else None)
    return df


def load_all(root, finder, loader) -> tuple[list, list[tuple[Path, str]]]:
    """``loader`` over every file ``finder(root)`` finds: (loaded, [(file, reason)])."""
    loaded, skipped = [], []
    for p in finder(root):
        try:
            loaded.append(loader(p))
        except ResultsFileError as e:
            skipped.append((p, str(e)))
    return loaded, skipped


def compare_config(compare_dir) -> dict:
    """The config every run of a compare started from: compare.json's ``config``, else the
    ``base_config.json`` beside it; {} when neither can be read."""
    compare_dir = Path(compare_dir)
    config = load_compare_json(compare_dir / "compare.json").get("config")
    if isinstance(config, dict):
        return config
    base = load_compare_json(compare_dir / "base_config.json")  # same reading rules
    return base if isinstance(base, dict) else {}

