"""``sweep.csv``: a model-size sweep of compares (``seed compare --sweep-network``), as a type.

:mod:`seed.bench.sweep` writes one row per network size of the :data:`SIZE_COLUMNS`
(:func:`write_sizes`); the report and the figures read it back with :func:`load_sweep`, and
the report's table is :meth:`Sweep.rows`.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pandas as pd

from seed.results.compare import benchmark_of
from seed.results.files import ResultsFileError, check_root, read_csv, write_rows
from seed.results.text import network_text, num

#: sweep.csv's columns, one row per network size, as seed compare --sweep-network writes them.
SIZE_COLUMNS = ["size", "network", "network_kwargs", "parameters",
                "inf_cpu_us_per_sample_b1", "inf_cpu_us_per_sample_actor_batch",
                "inf_cpu_us_per_sample_seed_batch", "seed_fps", "impala_fps", "fps_ratio",
                "seed_drift", "seed_cpu_util", "impala_cpu_util", "seed_frames_per_cpu_s",
                "impala_frames_per_cpu_s", "frames_per_cpu_s_ratio", "compare_dir"]
#: Columns a sweep.csv must have.
REQUIRED = ["size", "seed_fps", "impala_fps"]
_NUMERIC = ("seed_fps", "impala_fps", "fps_ratio", "parameters", "inf_cpu_us_per_sample_b1",
            "inf_cpu_us_per_sample_actor_batch", "inf_cpu_us_per_sample_seed_batch",
            "seed_frames_per_cpu_s", "impala_frames_per_cpu_s", "frames_per_cpu_s_ratio")


@dataclasses.dataclass
class Sweep:
    """One sweep: its sizes (sweep.csv, one row per size, ``size`` as text), the benchmark
    it belongs to and the file."""

    sizes: pd.DataFrame
    benchmark: str
    source: Path

    def size_names(self) -> list[str]:
        return self.sizes["size"].tolist()

    def rows(self) -> list[list[str]]:
        """The report's table: per size, the network, its parameters, inference CPU per
        sample (batch 1 / an IMPALA actor's / SEED's), SEED and IMPALA frames/s, their
        ratio and the same per CPU-second."""
        return [[r["size"],
                 network_text(r.get("network", "?"), _kwargs(r.get("network_kwargs"))),
                 num(r.get("parameters")),
                 " / ".join(num(r.get(f"inf_cpu_us_per_sample_{k}"))
                            for k in ("b1", "actor_batch", "seed_batch")),
                 num(r.get("seed_fps")), num(r.get("impala_fps")),
                 num(r.get("fps_ratio"), ".2f"), num(r.get("frames_per_cpu_s_ratio"), ".2f")]
                for _, r in self.sizes.iterrows()]


def _kwargs(text) -> dict:
    """A size's ``network_kwargs`` (JSON text); {} where it is absent or not JSON."""
    try:
        value = json.loads(text) if isinstance(text, str) else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def write_sizes(path: Path, rows: list[dict]) -> None:
    """sweep.csv: ``rows`` (one per size) in the :data:`SIZE_COLUMNS`."""
    write_rows(path, rows, SIZE_COLUMNS)


def find_sweep_files(root) -> list[Path]:
    """Every ``sweep.csv`` under ``root``, sorted."""
    return sorted(p for p in check_root(root).rglob("sweep.csv") if p.is_file())


def load_sweep(path, root=None) -> Sweep:
    """One sweep.csv, its benchmark found as a compare's is
    (:func:`seed.results.compare.benchmark_of`)."""
    path = Path(path)
    df = read_csv(path, REQUIRED, ResultsFileError, numeric=_NUMERIC)
    df["size"] = df["size"].astype(str)
    benchmark = (str(df["benchmark"].iloc[0]) if "benchmark" in df.columns
                 else benchmark_of(path, Path(root) if root else None))
    return Sweep(df, benchmark, path)
