"""The tables the figures and the report are drawn from: one row per run
(:func:`runs_table`), final returns per benchmark and architecture, the SEED/IMPALA ratios of
every compare (:func:`compare_ratios`), each architecture's share of this machine's
roofline ceiling (:func:`roofline_table`) and where SEED's lock-step cycles went in the
compares that recorded a timeline (:func:`lockstep_cycles`)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pandas as pd

from seed.results.bench import compare_config, load_compare_json, load_sweep
from seed.results.curves import final_return
from seed.results.files import ResultsFileError, RunDirError
from seed.results.run_dirs import (
    Run,
    evaluation_episodes,
    is_training_run,
    load_config,
    run_mode,
    training_episodes,
)
from seed.results.steady import steady_fps


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


def network_text(network: str, kwargs: dict | None) -> str:
    """``mlp hidden_sizes 64x64``: a network and its keyword arguments, short."""
    parts = [str(network or "?")]
    for k, v in sorted((kwargs or {}).items()):
        parts.append(f"{k} {'x'.join(map(str, v)) if isinstance(v, (list, tuple)) else v}")
    return " ".join(parts)


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
        sizes = load_sweep(sweep)["size"].tolist()
    except ResultsFileError:
        sizes = []
    return sizes.index(compare_dir.name) if compare_dir.name in sizes else len(sizes)


def compare_ratios(compares: list[pd.DataFrame]) -> pd.DataFrame:
    """One row per compare (each a :func:`seed.results.bench.load_compare` frame): the
    SEED/IMPALA ratios of one measurement, and the group of repeats it belongs to.

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


def roofline_table(runs: list[Run], compares: list[pd.DataFrame], roofs: list[dict],
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


def _mean(df: pd.DataFrame, arch: str, column: str) -> float:
    """The mean of ``column`` over a compare's runs of ``arch`` (NaN where none has it)."""
    if column not in df.columns:
        return float("nan")
    values = pd.to_numeric(df.loc[df["arch"] == arch, column], errors="coerce").dropna()
    return float(values.mean()) if len(values) else float("nan")


def compare_details(compares: list[pd.DataFrame]) -> pd.DataFrame:
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
    nan = float("nan")
    rows = []
    for df in compares:
        d = Path(df["compare_dir"].iloc[0])
        meta = load_compare_json(d / "compare.json")
        roof = meta.get("roofline") or {}
        cores = meta.get("cores")
        seed_fps = _mean(df, "seed", "fps")
        seed_fpc, impala_fpc = (_mean(df, a, "frames_per_cpu_s") for a in ("seed", "impala"))
        learner = _mean(df, "seed", "learner_cpu_util")
        rows.append({
            "compare_dir": str(d), "mode": df["mode"].iloc[0] or "?",
            "seed_run_fps": [float(x) for x in df.loc[df["arch"] == "seed", "fps"]],
            "seed_cores_busy": _mean(df, "seed", "cpu_util"),
            "impala_cores_busy": _mean(df, "impala", "cpu_util"),
            "seed_cpu_us": 1e6 / seed_fpc if seed_fpc else nan,
            "impala_cpu_us": 1e6 / impala_fpc if impala_fpc else nan,
            "seed_learner_cpu_us": (1e6 * learner * cores / seed_fps
                                    if cores and seed_fps and not math.isnan(learner) else nan),
            "seed_frames_per_cpu_s": seed_fpc, "impala_frames_per_cpu_s": impala_fpc,
            "seed_latency_p50_ms": _mean(df, "seed", "action_latency_p50_ms"),
            "seed_latency_p99_ms": _mean(df, "seed", "action_latency_p99_ms"),
            "seed_batch": _mean(df, "seed", "inference_batch_size"),
            "seed_batch_ms": _mean(df, "seed", "learner_inference_ms"),
            "impala_inference_ms": _mean(df, "impala", "actor_inference_ms"),
            "impala_pull_ms": _mean(df, "impala", "parameter_pull_ms"),
            "ceiling_mismatch": ", ".join(roof.get("mismatched") or []),
            "seed_lockstep_fps": float(roof.get("seed_lockstep_fps") or nan),
            "seed_lockstep_fraction": float(roof.get("seed_lockstep_fraction") or nan),
            "seed_turns_fps": float(roof.get("seed_turns_fps") or nan),
            "seed_turns_fraction": float(roof.get("seed_turns_fraction") or nan),
        })
    return pd.DataFrame(rows, columns=[
        "compare_dir", "mode", "seed_run_fps", "seed_cores_busy", "impala_cores_busy",
        "seed_cpu_us", "impala_cpu_us", "seed_learner_cpu_us", "seed_frames_per_cpu_s",
        "impala_frames_per_cpu_s", "seed_latency_p50_ms", "seed_latency_p99_ms",
        "seed_batch", "seed_batch_ms", "impala_inference_ms", "impala_pull_ms",
        "ceiling_mismatch", "seed_lockstep_fps", "seed_lockstep_fraction", "seed_turns_fps",
        "seed_turns_fraction"])


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


#: ``seed timeline``'s critical-path segments (:data:`seed.bench.timeline.SEGMENTS`) in the
#: groups the report gives, in the cycle's order; each segment in one group, so the groups
#: add up to the batch-to-batch interval as the segments do.
CYCLE_GROUPS = (
    ("pre-inference", ("pre-inference",)),
    ("inference", ("inference",)),
    ("reply", ("post-inference", "reply hand-off", "reply encode", "reply transit")),
    ("actor sim", ("actor sim",)),
    ("request", ("actor encode+send", "request transit", "decode", "pre-submit",
                 "batcher wake-up")),
)


def _idle_poll(run_dir: Path) -> bool | None:
    """Whether a run's idle cores polled: its config.json's ``cpu_idle_poll`` (False in a
    run from before the field); None where the config.json cannot be read."""
    try:
        return bool(load_config(run_dir)["config"].get("cpu_idle_poll", False))
    except RunDirError:
        return None


def lockstep_cycles(timelines: list[dict], order=()) -> pd.DataFrame:
    """One row per SEED run's ``timeline.json`` (each a
    :func:`seed.results.bench.load_timeline` mapping): its lock-step cycles in the
    :data:`CYCLE_GROUPS`.

    Columns: compare_dir, run (its folder), cpu_idle_poll (the run's config.json; None where
    that cannot be read), cycles (matched), interval_ms (their mean batch-to-batch
    interval), frames_per_s (the rate that interval implies, as seed timeline computed it),
    one column per group (the sum of its segments' mean ms) and bookkeeping_ms (the learner's
    post-reply bookkeeping, off the critical path; NaN where the file has none). Rows follow
    the compare folders of ``order`` (others after them, by folder), then the run."""
    rows = []
    for t in timelines:
        run_dir = Path(t["source"]).parent
        segments = {s["name"]: float(s["mean_ms"]) for s in t["segments"]}
        off = {o["name"]: float(o["mean_ms"]) for o in t.get("off_path", [])}
        rows.append({
            "compare_dir": str(run_dir.parent), "run": run_dir.name,
            "cpu_idle_poll": _idle_poll(run_dir), "cycles": int(t["cycles"]),
            "interval_ms": float(t["interval"]["mean_ms"]),
            "frames_per_s": float(t["frames_per_s"]),
            **{group: sum(segments[name] for name in names) for group, names in CYCLE_GROUPS},
            "bookkeeping_ms": off.get("post-reply bookkeeping", float("nan")),
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


def compare_loads(compare: pd.DataFrame) -> list:
    """The foreign load (:func:`foreign_load` over all its rows) of each run of a compare
    (a :func:`seed.results.bench.load_compare` frame), in its rows' order; None for a run
    that did not record it or whose metrics.csv cannot be read."""
    from seed.results.run_dirs import METRICS, read_metrics
    d = Path(compare["compare_dir"].iloc[0])
    loads = []
    for _, row in compare.iterrows():
        try:
            loads.append(foreign_load(read_metrics(d / str(row["run"]) / METRICS, row["arch"])))
        except RunDirError:
            loads.append(None)
    return loads
