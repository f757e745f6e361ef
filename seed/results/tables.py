"""The tables the figures and the report are drawn from: one row per run
(:func:`runs_table`), final returns per benchmark and architecture, the SEED/IMPALA ratios of
every compare (:func:`compare_ratios`), each architecture's share of this machine's
roofline ceiling (:func:`roofline_table`), where SEED's lock-step cycles went in the
compares that recorded a timeline (:func:`lockstep_cycles`) and the foreign load beside a
run (:func:`foreign_load`) or each run of a compare (:func:`compare_loads`)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pandas as pd

from seed.results.compare import Compare
from seed.results.curves import final_return
from seed.results.files import ResultsFileError, RunDirError
from seed.results.run_dirs import (
    METRICS,
    Run,
    evaluation_episodes,
    is_training_run,
    load_config,
    read_metrics,
    run_mode,
    training_episodes,
)
from seed.results.roofline import Roofline
from seed.results.steady import steady_fps
from seed.results.sweep import load_sweep
from seed.results.text import network_text
from seed.results.timeline import CYCLE_GROUPS, Timeline


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


#: The options (off by default) a compare's runs may set, by which it is told apart on the
#: ratio figure and in the report's throughput table: the data path's (README), and whether
#: idle cores polled (``cpu_idle_poll``: it changes the machine the runs were timed on, so a
#: compare with it is not a repeat of one without).
COMPARE_OPTIONS = ("actor_splits", "jit_inference", "inference_batch_size", "cpu_idle_poll")


def options_text(config: dict) -> str:
    """The :data:`COMPARE_OPTIONS` a saved config sets otherwise than by default ("" for
    none)."""
    from seed.config import Config, ConfigError, field_values, saved_fields
    defaults = field_values(Config())
    try:
        values = saved_fields(config)
    except (ConfigError, TypeError):
        values = config
    out = []
    for name in COMPARE_OPTIONS:
        value, default = values.get(name, defaults[name]), defaults[name]
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
        sizes = load_sweep(sweep).size_names()
    except ResultsFileError:
        sizes = []
    return sizes.index(compare_dir.name) if compare_dir.name in sizes else len(sizes)


def compare_ratios(compares: list[Compare]) -> pd.DataFrame:
    """One row per compare: the SEED/IMPALA ratios of one measurement, and the group of
    repeats it belongs to.

    Columns: benchmark, mode, network (its name; inside a sweep, where sizes differ, with
    its keyword arguments as :func:`network_text` writes them), sweep_size (the size's
    folder inside a sweep, "" outside one), options (:func:`options_text`),
    fps_ratio, cpu_ratio (frames per CPU-second, SEED/IMPALA; NaN when not measured),
    seed_fps (mean of the SEED runs), impala_fps, compare_dir, and group ("benchmark ·
    mode · network", or "benchmark · mode · sweep <size> (network)"): compares of one
    group are repeats of one measurement. Rows are in group order (benchmark, mode,
    outside a sweep before a sweep's sizes in its order), then by folder."""
    rows = []
    for c in compares:
        d, config = c.directory, c.config
        position = _sweep_position(d)
        size = d.name if position is not None else ""
        network = network_text(config.get("network", ""), config.get("network_kwargs")
                               if size else None)
        mode = c.mode or "?"
        rows.append({
            "benchmark": c.benchmark, "mode": mode, "network": network, "sweep_size": size,
            "options": options_text(config), "fps_ratio": c.fps_ratio,
            "cpu_ratio": c.cpu_ratio, "seed_fps": c.mean("seed", "fps"),
            "impala_fps": c.mean("impala", "fps"),
            "compare_dir": str(d),
            "group": " · ".join([c.benchmark, mode,
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


def roofline_table(runs: list[Run], compares: list[Compare], roofs: list[Roofline],
                   root=None) -> pd.DataFrame:
    """Each architecture's steady frames/s as a fraction of this machine's ceiling
    (``seed roofline``: cores / CPU seconds per frame of simulation + inference
    [+ training]), from two sources: the fractions ``seed compare`` stored in compare.json
    (one row per architecture and compare, ``source`` the compare's folder, ``run``
    "mean"), and every run whose env,
    network and shape (actors, envs per actor, unroll length, batch size) match a roofline
    file. Columns: source, mode, arch, run, fps, ceiling, fraction."""
    rows = []
    for c in compares:
        where = os.path.relpath(c.directory, root) if root is not None else str(c.directory)
        roof = c.roofline
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
        shape = roof.config
        for r in runs:
            c = r.config
            if (c.get("env"), c.get("network")) != (roof.env, roof.network):
                continue
            if c.get("network_kwargs", {}) != roof.network_kwargs:
                continue
            if any(k in shape and shape[k] != c.get(k)
                   for k in ("actors", "envs_per_actor", "unroll_length", "batch_size")):
                continue
            mode = run_mode(r)
            ceiling = roof.ceiling(r.architecture, mode)
            fps = steady_fps(r.metrics, mode == "train")
            if ceiling and not math.isnan(fps):
                rows.append({"source": f"runs vs {Path(roof.source).name}", "mode": mode,
                             "arch": r.architecture, "run": r.run_id, "fps": fps,
                             "ceiling": ceiling, "fraction": fps / ceiling})
    return pd.DataFrame(rows, columns=["source", "mode", "arch", "run", "fps", "ceiling",
                                       "fraction"])


#: compare_details's columns (:meth:`seed.results.compare.Compare.details_row`).
DETAILS_COLUMNS = [
    "compare_dir", "mode", "seed_run_fps", "seed_cores_busy", "impala_cores_busy",
    "seed_cpu_us", "impala_cpu_us", "seed_learner_cpu_us", "seed_frames_per_cpu_s",
    "impala_frames_per_cpu_s", "seed_latency_p50_ms", "seed_latency_p99_ms", "seed_batch",
    "seed_batch_ms", "impala_inference_ms", "impala_pull_ms", "ceiling_mismatch",
    "seed_lockstep_fps", "seed_lockstep_fraction", "seed_turns_fps", "seed_turns_fraction"]


def compare_details(compares: list[Compare]) -> pd.DataFrame:
    """One row per compare: what its runs measured besides frames/s, from compare.csv (the
    mean over the runs of an architecture) and compare.json (the cores, the roofline).

    Columns: compare_dir, mode, seed_run_fps (each SEED run's frames/s, in run order),
    seed_cores_busy, impala_cores_busy (share of all cores the process tree used),
    seed_cpu_us, impala_cpu_us (CPU microseconds per frame, 1e6 / frames per CPU-second),
    seed_learner_cpu_us (the SEED learner's part; NaN where not recorded),
    seed_frames_per_cpu_s, impala_frames_per_cpu_s, seed_latency_p50_ms,
    seed_latency_p99_ms (an actor's action latency), seed_batch (envs in the learner's
    inference batch), seed_batch_ms (one such inference), impala_inference_ms (an actor's
    local inference call), impala_pull_ms (a parameter pull), ceiling_mismatch (the
    roofline config fields that differed from the compare's, comma-separated),
    seed_lockstep_fps and seed_lockstep_fraction (SEED's serve bound with its steps in
    turn, and the share of it reached; NaN where the roofline had none), seed_turns_fps and
    seed_turns_fraction (the same with those turns run for real, seed/bench/turns.py)."""
    return pd.DataFrame([c.details_row() for c in compares], columns=DETAILS_COLUMNS)


def before_after_pairs(compare_dirs) -> list[tuple[str, str]]:
    """The A/B pairs among compare folders, by their names: a folder whose name holds
    ``before`` pairs with each folder beside it named the same with ``after`` in its place,
    ``-rerun`` allowed after it (``serve-before24-20261206`` with ``serve-after24-20261206``;
    ``train-before-issue16-X`` with ``train-after-issue16-X`` and
    ``train-after-issue16-rerun-X``). Sorted by before, then after."""
    dirs = [Path(d) for d in compare_dirs]
    pairs = []
    for b in dirs:
        if "before" not in b.name:
            continue
        target = b.name.replace("before", "after", 1)
        pairs += [(str(b), str(a)) for a in dirs if a.parent == b.parent and a != b
                  and a.name.replace("-rerun", "", 1) == target]
    return sorted(pairs)


def _idle_poll(run_dir: Path) -> bool | None:
    """Whether a run's idle cores polled: its config.json's ``cpu_idle_poll`` (False in a
    run from before the field); None where the config.json cannot be read."""
    try:
        return bool(load_config(run_dir)["config"].get("cpu_idle_poll", False))
    except RunDirError:
        return None


def lockstep_cycles(timelines: list[Timeline], order=()) -> pd.DataFrame:
    """One row per SEED run's ``timeline.json`` (each a
    :class:`~seed.results.timeline.Timeline` read from it): its lock-step cycles in the
    :data:`~seed.results.timeline.CYCLE_GROUPS`.

    Columns: compare_dir, run (its folder), cpu_idle_poll (the run's config.json; None where
    that cannot be read), cycles (matched), interval_ms (their mean batch-to-batch
    interval), frames_per_s (the rate that interval implies, as seed timeline computed it),
    one column per group (the sum of its segments' mean ms) and bookkeeping_ms (the learner's
    post-reply bookkeeping, off the critical path; NaN where the file has none). Rows follow
    the compare folders of ``order`` (others after them, by folder), then the run."""
    rows = []
    for t in timelines:
        run_dir = Path(t.source).parent
        rows.append({
            "compare_dir": str(run_dir.parent), "run": run_dir.name,
            "cpu_idle_poll": _idle_poll(run_dir), "cycles": t.cycles,
            "interval_ms": t.interval.mean_ms, "frames_per_s": t.frames_per_s,
            **t.groups_ms(), "bookkeeping_ms": t.off_path_ms("post-reply bookkeeping"),
        })
    columns = ["compare_dir", "run", "cpu_idle_poll", "cycles", "interval_ms", "frames_per_s",
               *[group for group, _ in CYCLE_GROUPS], "bookkeeping_ms"]
    place = {str(d): i for i, d in enumerate(order)}
    rows.sort(key=lambda r: (place.get(r["compare_dir"], len(place)), r["compare_dir"],
                             r["run"]))
    return pd.DataFrame(rows, columns=columns)


def foreign_load(metrics: pd.DataFrame, upto_frames: float | None = None) -> float | None:
    """The mean foreign load (``foreign_cpu``: the share of the machine's CPU used outside
    the run's process tree) over a run's metrics rows, where ``upto_frames`` is given those up
    to the first row at or past it (the row that logged an episode ending there); None where
    the run did not record it (a run from before the column)."""
    if "foreign_cpu" not in metrics.columns:
        return None
    rows = metrics
    if upto_frames is not None:
        later = metrics.loc[metrics["env_frames"] >= upto_frames, "env_frames"]
        if len(later):
            rows = metrics[metrics["env_frames"] <= later.min()]
    values = pd.to_numeric(rows["foreign_cpu"], errors="coerce").dropna()
    return float(values.mean()) if len(values) else None


def compare_loads(compare: Compare) -> list:
    """The foreign load (:func:`foreign_load` over all its rows) of each run of a compare,
    in its rows' order; None for a run that did not record it or whose metrics.csv cannot be
    read."""
    loads = []
    for run, arch in zip(compare.runs["run"], compare.runs["arch"]):
        try:
            loads.append(foreign_load(read_metrics(compare.directory / run / METRICS, arch)))
        except RunDirError:
            loads.append(None)
    return loads
