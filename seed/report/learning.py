"""The report's learning section of a benchmark: its training runs, their reward curves,
frames and wall time to each threshold, the goal, and the diagnostics each run ended with."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from seed.report.references import REFERENCES, ReportError
from seed.report.text import frames_text, heading, plural, rel, span
from seed.results.curves import final_return, first_reaching, goal_outcome
from seed.results.run_dirs import Run, evaluation_episodes, learning_settings, training_episodes
from seed.results.text import markdown_table, num

FIGURES = "report"  # folder beside REPORT.md, of the figures the report embeds
WINDOW = 100  # episodes in the mean that must reach a threshold, unless references.yaml says
#: Learning diagnostics (metrics.csv columns) the report gives each run's last value of.
END_DIAGNOSTICS = {"entropy": "entropy", "explained_variance": "explained variance",
                   "mean_abs_log_rho": "policy lag abs(log rho)",
                   "update_ratio": "update ratio", "replay_ratio": "replay ratio"}



def run_status(run: Run) -> str:
    if run.summary is None:
        return "not finished (no summary.json): in progress or stopped"
    return f"finished (stopped by {run.summary.get('stopped_by', '?')})"


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
            hits = [first_reaching(episodes(r.episodes), t, window) for r in members]
            reached = [h for h in hits if h is not None]
            row.append(f"{span([h['env_frames'] for h in reached], lambda v: frames_text(v))}; "
                       f"{span([h['wall_time'] for h in reached], lambda v: f'{v:,.0f} s')} "
                       f"[{len(reached)}/{len(members)}]")
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
    out = ["", f"Goal: a mean of {window} consecutive training episodes of {target:g} within "
           f"{frames_text(budget)} frames" + (f" ({why})" if why else "") + ". Per run: met (at "
           "the frames it first did), missed (it ran past the budget without; where it got "
           "there later, if it did) or open (it stopped short of the budget).", ""]
    outcomes: dict = {}
    for r in runs:
        ran = int(r.metrics["env_frames"].max())
        kind, frames = goal_outcome(training_episodes(r.episodes), ran, target, budget, window)
        note = r.run_id + (f" at {frames_text(frames)}" if frames is not None else "")
        if kind == "open":
            note += f", stopped at {frames_text(ran)}"
        outcomes.setdefault(r.architecture, {"met": [], "missed": [], "open": []})[kind].append(
            note)
    rows = [[arch, str(sum(map(len, o.values())))] +
            [f"{len(o[k])}" + (f" ({'; '.join(o[k])})" if o[k] else "")
             for k in ("met", "missed", "open")]
            for arch, o in sorted(outcomes.items())]
    return out + markdown_table(["architecture", "runs", "met", "missed", "open"], rows)


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


def section(bench: str, runs: list[Run], refs: dict, root: Path,
                      out_dir: Path) -> list[str]:
    """Run paths are written relative to the results root, figure links to the report."""
    from seed.plots import PlotError, file_name, save
    from seed.plots.learning import reward_figure
    out = [heading(bench, "learning"), "", f"{plural(len(runs), 'training run')}.", ""]
    try:
        path = save(reward_figure(runs, title=bench),
                    out_dir / FIGURES / f"{file_name(bench)}_reward.png")
        out += [f"![{bench} reward curves]({rel(path, out_dir)})", ""]
    except PlotError as e:
        out += [f"No reward curve: {e}.", ""]
    out += markdown_table(["run", "arch", "seed", "env frames", "wall time", "learner steps",
                           "episodes", "last 100 mean", "status"],
                          [[rel(r.path, root), r.architecture, num(r.seed, "d"),
                    frames_text(int(r.metrics["env_frames"].max())),
                    f"{float(r.metrics['wall_time'].max()):,.0f} s",
                    num(_last(r.metrics, "learner_steps")), str(len(r.episodes)),
                    num(final_return(training_episodes(r.episodes)), ".2f"), run_status(r)]
                   for r in runs])
    thresholds, window = refs.get("thresholds") or [], int(refs.get("window", WINDOW))
    eval_window = int(refs["evaluation_window"]) if refs.get("evaluation_window") else None
    if thresholds:
        out += ["", f"Frames and wall time until the mean of {window} consecutive training "
                "episodes first reaches each return: median (min-max) over the runs of one "
                "setting that reached it; [reached/runs].", ""]
        header = ["architecture", "runs", *[f"return {t:g}" for t in thresholds]]
        out += markdown_table(header, threshold_rows(runs, thresholds, window))
        if refs.get("goal") is not None:
            out += _goal_lines(bench, runs, refs["goal"], window)
        if eval_window and any(len(evaluation_episodes(r.episodes)) for r in runs):
            out += ["", f"The same for the evaluation envs (greedy, never trained on): the "
                    f"mean of {eval_window} consecutive evaluation episodes.", ""]
            out += markdown_table(header, threshold_rows(runs, thresholds, eval_window,
                                                         evaluation_episodes))
    out += _end_section(runs, root, eval_window)
    return out + [""]
