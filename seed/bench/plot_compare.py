"""``python -m seed.bench.plot_compare DIR``: DIR/compare.png from a ``seed compare`` output.

Left: env frames per second over wall time for each run (SEED, IMPALA, SEED
again), from each run's metrics.csv. Right: the steady-state env frames per
second of each run (compare.csv), with the SEED/IMPALA ratio in the title.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

from seed.results import read_metrics

COLORS = {"seed": "tab:blue", "impala": "tab:orange"}


def plot_compare(out_dir: str | Path) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    table = out_dir / "compare.csv"
    if not table.exists():
        raise FileNotFoundError(f"{out_dir} has no compare.csv: not a seed compare output")
    rows = list(csv.DictReader(table.open()))
    summary_path = out_dir / "compare.json"
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    ratio = summary.get("fps_ratio")
    mode = summary.get("mode", "")

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for r in rows:
        metrics = Path(r["run_dir"]) / "metrics.csv"
        if not metrics.exists():
            metrics = out_dir / Path(r["run_dir"]).name / "metrics.csv"
        if metrics.exists():
            m = read_metrics(metrics)
            left.plot(m["wall_time"], m["fps"], label=r["run"],
                      color=COLORS.get(r["arch"]), linestyle="-" if r["run"] != "seed-2" else "--")
    left.set_xlabel("wall time (s)")
    left.set_ylabel("env frames / s (emulator frames)")
    left.set_title("throughput over time")
    left.legend()
    names = [r["run"] for r in rows]
    fps = [float(r["fps"] or 0) for r in rows]
    right.bar(names, fps, color=[COLORS.get(r["arch"]) for r in rows])
    right.set_ylabel("steady env frames / s")
    title = "steady state"
    if ratio:
        title += f": SEED / IMPALA = {ratio:.2f}x"
    right.set_title(title)
    fig.suptitle(f"seed compare {mode} ({out_dir})", fontsize=9)
    fig.tight_layout()
    path = out_dir / "compare.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m seed.bench.plot_compare DIR", file=sys.stderr)
        return 2
    try:
        print(plot_compare(argv[0]))
    except (FileNotFoundError, ValueError, KeyError) as e:
        print(f"plot_compare: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
