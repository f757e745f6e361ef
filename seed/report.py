"""``make report``: ``results/REPORT.md`` and the figures it embeds, from the run directories
and compare files under ``results/`` alone.

    python -m seed.report [--results DIR] [--out FILE]

Per benchmark: the machines its runs came from (cores, accelerator, package versions, from
each run's ``config.json``), what the engine was built from where that varies (DMLab), the
reward curves, frames and wall time to each threshold per architecture (median and min-max
over the runs of one setting; the evaluation envs' too where ``references.yaml`` gives an
``evaluation_window``), the learning diagnostics each run ended with, the throughput of every
``seed compare`` (SEED/IMPALA ratio per mode and network, share of the roofline ceiling and of
SEED's lock-step bound), what each compare's runs measured besides frames/s (cores busy, CPU
per frame, action latency, batch and inference times), where SEED's lock-step cycles went in
the compares that recorded a timeline (``seed compare --timeline``: each SEED run's
``timeline.json``), the before/after pairs among the
compares, the model-size sweeps, the roofline files (``results/roofline/*.json``: each cost
measured alone, the ceilings, the agent against bare TensorFlow, SEED's data path and
lock-step bound), and the published references beside them (``results/references.yaml``,
typed by hand with their sources: the one input that is not a run).

Each section's heading is ``<benchmark> <section>`` (``atari_pong_vtrace throughput``), so
its anchor (``REPORT.md#atari_pong_vtrace-throughput``) stays put as runs are added. No
figure of this suite's is typed by hand: ``tests/results/test_report.py`` regenerates the report and
fails when the committed one differs.

A run directory that cannot be read, a compare file or timeline that is damaged, is named with
its reason in one line and left out; a run with no ``summary.json`` is reported as not finished.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

import pandas as pd
import yaml

from seed.bench import flops
from seed.results.bench import (
    compare_config,
    find_compare_files,
    find_roofline_files,
    find_sweep_files,
    find_timeline_files,
    load_all,
    load_compare,
    load_compare_json,
    load_roofline,
    load_sweep,
    load_timeline,
)
from seed.results.curves import final_return, first_reaching, goal_outcome, goal_over_seeds
from seed.results.files import ResultsError, check_root
from seed.results.run_dirs import (
    Run,
    evaluation_episodes,
    is_training_run,
    learning_settings,
    load_runs,
    training_episodes,
)
from seed.results.tables import (
    CYCLE_GROUPS,
    before_after_pairs,
    compare_details,
    compare_loads,
    compare_ratios,
    foreign_load,
    lockstep_cycles,
    network_text,
)

REFERENCES = "references.yaml"
FIGURES = "report"  # folder beside REPORT.md
#: docs/performance.md's section on ``seed timeline``, from REPORT.md in results/.
TIMELINE_DOCS = "../docs/performance.md#where-a-lock-step-cycle-goes-seed-timeline"
WINDOW = 100  # episodes in the mean that must reach a threshold, unless references.yaml says
#: A wall time or frames/s read over metrics rows whose mean foreign load (``foreign_cpu``:
#: the share of the machine's CPU used outside the run's process tree) is above this share
#: is marked "loaded" wherever the report prints it: half a core of a 2-core machine.
LOADED = 0.25
#: Learning diagnostics (metrics.csv columns) the report gives each run's last value of.
END_DIAGNOSTICS = {"entropy": "entropy", "explained_variance": "explained variance",
                   "mean_abs_log_rho": "policy lag abs(log rho)",
                   "update_ratio": "update ratio", "replay_ratio": "replay ratio"}


class ReportError(ValueError):
    """The report cannot be written; the message is one line."""


# --------------------------------------------------------------------------- inputs

def load_references(root: Path) -> dict:
    """``references.yaml``: per benchmark, ``thresholds`` (returns), optionally ``window``
    (episodes in the mean, default :data:`WINDOW`), ``evaluation_window`` (the same for
    evaluation envs' episodes, which are tabulated only where it is given) and
    ``references`` (each with ``what``, ``value``, ``unit``, ``source``); {} when absent."""
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
    """Plainly: ran its budget, or stopped early (at what share of it, by what), or not
    finished; with the number of segments of a resumed run."""
    summary = run.summary
    if summary is None:
        return "not finished (no summary.json): in progress or stopped"
    ran = int(run.metrics["env_frames"].max())
    budget = int(run.config.get("frames") or 0)
    by = summary.get("stopped_by", "?")
    if by == "budget":
        text = "ran its budget"
    elif by in ("SIGINT", "SIGTERM"):
        text = (f"stopped early at {ran / budget:.0%} of its budget ({by})" if budget
                else f"stopped early ({by})")
    else:
        text = f"failed: {by}"
    segments = run_segments(run)
    return text + (f"; {segments}" if segments else "")


def run_segments(run: Run) -> str:
    """"2 segments (resumed)" for a resumed run, "" for a run of one segment. A summary.json
    from before the count was kept tells a resume only by its segment's seconds falling
    short of the run's wall time: "resumed: at least 2 segments"."""
    summary = run.summary or {}
    if "segments" in summary:
        n = int(summary["segments"])
        if n < 2:
            return ""
        return (f"{n} segments (resumed)" if summary.get("segments_exact", True)
                else f"resumed: at least {n} segments")
    seconds = summary.get("seconds")
    wall = float(run.metrics["wall_time"].max())
    if seconds is not None and wall - float(seconds) > max(60.0, 0.05 * wall):
        return "resumed: at least 2 segments (not counted then)"
    return ""


def load_text(values: list) -> str:
    """What the foreign loads of the runs behind a figure say of it: "" when every run
    recorded its load and none was above :data:`LOADED`; else "loaded", "load not
    recorded", or the counts of each among several runs."""
    n = len(values)
    loaded = sum(v is not None and v > LOADED for v in values)
    unknown = sum(v is None for v in values)
    parts = []
    if loaded:
        parts.append("loaded" if n == 1 else f"{loaded} of {n} runs loaded")
    if unknown:
        parts.append("load not recorded" if unknown == n
                     else f"{unknown} of {n} runs load not recorded")
    return "; ".join(parts)


def _marked(text: str, values: list) -> str:
    """``text`` with :func:`load_text` of ``values`` after it, in parentheses."""
    note = load_text(values)
    return f"{text} ({note})" if note else text


def _load_cell(metrics: pd.DataFrame) -> str:
    """A run's foreign load: its mean and max over the rows, "loaded" above :data:`LOADED`."""
    mean = foreign_load(metrics)
    if mean is None:
        return "not recorded"
    peak = float(pd.to_numeric(metrics["foreign_cpu"], errors="coerce").max())
    return f"{mean:.0%} mean, {peak:.0%} max" + (" (loaded)" if mean > LOADED else "")


def _heading(bench: str, section: str) -> str:
    """``### atari_pong_vtrace throughput``: anchored ``#atari_pong_vtrace-throughput``."""
    return f"### {bench} {section}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def threshold_rows(runs: list[Run], thresholds: list[float], window: int = WINDOW,
                   episodes=training_episodes) -> list[list[str]]:
    """One row per architecture and learning setting: per threshold, frames and wall time to
    a ``window``-episode mean of returns reaching it, median (min-max) over the runs that
    reached it, and how many did. ``episodes`` picks a run's episodes to average
    (training envs' by default)."""
    groups: dict = {}
    for run in runs:
        groups.setdefault((run.architecture, learning_settings(run.config)), []).append(run)
    rows = []
    for n, ((arch, _), members) in enumerate(sorted(groups.items(), key=lambda kv: kv[0])):
        name = arch if sum(k[0] == arch for k in groups) == 1 else \
            f"{arch} ({', '.join(r.run_id for r in members)})"
        row = [name, str(len(members))]
        for t in thresholds:
            hits = [(r, first_reaching(episodes(r.episodes), t, window)) for r in members]
            reached = [(r, h) for r, h in hits if h is not None]
            wall = _span([h["wall_time"] for _, h in reached], lambda v: f"{v:,.0f} s")
            if reached:
                wall = _marked(wall, [foreign_load(r.metrics, h["env_frames"])
                                      for r, h in reached])
            lost = sum(not h["held"] for _, h in reached)
            row.append(f"{_span([h['env_frames'] for _, h in reached], lambda v: _frames(v))}; "
                       f"{wall} [{len(reached)}/{len(members)}]"
                       + (f" ({lost} not held)" if lost else ""))
        rows.append(row)
    return rows


def _goal_lines(bench: str, runs: list[Run], goal, window: int) -> list[str]:
    """The benchmark's goal (``goal: {return, frames, why}`` in references.yaml) and, per
    architecture, which runs met it, which missed it and which stopped before deciding it."""
    try:
        target, budget = float(goal["return"]), int(goal["frames"])
        why = str(goal.get("why", "")).strip()
    except (TypeError, KeyError, ValueError):
        raise ReportError(f"{REFERENCES}: {bench}: goal needs a numeric return and frames, "
                          f"as goal: {{return: 21, frames: 20000000, why: ...}}") from None
    if goal.get("seeds") is not None:
        return _goal_over_seeds_lines(bench, runs, goal, target, budget, why, window)
    out = ["", f"Goal: a mean of {window} consecutive training episodes of {target:g} within "
           f"{_frames(budget)} frames" + (f" ({why})" if why else "") + ". Per run: met (at "
           "the frames it first did; \"not held\" where the mean fell below it again within "
           f"the next {window} episodes or was reached only in the run's last log row), "
           "missed (it ran past the budget without; where it got there later, if it did) or "
           "open (it stopped short of the budget).", ""]
    outcomes: dict = {}
    for r in runs:
        ran = int(r.metrics["env_frames"].max())
        kind, frames = goal_outcome(training_episodes(r.episodes), ran, target, budget, window)
        note = r.run_id + (f" at {_frames(frames)}" if frames is not None else "")
        if kind == "met" and not first_reaching(training_episodes(r.episodes), target,
                                                window)["held"]:
            note += ", not held"
        if kind == "open":
            note += f", stopped at {_frames(ran)}"
        outcomes.setdefault(r.architecture, {"met": [], "missed": [], "open": []})[kind].append(
            note)
    rows = [[arch, str(sum(map(len, o.values())))] +
            [f"{len(o[k])}" + (f" ({'; '.join(o[k])})" if o[k] else "")
             for k in ("met", "missed", "open")]
            for arch, o in sorted(outcomes.items())]
    return out + _table(["architecture", "runs", "met", "missed", "open"], rows)


def _goal_over_seeds_lines(bench: str, runs: list[Run], goal: dict, target: float,
                           budget: int, why: str, window: int) -> list[str]:
    """A goal judged over the median of ``goal["seeds"]`` at the budget, per architecture
    (:func:`seed.results.curves.goal_over_seeds`)."""
    try:
        seeds = [int(x) for x in goal["seeds"]]
    except (TypeError, ValueError):
        raise ReportError(f"{REFERENCES}: {bench}: goal seeds must be a list of integers, "
                          f"as seeds: [0, 1, 2]") from None
    out = ["", f"Goal: over seeds {', '.join(map(str, seeds))}, the median of each seed's mean "
           f"of {window} consecutive training episodes at {_frames(budget)} frames reaches "
           f"{target:g}" + (f" ({why})" if why else "") + ". A seed's value is that mean in "
           "its run that ran to the budget (the median of them where it has several); open "
           "until every seed has one.", ""]
    rows = []
    for arch in sorted({r.architecture for r in runs}):
        by_seed: dict = {}
        for r in runs:
            if r.architecture == arch and r.seed is not None:
                by_seed.setdefault(int(r.seed), []).append(
                    (training_episodes(r.episodes), int(r.metrics["env_frames"].max())))
        kind, median, values = goal_over_seeds(by_seed, target, budget, seeds, window)
        rows.append([arch, kind, _num(median, ".2f"),
                     "; ".join(f"seed {k}: {v:.2f}" for k, v in sorted(values.items()))
                     or "-"])
    return out + _table(["architecture", "goal", f"median at {_frames(budget)}",
                         "each seed"], rows)


def _last(metrics: pd.DataFrame, column: str) -> float | None:
    """The last logged value of a metrics column; None where it never had one."""
    if column not in metrics.columns:
        return None
    values = pd.to_numeric(metrics[column], errors="coerce").dropna()
    return float(values.iloc[-1]) if len(values) else None


def _end_section(runs: list[Run], root: Path, eval_window: int | None) -> list[str]:
    """Each run's learning diagnostics at its end (the last logged value of each), and the
    mean return of its last ``eval_window`` evaluation episodes where it has any."""
    columns = [c for c in END_DIAGNOSTICS if any(_last(r.metrics, c) is not None for r in runs)]
    evals = eval_window and any(len(evaluation_episodes(r.episodes)) for r in runs)
    if not columns and not evals:
        return []
    header = ["run", *[END_DIAGNOSTICS[c] for c in columns]]
    header += [f"evaluation envs, last {eval_window} mean"] if evals else []
    rows = []
    for r in runs:
        row = [_rel(r.path, root)] + [_num(_last(r.metrics, c), ".3g") for c in columns]
        if evals:
            row.append(_num(final_return(evaluation_episodes(r.episodes), eval_window), ".2f"))
        rows.append(row)
    return (["", "At each run's end: the last logged value of each learning diagnostic "
             "(`docs/design.md` says what each measures).", ""] + _table(header, rows))


def _learning_section(bench: str, runs: list[Run], refs: dict, root: Path,
                      out_dir: Path) -> list[str]:
    """Run paths are written relative to the results root, figure links to the report."""
    from seed.plots import PlotError, file_name, save
    from seed.plots.learning import reward_figure
    out = [_heading(bench, "learning"), "", f"{_plural(len(runs), 'training run')}.", ""]
    try:
        path = save(reward_figure(runs, title=bench),
                    out_dir / FIGURES / f"{file_name(bench)}_reward.png")
        out += [f"![{bench} reward curves]({_rel(path, out_dir)})", ""]
    except PlotError as e:
        out += [f"No reward curve: {e}.", ""]
    out += _table(["run", "arch", "seed", "env frames", "wall time", "learner steps",
                   "training episodes", "last 100 mean", "status", "foreign load"],
                  [[_rel(r.path, root), r.architecture, _num(r.seed, "d"),
                    _frames(int(r.metrics["env_frames"].max())),
                    f"{float(r.metrics['wall_time'].max()):,.0f} s",
                    _num(_last(r.metrics, "learner_steps")),
                    str(len(training_episodes(r.episodes))),
                    _num(final_return(training_episodes(r.episodes)), ".2f"), run_status(r),
                    _load_cell(r.metrics)]
                   for r in runs])
    out += ["", f"Foreign load: the share of the machine's CPU used outside the run's process "
            f"tree, per metrics row (`foreign_cpu`): the mean and max over the run's rows, "
            f"marked loaded when the mean is above {LOADED:.0%} (the wall time beside it was "
            "taken under that load), and a run from before the record reads "
            "\"load not recorded\". Last 100 mean: the training episodes' (counted in "
            "training episodes), as summary.json has it."]
    thresholds, window = refs.get("thresholds") or [], int(refs.get("window", WINDOW))
    eval_window = int(refs["evaluation_window"]) if refs.get("evaluation_window") else None
    if thresholds:
        out += ["", f"Frames and wall time until the mean of {window} consecutive training "
                "episodes first reaches each return: median (min-max) over the runs of one "
                "setting that reached it; [reached/runs]; the foreign load of those runs up "
                "to their crossing; \"not held\" counts crossings lost again within the next "
                f"{window} episodes or reached only in a run's last log row.", ""]
        out += _table(["architecture", "runs", *[f"return {t:g}" for t in thresholds]],
                      threshold_rows(runs, thresholds, window))
        if refs.get("goal") is not None:
            out += _goal_lines(bench, runs, refs["goal"], window)
        if eval_window and any(len(evaluation_episodes(r.episodes)) for r in runs):
            out += ["", f"The same for the evaluation envs (greedy, never trained on): the "
                    f"mean of {eval_window} consecutive evaluation episodes.", ""]
            out += _table(["architecture", "runs", *[f"return {t:g}" for t in thresholds]],
                          threshold_rows(runs, thresholds, eval_window, evaluation_episodes))
    out += _end_section(runs, root, eval_window)
    return out + [""]


def _compare_loads(compares: list[pd.DataFrame]) -> dict:
    """{compare_dir: [each run's foreign load]}."""
    return {str(df["compare_dir"].iloc[0]): compare_loads(df) for df in compares}


#: What the "foreign load" column of the compare tables says.
_COMPARE_LOAD = ("foreign load = what the runs' record of the machine's CPU used outside "
                 f"their process trees says of their frames/s: quiet (none above {LOADED:.0%}), "
                 "loaded, or load not recorded (runs from before the record)")


def _throughput_section(bench: str, compares: list[pd.DataFrame], root: Path) -> list[str]:
    ratios = compare_ratios(compares)
    loads = _compare_loads(compares)
    details = compare_details(compares).set_index("compare_dir")
    rows = []
    for _, r in ratios.iterrows():
        d = details.loc[r["compare_dir"]]
        roof = load_compare_json(Path(r["compare_dir"]) / "compare.json").get("roofline") or {}
        share = " / ".join(_num(roof.get(f"{a}_fraction"), ".0%") for a in ("seed", "impala"))
        if roof and d["ceiling_mismatch"]:
            share += f" (roofline config differs: {d['ceiling_mismatch']})"
        load = load_text(loads[r["compare_dir"]]) or "quiet"
        rows.append([_rel(r["compare_dir"], root), r["mode"], r["network"],
                     r["options"] or "-", _num(r["seed_fps"]), _num(r["impala_fps"]),
                     _num(r["fps_ratio"], ".2f"), _num(r["cpu_ratio"], ".2f"),
                     share if roof else "-", _num(d["seed_lockstep_fraction"], ".0%"),
                     _num(d["seed_turns_fraction"], ".0%"), load])
    return ([_heading(bench, "throughput"), "",
             f"{_plural(len(rows), 'compare')}. Steady-state frames/s (SEED: mean of its "
             "runs); ratio = SEED/IMPALA frames/s, per CPU-s = the same per CPU-second of the "
             "process tree; ceiling share = frames/s over this machine's roofline ceiling for "
             "that mode (SEED / IMPALA), as the compare read it (flagged where the roofline's "
             "config differed from the compare's); lock-step share = SEED's frames/s over its "
             "serve bound with inference, simulation and data path in turn, each timed alone "
             "(rooflines that measured it); turns share = the same over that bound with "
             "inference and simulation run in turns for real, without SEED "
             f"(seed/bench/turns.py), plus the data path; {_COMPARE_LOAD}.", ""]
            + _table(["compare", "mode", "network", "options", "SEED fps", "IMPALA fps",
                      "ratio", "per CPU-s", "ceiling share", "lock-step share", "turns share",
                      "foreign load"],
                     rows) + [""])


def _details_section(bench: str, compares: list[pd.DataFrame], root: Path) -> list[str]:
    """What each compare's runs measured besides frames/s, in the throughput table's order."""
    order = compare_ratios(compares)["compare_dir"]
    details = compare_details(compares).set_index("compare_dir")
    loads = _compare_loads(compares)
    rows = []
    for cd in order:
        d = details.loc[cd]
        cpu = _num(d["seed_cpu_us"])
        if not math.isnan(d["seed_learner_cpu_us"]):
            cpu += f" (learner {_num(d['seed_learner_cpu_us'])})"
        rows.append([
            _rel(cd, root), " / ".join(_num(x) for x in d["seed_run_fps"]),
            f"{_num(d['seed_cores_busy'], '.0%')} / {_num(d['impala_cores_busy'], '.0%')}",
            f"{cpu} / {_num(d['impala_cpu_us'])}",
            f"{_num(d['seed_latency_p50_ms'], '.1f')} / {_num(d['seed_latency_p99_ms'], '.1f')}",
            f"{_num(d['seed_batch'], '.1f')}; {_num(d['seed_batch_ms'], '.2f')} ms",
            f"{_num(d['impala_inference_ms'], '.2f')}; {_num(d['impala_pull_ms'], '.1f')}",
            load_text(loads[cd]) or "quiet"])
    return ([_heading(bench, "inside the compares"), "",
             "What the runs of each compare measured besides frames/s, over their steady "
             "state (SEED: mean of its runs): cores busy = share of all the machine's cores "
             "the run's process tree used; CPU per frame in microseconds (1e6 / frames per "
             "CPU-second; SEED's learner part where recorded); SEED's action latency (an "
             "actor's wait from a step's observations to its actions); SEED's learner batch "
             "(envs per inference call) and the time of one such call; an IMPALA actor's "
             "local inference call and parameter pull; " + _COMPARE_LOAD + ".", ""]
            + _table(["compare", "SEED fps, each run", "cores busy, SEED / IMPALA",
                      "CPU us per frame, SEED / IMPALA", "SEED action latency p50 / p99 (ms)",
                      "SEED batch: envs; inference", "IMPALA inference ms; pull ms",
                      "foreign load"], rows)
            + [""])


def _change(before: float, after: float, fmt: str = ",.0f", percent: bool = True) -> str:
    """``7,153 -> 8,071 (+13%)``; ``-`` when neither was measured."""
    if math.isnan(before) and math.isnan(after):
        return "-"
    text = f"{_num(before, fmt)} -> {_num(after, fmt)}"
    if percent and before and not (math.isnan(before) or math.isnan(after)):
        change = after / before - 1
        text += f" ({change:+.0%})" if round(change, 2) else " (0%)"
    return text


def _cycles_section(bench: str, compares: list[pd.DataFrame], timelines: list[dict],
                    root: Path) -> list[str]:
    """Each SEED run's lock-step cycles, where its compare recorded a timeline; [] where none
    of ``compares`` did. Rows in the throughput table's order of the compares."""
    dirs = {str(df["compare_dir"].iloc[0]) for df in compares}
    mine = [t for t in timelines if str(Path(t["source"]).parent.parent) in dirs]
    if not mine:
        return []
    table = lockstep_cycles(mine, compare_ratios(compares)["compare_dir"])
    polled = {True: "yes", False: "no", None: "?"}
    loads = _compare_loads(compares)
    load = {(cd, str(run)): v for df in compares
            for cd in [str(df["compare_dir"].iloc[0])]
            for run, v in zip(df["run"], loads[cd])}
    rows = [[_rel(r["compare_dir"], root), r["run"], polled[r["cpu_idle_poll"]],
             _num(r["cycles"], ",d"), _num(r["interval_ms"], ".2f"), _num(r["frames_per_s"]),
             *[_num(r[group], ".2f") for group, _ in CYCLE_GROUPS],
             _num(r["bookkeeping_ms"], ".2f"),
             load_text([load.get((r["compare_dir"], r["run"]))]) or "quiet"]
            for r in table.to_dict("records")]
    return ([_heading(bench, "lock-step cycles"), "",
             "Where SEED's lock-step cycles went, as `seed timeline` reads them from the "
             "stamps the SEED runs of a `seed compare --timeline` recorded (each run's "
             "`timeline.json`). A cycle runs from one batch's release to the inference thread "
             "to the next batch's; its critical path runs through the actor whose request the "
             "next batch waited for, in consecutive segments that add up to the cycle's "
             "interval. idle cores polled = the run's `cpu_idle_poll` (no in a run from before "
             "that field); cycles = the cycles matched (warm-up, the stop and cycles that were "
             "not lock-step are left out); interval = their mean batch-to-batch interval, "
             "frames/s = the rate it implies; then the mean ms a cycle of the segments, "
             "grouped: pre-inference (the learner, batch released -> inference called), "
             "inference (`agent.infer`), reply (post-inference, reply hand-off, reply encode, "
             "reply transit: actions out -> the actor has them), actor sim (the actor stepping "
             "its envs), request (actor encode+send, request transit, decode, pre-submit, "
             "batcher wake-up: envs stepped -> the next batch released); these five add up to "
             "the interval. Last, off the critical path: the learner's post-reply bookkeeping "
             "(counting steps, extending unrolls, on its inference thread after the reply, "
             "while the actors step), which still takes a core. What each segment spans: "
             f"[docs/performance.md, Where a lock-step cycle goes]({TIMELINE_DOCS}); "
             + _COMPARE_LOAD + ".", ""]
            + _table(["compare", "run", "idle cores polled", "cycles", "interval ms",
                      "frames/s", *[f"{group} ms" for group, _ in CYCLE_GROUPS],
                      "post-reply bookkeeping ms (off path)", "foreign load"], rows) + [""])


def _before_after_section(bench: str, compares: list[pd.DataFrame], root: Path) -> list[str]:
    """Each before/after pair of compares (:func:`before_after_pairs`), side by side."""
    ratios = compare_ratios(compares).set_index("compare_dir")
    details = compare_details(compares).set_index("compare_dir")
    pairs = before_after_pairs(ratios.index)
    if not pairs:
        return []
    loads = _compare_loads(compares)
    rows = []
    for b, a in pairs:
        rb, ra, db, da = ratios.loc[b], ratios.loc[a], details.loc[b], details.loc[a]
        rows.append([
            f"{_rel(b, root)} -> {Path(a).name}", ra["mode"],
            _change(rb["seed_fps"], ra["seed_fps"]), _change(rb["impala_fps"], ra["impala_fps"]),
            _change(rb["fps_ratio"], ra["fps_ratio"], ".2f", percent=False),
            _change(db["seed_frames_per_cpu_s"], da["seed_frames_per_cpu_s"]),
            _change(db["impala_frames_per_cpu_s"], da["impala_frames_per_cpu_s"]),
            _change(db["seed_batch_ms"], da["seed_batch_ms"], ".2f", percent=False),
            _change(db["seed_lockstep_fraction"], da["seed_lockstep_fraction"], ".0%",
                    percent=False),
            " / ".join(load_text(loads[x]) or "quiet" for x in (b, a))])
    return ([_heading(bench, "before and after"), "",
             f"{_plural(len(rows), 'pair')} of compares made to measure a change: the code "
             "before it, then after it, back to back (folders named `...before...` and "
             "`...after...`; `-rerun` for a repeat of the after). Frames/s and frames per "
             "CPU-second are the means of the runs of an architecture; the change in percent "
             "follows each; " + _COMPARE_LOAD + ", before / after.", ""]
            + _table(["before -> after", "mode", "SEED fps", "IMPALA fps", "SEED/IMPALA",
                      "SEED frames per CPU-s", "IMPALA frames per CPU-s",
                      "SEED batch inference ms", "SEED lock-step share", "foreign load"],
                     rows) + [""])


def _kwargs(text) -> dict:
    """A sweep row's ``network_kwargs`` (JSON text); {} where it is absent or not JSON."""
    try:
        value = json.loads(text) if isinstance(text, str) else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _sweep_section(bench: str, sweeps: list[pd.DataFrame], root: Path) -> list[str]:
    """Each model-size sweep (``seed compare --sweep-network``): one row per size."""
    out = [_heading(bench, "model-size sweep"), ""]
    for df in sweeps:
        out += [f"`{_rel(df['source'].iloc[0], root)}`: inference CPU per sample in "
                "microseconds, measured alone at batch 1, at an IMPALA actor's batch and at "
                "SEED's learner batch; SEED/IMPALA frames/s and per CPU-second.", ""]
        rows = [[r["size"],
                 network_text(r.get("network", "?"), _kwargs(r.get("network_kwargs"))),
                 _num(r.get("parameters")),
                 " / ".join(_num(r.get(f"inf_cpu_us_per_sample_{k}"))
                            for k in ("b1", "actor_batch", "seed_batch")),
                 _num(r.get("seed_fps")), _num(r.get("impala_fps")),
                 _num(r.get("fps_ratio"), ".2f"), _num(r.get("frames_per_cpu_s_ratio"), ".2f")]
                for _, r in df.iterrows()]
        out += _table(["size", "network", "parameters", "inference us per sample: 1 / actor / "
                       "SEED batch", "SEED fps", "IMPALA fps", "ratio", "per CPU-s"], rows)
        out += [""]
    return out


# --------------------------------------------------------------------------- rooflines

def _us(seconds) -> str:
    return _num(None if seconds is None else 1e6 * seconds, ",.1f")


def _ms(seconds) -> str:
    return _num(None if seconds is None else 1e3 * seconds, ",.2f")


def _roof_simulation(roof: dict) -> str:
    m = roof.get("simulation") or {}
    return (f"{_us(m.get('cpu_s_per_frame'))} us/frame; {_num(m.get('frames_per_s'))} "
            f"frames/s with {m.get('processes', '?')} processes")


def _roof_inference(roof: dict, batch: str) -> str | None:
    m = (roof.get("inference") or {}).get(batch)
    if not m:
        return None
    who = [w for w, b in (("SEED learner", roof.get("seed_batch")),
                          ("IMPALA actor", roof.get("impala_batch"))) if str(b) == batch]
    return (f"{_us(m.get('cpu_s_per_frame'))} us/frame; {_ms(m.get('wall_s_per_call'))} ms a "
            f"call; {_num(m.get('frames_per_s'))} frames/s" + (f" ({', '.join(who)})"
                                                               if who else ""))


def _roof_shape(roof: dict) -> str:
    c = roof.get("config") or {}
    text = (f"{c.get('actors', '?')} actors x {c.get('envs_per_actor', '?')} envs, "
            f"unroll {c.get('unroll_length', '?')}, train batch {c.get('batch_size', '?')}")
    if c.get("actor_splits", 1) != 1:
        text += f", actor_splits {c['actor_splits']}"
    if c.get("inference_batch_size"):
        text += f", inference batch {c['inference_batch_size']}"
    return text


def _roof_training(roof: dict) -> str:
    t, c = roof.get("training") or {}, roof.get("config") or {}
    return (f"{_ms(t.get('wall_s_per_step'))} ms a step ({c.get('batch_size', '?')} x "
            f"T={c.get('unroll_length', '?')}); {_us(t.get('cpu_s_per_frame'))} us/frame; "
            f"{_num(t.get('frames_per_s'))} frames/s")


def _roof_bare(roof: dict) -> str | None:
    b = roof.get("bare_training")
    if not b:
        return None
    return (f"{_ms(b.get('wall_s_per_step'))} ms a step; agent at "
            f"{_num(b.get('agent_over_bare'), '.2f')} of bare")


def _roof_data_path(roof: dict) -> str | None:
    d = roof.get("seed_data_path")
    if not d:
        return None
    return (f"learner {_us(d.get('learner_cpu_s_per_frame'))} + actors "
            f"{_us(d.get('actor_cpu_s_per_frame'))} us/frame; "
            f"{_num(d.get('frames_per_s'))} frames/s; round trip p50 "
            f"{_num(d.get('round_trip_p50_ms'), '.2f')} ms, p99 "
            f"{_num(d.get('round_trip_p99_ms'), '.2f')} ms; SEED ceilings with it: serve "
            f"{_num(d.get('seed_serve_with_data_path'))}, train "
            f"{_num(d.get('seed_train_with_data_path'))}")


def _roof_lockstep(roof: dict) -> str | None:
    s = roof.get("seed_lockstep_serve")
    if not s:
        return None
    return (f"{_num(s.get('frames_per_s'))} frames/s, "
            f"{_num(s.get('fraction_of_serve_ceiling'), '.0%')} of the serve ceiling: a cycle "
            f"of {_ms(s.get('cycle_wall_s'))} ms = inference {_ms(s.get('inference_wall_s'))} "
            f"+ simulation {_ms(s.get('simulation_wall_s'))} + data path "
            f"{_ms(s.get('data_path_wall_s'))}")


def _roof_turns(roof: dict) -> str | None:
    t = (roof.get("seed_lockstep_serve") or {}).get("turns")
    if not t:
        return None
    return (f"inference {_ms(t.get('inference_wall_s'))} + stepping "
            f"{_ms(t.get('stepping_wall_s'))} + hand-off {_ms(t.get('handoff_wall_s'))} ms a "
            f"cycle, in turns for real (seed/bench/turns.py); inference + stepping + data path "
            f"{_num(t.get('with_data_path_frames_per_s'))} frames/s")


def _ceilings(roof: dict, arch: str) -> str:
    c = roof.get("ceilings") or {}
    return f"{_num(c.get(f'{arch}_serve'))} / {_num(c.get(f'{arch}_train'))}"


def roofline_rows(roofs: list[dict]) -> list[list[str]]:
    """The roofline table: one row per measured quantity, one column per roofline file."""
    batches = sorted({b for r in roofs for b in (r.get("inference") or {})}, key=float)
    lines = [("measured", lambda r: str(r.get("measured_at", "?")).replace("T", " ")[:16]),
             ("shape", _roof_shape), ("simulation alone", _roof_simulation)]
    lines += [(f"inference alone, batch {b}", lambda r, b=b: _roof_inference(r, b))
              for b in batches]
    lines += [("FLOPs per frame", flops.per_frame_text), ("peak FLOP/s", flops.peak_text)]
    lines += [(f"FLOP/s, inference batch {b}", lambda r, b=b: flops.inference_text(r, b))
              for b in batches]
    lines += [("FLOP/s, train step", flops.training_text)]
    lines += [("train step alone", _roof_training), ("bare TensorFlow train step", _roof_bare),
              ("ceiling, SEED: serve / train", lambda r: _ceilings(r, "seed")),
              ("ceiling, IMPALA: serve / train", lambda r: _ceilings(r, "impala")),
              ("ceiling, simulation only",
               lambda r: _num((r.get("ceilings") or {}).get("simulation_only"))),
              ("SEED data path alone", _roof_data_path),
              ("SEED lock-step serve bound", _roof_lockstep),
              ("SEED lock-step turns without SEED", _roof_turns)]
    rows = []
    for label, cell in lines:
        cells = [cell(r) or "-" for r in roofs]
        if any(c != "-" for c in cells):
            rows.append([label, *cells])
    return rows


def inference_vs_bare_rows(roofs: list[dict], root: Path) -> list[list[str]]:
    """One row per roofline file and batch that timed the agent's inference call against
    the same step in bare TensorFlow."""
    parts = ("network", "stack_update", "sampling", "host_copies_in", "host_copies_out")
    rows = []
    for roof in roofs:
        for batch, m in sorted((roof.get("inference_vs_bare") or {}).items(),
                               key=lambda kv: float(kv[0])):
            p = m.get("agent_parts_ms") or {}
            rows.append([_rel(roof["source"], root), batch,
                         f"{_num(m.get('agent_ms_per_call'), '.2f')} / "
                         f"{_num(m.get('bare_ms_per_call'), '.2f')}",
                         _num(m.get("infer_over_bare"), ".2f"),
                         ", ".join(_num(p.get(k), ".2f") for k in parts)])
    return rows


def _roofline_keys(runs: list[Run], compares: list[pd.DataFrame]) -> set:
    """(env, network, agent) of a benchmark's runs and compares: the rooflines it owns."""
    configs = [r.config for r in runs]
    configs += [compare_config(df["compare_dir"].iloc[0]) for df in compares]
    return {(c.get("env"), c.get("network"), c.get("agent", "vtrace")) for c in configs}


def _roofline_section(bench: str, roofs: list[dict], root: Path) -> list[str]:
    out = [_heading(bench, "roofline"), "",
           "What this machine reaches, each cost measured alone by `seed roofline` (CPU "
           "microseconds per frame, wall time, frames/s); the ceilings it derives "
           "(cores / CPU seconds per frame of simulation + inference [+ training]); the "
           "agent's train step against the same step in bare TensorFlow; SEED's data path "
           "alone (gRPC, batching, unroll assembly; no inference, no envs); SEED's serve "
           "bound when inference, simulation and the data path take turns; FLOPs per frame "
           "counted from the network and the FLOP/s each measurement achieved, as a share of "
           "the CPU's peak for the dtype it computed in (docs/performance.md; \"not "
           "measured\" in a file from before they were counted). One column per file.", ""]
    out += _table(["", *[f"`{_rel(r['source'], root)}`" for r in roofs]], roofline_rows(roofs))
    bare = inference_vs_bare_rows(roofs, root)
    if bare:
        out += ["", "The agent's inference call against the same step in bare TensorFlow "
                "(timed in turns), and the agent's call in parts, each timed alone "
                "(network, frame-stack update, sampling, copies in, copies out).", ""]
        out += _table(["file", "batch", "agent / bare ms a call", "infer over bare",
                       "parts (ms)"], bare)
    return out + [""]


def _references_section(bench: str, refs: dict) -> list[str]:
    entries = refs.get("references") or []
    head = [_heading(bench, "published references"), ""]
    if not entries:
        return head + ["None recorded for this benchmark.", ""]
    return (head + _table(["what", "value", "unit", "source"],
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
    sweeps, bad_sweeps = load_all(root, find_sweep_files, lambda p: load_sweep(p, root))
    roofs, bad_roofs = load_all(root, find_roofline_files, load_roofline)
    timelines, bad_timelines = load_all(
        root, lambda _: [p for df in compares for p in find_timeline_files(df)], load_timeline)
    # The readers' reasons name files by the path they were given: make them relative to the
    # root, so the report reads the same wherever it is built from.
    problems = [f"{_rel(path, root)}: {why.replace(str(root) + os.sep, '')}"
                for path, why in skipped + bad_files + bad_sweeps + bad_roofs + bad_timelines]

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
            lines += _throughput_section(bench, bench_compares, root)
            lines += _details_section(bench, bench_compares, root)
            lines += _cycles_section(bench, bench_compares, timelines, root)
            lines += _before_after_section(bench, bench_compares, root)
        bench_sweeps = [df for df in sweeps
                        if _benchmark(str(df["benchmark"].iloc[0])) == bench]
        if bench_sweeps:
            lines += _sweep_section(bench, bench_sweeps, root)
        keys = _roofline_keys(bench_runs, bench_compares)
        bench_roofs = [r for r in roofs
                       if (r.get("env"), r.get("network"), r.get("agent", "vtrace")) in keys]
        if bench_roofs:
            lines += _roofline_section(bench, bench_roofs, root)
        lines += _references_section(bench, bench_refs)
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
