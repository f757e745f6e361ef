"""``python -m seed.plots.compare DIR``: DIR/compare.png, the figure of one ``seed compare``.

Left: env frames per second over wall time of each run (SEED, IMPALA, SEED again), from
each run's metrics.csv. Right: the steady-state env frames per second of each run
(compare.csv), with the SEED/IMPALA ratio in the title. ``make demo`` and
``make compare-<benchmark>`` write it.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pandas as pd

from seed.plots import COLORS, PlotError, figure, save
from seed.results.compare import load_compare
from seed.results.files import ResultsError, RunDirError
from seed.results.run_dirs import METRICS, read_metrics


def _metrics(compare_dir: Path, row) -> pd.DataFrame | None:
    """The metrics of one run of the compare (where compare.csv says, else the folder of
    its name beside compare.csv); None when it has none that can be read (a run that
    failed before its first row)."""
    candidates = [compare_dir / str(row["run"]) / METRICS]
    if isinstance(row.get("run_dir"), str) and row["run_dir"]:
        candidates.insert(0, Path(row["run_dir"]) / METRICS)
    for path in candidates:
        if path.exists():
            try:
                return read_metrics(path)
            except RunDirError:
                return None
    return None


def compare_figure(compare_dir):
    """The figure of a ``seed compare`` directory; PlotError when it holds no compare.csv,
    :class:`seed.results.files.ResultsFileError` when that file is damaged."""
    compare_dir = Path(compare_dir)
    if not (compare_dir / "compare.csv").is_file():
        raise PlotError(f"{compare_dir} has no compare.csv: not a seed compare output")
    compare = load_compare(compare_dir / "compare.csv")
    table = compare.runs
    fig, axes = figure(1, 2, size=(11, 4))
    left, right = axes[0]
    for _, row in table.iterrows():
        m = _metrics(compare_dir, row)
        if m is not None:
            left.plot(m["wall_time"], m["fps"], label=row["run"], color=COLORS.get(row["arch"]),
                      linestyle="--" if row["run"] == "seed-2" else "-")
    left.set_xlabel("wall time (s)")
    left.set_ylabel("env frames / s (emulator frames)")
    left.set_title("throughput over time")
    if left.lines:
        left.legend()
    right.bar(table["run"], table["fps"].fillna(0),
              color=[COLORS.get(a, "gray") for a in table["arch"]])
    right.set_ylabel("steady env frames / s")
    ratio = compare.fps_ratio
    right.set_title("steady state" + ("" if math.isnan(ratio) else
                                      f": SEED / IMPALA = {ratio:.2f}x"))
    fig.suptitle(f"seed compare {compare.mode} ({compare_dir})", fontsize=9)
    return fig


def write_compare_figure(compare_dir) -> Path:
    """compare_figure(DIR) written to DIR/compare.png; returns the path."""
    return save(compare_figure(compare_dir), Path(compare_dir) / "compare.png", dpi=100)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m seed.plots.compare DIR", file=sys.stderr)
        return 2
    try:
        print(write_compare_figure(argv[0]))
    except (PlotError, ResultsError) as e:
        print(f"seed.plots.compare: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
