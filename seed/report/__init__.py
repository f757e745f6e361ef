"""``seed report`` (``make report``): ``results/REPORT.md`` and the figures it embeds, from the
run directories and compare files under ``results/`` alone.

    seed report [--results DIR] [--out FILE] [--no-play]   (also: python -m seed.report ...)

(``seed.cli`` holds the command's flags, so that no other ``seed`` command loads pandas and
the result types to start.)

Per benchmark: the machines its runs came from (cores, accelerator, package versions, from
each run's ``config.json``), what the engine was built from where that varies (DMLab), then
one module per kind of section:

* :mod:`seed.report.learning`: the reward curves, each run's status (ran its budget, stopped
  early, failed; its segments where resumed), frames and wall time to each threshold per
  architecture (median and min-max over the runs of one setting, whether each crossing held;
  the evaluation envs' too where ``references.yaml`` gives an ``evaluation_window``), the
  goal (per run, or over the median of seeds), the learning diagnostics each run ended with;
* :mod:`seed.report.critic`: where the goal bounds the critic, each run's explained variance
  and dead share by window against the bounds, and the figure of both;
* :mod:`seed.report.strips`: the agent seen playing: frames of one greedy episode of the
  best run with a checkpoint on the machine, played again only when that checkpoint changed
  (``--no-play``: shown as already made, nothing played);
* :mod:`seed.report.throughput`: the throughput of every ``seed compare`` (SEED/IMPALA ratio
  per mode and network, share of the roofline ceiling and of SEED's lock-step bound), what
  each compare's runs measured besides frames/s (cores busy, CPU per frame, action latency,
  batch and inference times), the before/after pairs among the compares, the model-size
  sweeps;
* :mod:`seed.report.timeline`: where SEED's lock-step cycles went in the compares that
  recorded a timeline (``seed compare --timeline``: each SEED run's ``timeline.json``);
* :mod:`seed.report.roofline`: the roofline files (``results/roofline/*.json``: each cost
  measured alone, the ceilings, the agent against bare TensorFlow, SEED's data path and
  lock-step bound);
* :mod:`seed.report.references`: the published references beside them
  (``results/references.yaml``, typed by hand with their sources: the one input that is not
  a run).

Every wall time and frames/s says what the machine's foreign load was beside it
(:mod:`seed.report.load`: a run's mean above :data:`LOADED` is marked loaded; a run from
before the record reads "load not recorded").

Each section's heading is ``<benchmark> <section>`` (``atari_pong_vtrace throughput``), so
its anchor (``REPORT.md#atari_pong_vtrace-throughput``) stays put as runs are added. No
figure of this suite's is typed by hand: ``tests/results/test_report.py`` regenerates the
report and fails when the committed one differs.

A run directory that cannot be read, a compare file or timeline that is damaged, is named with
its reason in one line and left out; a run with no ``summary.json`` is reported as not finished.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

from seed.report import critic, learning, references, roofline, strips, throughput, timeline
from seed.report.learning import WINDOW
from seed.report.load import LOADED
from seed.report.references import REFERENCES, ReportError, load_references
from seed.report.text import FIGURES, machine_text, rel
from seed.report.timeline import TIMELINE_DOCS
from seed.results.compare import Compare, find_compare_files, load_compare
from seed.results.files import ResultsError, check_root, load_all
from seed.results.roofline import find_roofline_files, load_roofline
from seed.results.run_dirs import Run, is_training_run, load_runs
from seed.results.sweep import Sweep, find_sweep_files, load_sweep
from seed.results.timeline import find_timeline_files, load_timeline

__all__ = ["FIGURES", "LOADED", "REFERENCES", "TIMELINE_DOCS", "WINDOW", "ReportError",
           "build", "load_references", "run"]


@dataclasses.dataclass
class _Inputs:
    """Everything the report reads under a results root, and what it left out."""
    refs: dict
    runs: list[Run]
    compares: list[Compare]
    sweeps: list[Sweep]
    roofs: list
    timelines: list
    problems: list[str]


def _load(root: Path) -> _Inputs:
    refs = load_references(root)
    runs, skipped = load_runs(root)
    compares, bad_files = load_all(root, find_compare_files, lambda p: load_compare(p, root))
    sweeps, bad_sweeps = load_all(root, find_sweep_files, lambda p: load_sweep(p, root))
    roofs, bad_roofs = load_all(root, find_roofline_files, load_roofline)
    timelines, bad_timelines = load_all(
        root, lambda _: [p for c in compares
                         for p in find_timeline_files(c.directory, c.seed_runs())],
        load_timeline)
    # The readers' reasons name files by the path they were given: make them relative to the
    # root, so the report reads the same wherever it is built from.
    problems = [f"{rel(path, root)}: {why.replace(str(root) + os.sep, '')}"
                for path, why in skipped + bad_files + bad_sweeps + bad_roofs + bad_timelines]
    return _Inputs(refs, runs, compares, sweeps, roofs, timelines, problems)


def _benchmark(compare_benchmark: str) -> str:
    """A compare's benchmark name, without the ``compare-`` folder prefix of old files."""
    return compare_benchmark.removeprefix("compare-")


def _by_benchmark(inputs: _Inputs) -> dict[str, tuple[list, list]]:
    """Per benchmark: (its training runs, its compares)."""
    by_bench: dict = {}
    for r in inputs.runs:
        if is_training_run(r):
            by_bench.setdefault(r.benchmark, ([], []))[0].append(r)
    for c in inputs.compares:
        by_bench.setdefault(_benchmark(c.benchmark), ([], []))[1].append(c)
    return by_bench


def _machines(bench: str, runs: list[Run], compares: list[Compare],
              all_runs: list[Run]) -> list[str]:
    """The machines of a benchmark's training runs and of its compares' runs (among
    ``all_runs``, every run loaded), each once, in that order; then the engine caveats of
    every run of the benchmark (compares' too: they ran on the same engine builds)."""
    compare_dirs = {c.directory for c in compares}
    seen = []
    for run in runs + [r for r in all_runs if r.path.parent in compare_dirs]:
        text = machine_text(run.machine)
        if text not in seen:
            seen.append(text)
    caveats = sorted({r.engine_caveat for r in all_runs
                      if r.engine_caveat and r.benchmark == bench})
    return ([f"- {m}" for m in seen] or ["- not recorded"]) + [f"- {c}" for c in caveats]


def _benchmark_lines(bench: str, runs: list[Run], compares: list[Compare],
                     inputs: _Inputs, root: Path, out_dir: Path) -> list[str]:
    """One benchmark's part of the report: its machines, then its sections."""
    refs = inputs.refs.get(bench) or {}
    lines = [f"## {bench}", "", "Machines:"] + _machines(bench, runs, compares, inputs.runs)
    lines += [""]
    if runs:
        lines += learning.section(bench, runs, refs, root, out_dir)
        lines += critic.section(bench, runs, refs, root, out_dir)
        lines += strips.section(bench, runs, root, out_dir)
    if compares:
        lines += throughput.throughput_section(bench, compares, root)
        lines += throughput.details_section(bench, compares, root)
        lines += timeline.section(bench, compares, inputs.timelines, root)
        lines += throughput.before_after_section(bench, compares, root)
    sweeps = [s for s in inputs.sweeps if _benchmark(s.benchmark) == bench]
    if sweeps:
        lines += throughput.sweep_section(bench, sweeps, root)
    keys = roofline.roofline_keys(runs, compares)
    roofs = [r for r in inputs.roofs if r.key() in keys]
    if roofs:
        lines += roofline.section(bench, roofs, root)
    return lines + references.section(bench, refs)


def build(root, out, play: bool = True) -> list[str]:
    """Write the report for results root ``root`` to ``out`` (figures into the folder
    :data:`FIGURES` beside it); return the problems found, one line each.

    With ``play``, each benchmark's greedy-episode strip is played again where its best run
    with a checkpoint here calls for it (:mod:`seed.report.strips`); without, the strips
    already made are shown as they are."""
    root, out = Path(root), Path(out)
    check_root(root)
    inputs = _load(root)
    by_bench = _by_benchmark(inputs)
    for bench, (runs, _) in sorted(by_bench.items()):
        if runs:
            strips.update(bench, runs, root, out.parent, play)
    lines = ["# Results report", "",
             f"Generated by `make report` (`seed report`) from the run directories "
             f"and compare files under `{root.name}/`; do not edit, rerun it. Published "
             f"references come from `{root.name}/{REFERENCES}`. Every figure of this suite's "
             "below is read from a committed run; the command that made each run is in "
             f"`{root.name}/README.md`.", ""]
    if inputs.problems:
        lines += ["Left out (unreadable):", ""] + [f"- {p}" for p in inputs.problems] + [""]
    lines += ["Benchmarks: " + ", ".join(f"[{b}](#{b})" for b in sorted(by_bench)), ""]
    for bench in sorted(by_bench):
        lines += _benchmark_lines(bench, *by_bench[bench], inputs, root, out.parent)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines).rstrip() + "\n")
    return inputs.problems


def run(args) -> int:
    """``seed report`` (``args.results``, ``args.out``, ``args.no_play``): build the report;
    1 with one line when it cannot be written."""
    out = Path(args.out) if args.out else Path(args.results) / "REPORT.md"
    try:
        problems = build(args.results, out, play=not args.no_play)
    except (ResultsError, ReportError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for line in problems:
        print(f"left out: {line}", file=sys.stderr)
    print(f"wrote {out}")
    return 0
