"""The report's learning section of a benchmark: its training runs, their reward curves,
frames and wall time to each threshold, the goal, and the diagnostics each run ended with."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from seed.report import critic
from seed.report.load import LOADED, load_cell, marked
from seed.report.references import REFERENCES, ReportError, reward_lines
from seed.report.text import FIGURES, frames_text, heading, plural, rel, span
from seed.results.curves import final_return, first_reaching, goal_outcome, goal_over_seeds
from seed.results.run_dirs import Run, evaluation_episodes, learning_settings, training_episodes
from seed.results.tables import foreign_load
from seed.results.text import markdown_table, num

WINDOW = 100  # episodes in the mean that must reach a threshold, unless references.yaml says
#: Learning diagnostics (metrics.csv columns) the report gives each run's last value of.
END_DIAGNOSTICS = {"entropy": "entropy", "explained_variance": "explained variance",
                   "mean_abs_log_rho": "policy lag abs(log rho)",
                   "update_ratio": "update ratio", "replay_ratio": "replay ratio"}


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
        rows.append([name, str(len(members))] +
                    [_threshold_cell(members, t, window, episodes) for t in thresholds])
    return rows


def _threshold_cell(members: list[Run], threshold: float, window: int, episodes) -> str:
    """Frames and wall time of the ``members`` that reached ``threshold`` (the wall time
    marked by their foreign load up to the crossing), [reached/runs], and how many of the
    crossings did not hold."""
    hits = [(r, first_reaching(episodes(r.episodes), threshold, window)) for r in members]
    reached = [(r, h) for r, h in hits if h is not None]
    wall = span([h["wall_time"] for _, h in reached], lambda v: f"{v:,.0f} s")
    if reached:
        wall = marked(wall, [foreign_load(r.metrics, h["env_frames"]) for r, h in reached])
    lost = sum(not h["held"] for _, h in reached)
    return (f"{span([h['env_frames'] for _, h in reached], lambda v: frames_text(v))}; "
            f"{wall} [{len(reached)}/{len(members)}]" + (f" ({lost} not held)" if lost else ""))


def _goal_lines(bench: str, runs: list[Run], goal, window: int) -> list[str]:
    """The benchmark's goal (``goal: {return, frames, why}`` in references.yaml) and, per
    architecture, which runs met it, which missed it and which stopped before deciding it."""
    try:
        target, budget = float(goal["return"]), int(goal["frames"])
        why = str(goal.get("why", "")).strip()
    except (TypeError, KeyError, ValueError):
        raise ReportError(f"{REFERENCES}: {bench}: goal needs a numeric return and frames, "
                          f"as goal: {{return: 21, frames: 20000000, why: ...}}") from None
    bounds = critic.goal_bounds(bench, goal)
    if goal.get("seeds") is not None:
        if bounds is not None:
            raise ReportError(f"{REFERENCES}: {bench}: a goal's critic is judged per run, not "
                              "over seeds: give it seeds or critic, not both")
        return _goal_over_seeds_lines(bench, runs, goal, target, budget, why, window)
    out = ["", f"Goal: a mean of {window} consecutive training episodes of {target:g} within "
           f"{frames_text(budget)} frames"
           + (f", with {critic.bounds_words(bounds)}" if bounds else "")
           + (f" ({why})" if why else "") + ". Per run: met (at "
           "the frames it first did; \"not held\" where the mean fell below it again within "
           f"the next {window} episodes or was reached only in the run's last log row), "
           "missed (it ran past the budget without; where it got there later, if it did) or "
           "open (it stopped short of the budget)."
           + (critic.goal_rule(bench) if bounds else ""), ""]
    outcomes: dict = {}
    for r in runs:
        ran = int(r.metrics["env_frames"].max())
        kind, frames = goal_outcome(training_episodes(r.episodes), ran, target, budget, window)
        note = r.run_id + (f" at {frames_text(frames)}" if frames is not None else "")
        if kind == "met" and not first_reaching(training_episodes(r.episodes), target,
                                                window)["held"]:
            note += ", not held"
        if kind == "open":
            note += f", stopped at {frames_text(ran)}"
        if bounds is not None:
            kind, note = critic.goal_run(r, bounds, kind, note)
        outcomes.setdefault(r.architecture, {"met": [], "missed": [], "open": []})[kind].append(
            note)
    rows = [[arch, str(sum(map(len, o.values())))] +
            [f"{len(o[k])}" + (f" ({'; '.join(o[k])})" if o[k] else "")
             for k in ("met", "missed", "open")]
            for arch, o in sorted(outcomes.items())]
    return out + markdown_table(["architecture", "runs", "met", "missed", "open"], rows)


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
           f"of {window} consecutive training episodes at {frames_text(budget)} frames reaches "
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
        rows.append([arch, kind, num(median, ".2f"),
                     "; ".join(f"seed {k}: {v:.2f}" for k, v in sorted(values.items()))
                     or "-"])
    return out + markdown_table(["architecture", "goal", f"median at {frames_text(budget)}",
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
        row = [rel(r.path, root)] + [num(_last(r.metrics, c), ".3g") for c in columns]
        if evals:
            row.append(num(final_return(evaluation_episodes(r.episodes), eval_window), ".2f"))
        rows.append(row)
    return (["", "At each run's end: the last logged value of each learning diagnostic "
             "(`docs/design.md` says what each measures).", ""] + markdown_table(header, rows))


def _runs_table(runs: list[Run], root: Path) -> list[str]:
    """One row per training run: how far it got, how it ended, the machine's load beside it."""
    out = markdown_table(["run", "arch", "seed", "env frames", "wall time", "learner steps",
                          "training episodes", "last 100 mean", "status", "foreign load"],
                         [[rel(r.path, root), r.architecture, num(r.seed, "d"),
                           frames_text(int(r.metrics["env_frames"].max())),
                           f"{float(r.metrics['wall_time'].max()):,.0f} s",
                           num(_last(r.metrics, "learner_steps")),
                           str(len(training_episodes(r.episodes))),
                           num(final_return(training_episodes(r.episodes)), ".2f"),
                           run_status(r), load_cell(r.metrics)]
                          for r in runs])
    return out + ["", f"Foreign load: the share of the machine's CPU used outside the run's "
                  f"process tree, per metrics row (`foreign_cpu`): the mean and max over the "
                  f"run's rows, marked loaded when the mean is above {LOADED:.0%} (the wall "
                  "time beside it was taken under that load), and a run from before the record "
                  "reads \"load not recorded\". Last 100 mean: the training episodes' (counted "
                  "in training episodes), as summary.json has it."]


def _threshold_lines(bench: str, runs: list[Run], refs: dict, window: int,
                     eval_window: int | None) -> list[str]:
    """Frames and wall time to each threshold of ``refs``, the goal, and the same for the
    evaluation envs where the runs have them."""
    thresholds = refs["thresholds"]
    out = ["", f"Frames and wall time until the mean of {window} consecutive training "
           "episodes first reaches each return: median (min-max) over the runs of one "
           "setting that reached it; [reached/runs]; the foreign load of those runs up "
           "to their crossing; \"not held\" counts crossings lost again within the next "
           f"{window} episodes or reached only in a run's last log row.", ""]
    header = ["architecture", "runs", *[f"return {t:g}" for t in thresholds]]
    out += markdown_table(header, threshold_rows(runs, thresholds, window))
    if refs.get("goal") is not None:
        out += _goal_lines(bench, runs, refs["goal"], window)
    if eval_window and any(len(evaluation_episodes(r.episodes)) for r in runs):
        out += ["", f"The same for the evaluation envs (greedy, never trained on): the "
                f"mean of {eval_window} consecutive evaluation episodes.", ""]
        out += markdown_table(header, threshold_rows(runs, thresholds, eval_window,
                                                     evaluation_episodes))
    return out


def section(bench: str, runs: list[Run], refs: dict, root: Path, out_dir: Path) -> list[str]:
    """Run paths are written relative to the results root, figure links to the report."""
    from seed.plots import PlotError, file_name, save
    from seed.plots.learning import reward_figure
    out = [heading(bench, "learning"), "", f"{plural(len(runs), 'training run')}.", ""]
    try:
        path = save(reward_figure(runs, title=bench, lines=reward_lines(bench, refs)),
                    out_dir / FIGURES / f"{file_name(bench)}_reward.png")
        out += [f"![{bench} reward curves]({rel(path, out_dir)})", ""]
    except PlotError as e:
        out += [f"No reward curve: {e}.", ""]
    out += _runs_table(runs, root)
    window = int(refs.get("window", WINDOW))
    eval_window = int(refs["evaluation_window"]) if refs.get("evaluation_window") else None
    if refs.get("thresholds"):
        out += _threshold_lines(bench, runs, refs, window, eval_window)
    out += _end_section(runs, root, eval_window)
    return out + [""]
