"""``make report``: ``results/REPORT.md`` and the figures it embeds, from the run directories
and compare files under ``results/`` alone.

    python -m seed.report [--results DIR] [--out FILE]

Per benchmark: the machines its runs came from (cores, accelerator, package versions, from
each run's ``config.json``), what the engine was built from where that varies (DMLab), the
reward curves, frames and wall time to each threshold per architecture (median and min-max
over the runs of one setting), the throughput of every ``seed compare`` (SEED/IMPALA ratio
per mode and network, share of the roofline ceiling), and the published references beside
them (``results/references.yaml``, typed by hand with their sources: the one input that is
not a run). No figure of this suite's is typed by hand: ``tests/test_report.py`` regenerates
the report and fails when the committed one differs.

A run directory that cannot be read, a compare file that is damaged, is named with its reason
in one line and left out; a run with no ``summary.json`` is reported as not finished.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

import pandas as pd
import yaml

from seed.results.bench import (
    find_compare_files,
    load_all,
    load_compare,
    load_compare_json,
)
from seed.results.curves import final_return, first_reaching
from seed.results.files import ResultsError, check_root
from seed.results.run_dirs import (
    Run,
    is_training_run,
    learning_settings,
    load_runs,
    training_episodes,
)
from seed.results.tables import compare_ratios

REFERENCES = "references.yaml"
FIGURES = "report"  # folder beside REPORT.md
WINDOW = 100  # episodes in the mean that must reach a threshold, unless references.yaml says


class ReportError(ValueError):
    """The report cannot be written; the message is one line."""


# --------------------------------------------------------------------------- inputs

def load_references(root: Path) -> dict:
    """``references.yaml``: per benchmark, ``thresholds`` (returns), optionally ``window``
    (episodes in the mean, default :data:`WINDOW`) and ``references`` (each with ``what``,
    ``value``, ``unit``, ``source``); {} when absent."""
    path = root / REFERENCES
    if not path.exists():
        return {}
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as e:
        raise ReportError(f"{path}: not valid YAML ({str(e).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise ReportError(f"{path}: expected a mapping of benchmark -> entries")
    return data


def _benchmark(compare_benchmark: str) -> str:
    """A compare's benchmark name, without the ``compare-`` folder prefix of old files."""
    return compare_benchmark.removeprefix("compare-")


def _rel(path, root: Path) -> str:
    return os.path.relpath(path, root)


# --------------------------------------------------------------------------- text

def machine_text(machine: dict, device: str | None = None) -> str:
    """``2 cores, x86_64, no GPU; python 3.11.7, tensorflow-cpu 2.21.0, ...``."""
    accel = machine.get("accelerator") or device or "CPU"
    parts = [f"{machine.get('cpu_count', '?')} cores", str(machine.get("processor", "?")),
             "no GPU" if accel == "CPU" else accel]
    packages = machine.get("packages") or {}
    versions = [f"python {machine['python']}"] if machine.get("python") else []
    versions += [f"{k} {v}" for k, v in sorted(packages.items())]
    return ", ".join(parts) + ("; " + ", ".join(versions) if versions else "")


def _num(x, fmt: str = ",.0f") -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def _frames(x) -> str:
    if x is None:
        return "-"
    return f"{x / 1e6:.2f}M" if x >= 1e6 else f"{x:,.0f}"


def _span(values: list, fmt) -> str:
    """``median (min-max)`` of the values that exist; ``-`` for none."""
    present = [v for v in values if v is not None]
    if not present:
        return "-"
    s = pd.Series(present)
    text = fmt(float(s.median()))
    return text if len(present) == 1 else f"{text} ({fmt(float(s.min()))}-{fmt(float(s.max()))})"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return (["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
            + ["| " + " | ".join(map(str, r)) + " |" for r in rows])


# --------------------------------------------------------------------------- sections

def run_status(run: Run) -> str:
    if run.summary is None:
        return "not finished (no summary.json): in progress or stopped"
    return f"finished (stopped by {run.summary.get('stopped_by', '?')})"


def threshold_rows(runs: list[Run], thresholds: list[float],
                   window: int = WINDOW) -> list[list[str]]:
    """One row per architecture and learning setting: per threshold, frames and wall time to
    a ``window``-episode mean of training returns reaching it, median (min-max) over the
    runs that reached it, and how many did."""
    groups: dict = {}
    for run in runs:
        groups.setdefault((run.architecture, learning_settings(run.config)), []).append(run)
    rows = []
    for n, ((arch, _), members) in enumerate(sorted(groups.items(), key=lambda kv: kv[0])):
        name = arch if sum(k[0] == arch for k in groups) == 1 else \
            f"{arch} ({', '.join(r.run_id for r in members)})"
        row = [name, str(len(members))]
        for t in thresholds:
            hits = [first_reaching(training_episodes(r.episodes), t, window)
                    for r in members]
            reached = [h for h in hits if h is not None]
            row.append(f"{_span([h['env_frames'] for h in reached], lambda v: _frames(v))}; "
                       f"{_span([h['wall_time'] for h in reached], lambda v: f'{v:,.0f} s')} "
                       f"[{len(reached)}/{len(members)}]")
        rows.append(row)
    return rows


def _learning_section(bench: str, runs: list[Run], refs: dict, root: Path,
                      out_dir: Path) -> list[str]:
    """Run paths are written relative to the results root, figure links to the report."""
    from seed.plots import PlotError, file_name, save
    from seed.plots.learning import reward_figure
    out = [f"### Learning ({len(runs)} run{'s' if len(runs) != 1 else ''})", ""]
    try:
        path = save(reward_figure(runs, title=bench),
                    out_dir / FIGURES / f"{file_name(bench)}_reward.png")
        out += [f"![{bench} reward curves]({_rel(path, out_dir)})", ""]
    except PlotError as e:
        out += [f"No reward curve: {e}.", ""]
    out += _table(["run", "arch", "seed", "env frames", "wall time", "episodes",
                   "last 100 mean", "status"],
                  [[_rel(r.path, root), r.architecture, _num(r.seed, "d"),
                    _frames(int(r.metrics["env_frames"].max())),
                    f"{float(r.metrics['wall_time'].max()):,.0f} s", str(len(r.episodes)),
                    _num(final_return(training_episodes(r.episodes)), ".2f"), run_status(r)]
                   for r in runs])
    thresholds, window = refs.get("thresholds") or [], int(refs.get("window", WINDOW))
    if thresholds:
        out += ["", f"Frames and wall time until the mean of {window} consecutive training "
                "episodes first reaches each return: median (min-max) over the runs of one "
                "setting that reached it; [reached/runs].", ""]
        out += _table(["architecture", "runs", *[f"return {t:g}" for t in thresholds]],
                      threshold_rows(runs, thresholds, window))
    return out + [""]


def _throughput_section(compares: list[pd.DataFrame], root: Path) -> list[str]:
    ratios = compare_ratios(compares)
    shares = {}
    for df in compares:
        roof = load_compare_json(Path(df["compare_dir"].iloc[0]) / "compare.json").get(
            "roofline") or {}
        shares[df["compare_dir"].iloc[0]] = roof
    rows = []
    for _, r in ratios.iterrows():
        roof = shares.get(r["compare_dir"], {})
        share = " / ".join(_num(roof.get(f"{a}_fraction"), ".0%") for a in ("seed", "impala"))
        rows.append([_rel(r["compare_dir"], root), r["mode"], r["network"],
                     r["options"] or "-", _num(r["seed_fps"]), _num(r["impala_fps"]),
                     _num(r["fps_ratio"], ".2f"), _num(r["cpu_ratio"], ".2f"),
                     share if roof else "-"])
    return ([f"### Throughput ({len(rows)} compare{'s' if len(rows) != 1 else ''})", "",
             "Steady-state frames/s (SEED: mean of its runs); ratio = SEED/IMPALA frames/s, "
             "per CPU-s = the same per CPU-second of the process tree; ceiling share = "
             "frames/s over this machine's roofline ceiling for that mode (SEED / IMPALA).", ""]
            + _table(["compare", "mode", "network", "options", "SEED fps", "IMPALA fps",
                      "ratio", "per CPU-s", "ceiling share"], rows) + [""])


def _references_section(refs: dict) -> list[str]:
    entries = refs.get("references") or []
    if not entries:
        return ["### Published references", "", "None recorded for this benchmark.", ""]
    return (["### Published references", ""]
            + _table(["what", "value", "unit", "source"],
                     [[e.get("what", ""), e.get("value", ""), e.get("unit", ""),
                       e.get("source", "")] for e in entries]) + [""])


def _machines(runs: list[Run], compares: list[pd.DataFrame], all_runs: list[Run]) -> list[str]:
    """The machines of a benchmark's training runs and of its compares' runs (among
    ``all_runs``, every run loaded), each once, in that order."""
    compare_dirs = {Path(df["compare_dir"].iloc[0]) for df in compares}
    seen = []
    for run in runs + [r for r in all_runs if r.path.parent in compare_dirs]:
        text = machine_text(run.machine)
        if text not in seen:
            seen.append(text)
    return [f"- {m}" for m in seen] or ["- not recorded"]


# --------------------------------------------------------------------------- the report

def build(root, out) -> list[str]:
    """Write the report for results root ``root`` to ``out`` (figures into the folder
    :data:`FIGURES` beside it); return the problems found, one line each."""
    root, out = Path(root), Path(out)
    check_root(root)
    refs = load_references(root)
    runs, skipped = load_runs(root)
    compares, bad_files = load_all(root, find_compare_files, lambda p: load_compare(p, root))
    # The readers' reasons name files by the path they were given: make them relative to the
    # root, so the report reads the same wherever it is built from.
    problems = [f"{_rel(path, root)}: {why.replace(str(root) + os.sep, '')}"
                for path, why in skipped + bad_files]

    training = [r for r in runs if is_training_run(r)]
    caveats: dict = {}  # from every run, compares' too: they ran on the same engine builds
    for r in runs:
        if r.engine_caveat:
            caveats.setdefault(r.benchmark, set()).add(r.engine_caveat)
    by_bench: dict = {}
    for r in training:
        by_bench.setdefault(r.benchmark, ([], []))[0].append(r)
    for df in compares:
        by_bench.setdefault(_benchmark(str(df["benchmark"].iloc[0])), ([], []))[1].append(df)

    lines = ["# Results report", "",
             f"Generated by `make report` (`python -m seed.report`) from the run directories "
             f"and compare files under `{root.name}/`; do not edit, rerun it. Published "
             f"references come from `{root.name}/{REFERENCES}`. Every figure of this suite's "
             "below is read from a committed run; the command that made each run is in "
             f"`{root.name}/README.md`.", ""]
    if problems:
        lines += ["Left out (unreadable):", ""] + [f"- {p}" for p in problems] + [""]
    lines += ["Benchmarks: " + ", ".join(f"[{b}](#{b})" for b in sorted(by_bench)), ""]
    for bench in sorted(by_bench):
        bench_runs, bench_compares = by_bench[bench]
        bench_refs = refs.get(bench) or {}
        lines += [f"## {bench}", "", "Machines:"] + _machines(bench_runs, bench_compares, runs)
        lines += [f"- {c}" for c in sorted(caveats.get(bench, ()))] + [""]
        if bench_runs:
            lines += _learning_section(bench, bench_runs, bench_refs, root, out.parent)
        if bench_compares:
            lines += _throughput_section(bench_compares, root)
        lines += _references_section(bench_refs)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines).rstrip() + "\n")
    return problems


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m seed.report", description=__doc__.splitlines()[0])
    p.add_argument("--results", default="results", help="results root (default: results)")
    p.add_argument("--out", default=None, help="report file (default: RESULTS/REPORT.md)")
    args = p.parse_args(argv)
    out = Path(args.out) if args.out else Path(args.results) / "REPORT.md"
    try:
        problems = build(args.results, out)
    except (ResultsError, ReportError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for line in problems:
        print(f"left out: {line}", file=sys.stderr)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
