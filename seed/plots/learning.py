"""How a benchmark's runs learn: reward curves, and the diagnostics that say why.

:func:`reward_figure` draws each run's episode return (the raw game score) against env
frames and against wall time; :func:`diagnostics_figure` draws the learning diagnostics of
``metrics.csv`` against env frames, which answer why a curve is flat or rising: whether
the policy moves (entropy, update size), how stale the actors' policy is (|log rho|),
whether the value learns (explained variance) and whether the torso still sees its input
(the share of dead ReLU units per layer; :mod:`seed.agents.diagnostics` says what each
column is).
"""

from __future__ import annotations

import numpy as np

from seed.plots import COLORS, SPARE_COLORS, PlotError, figure, frames_label
from seed.results.curves import curve_over_runs, return_curve, rolling_returns
from seed.results.run_dirs import (
    evaluation_episodes,
    learning_settings,
    training_episodes,
)

#: Episodes a run's rolling mean spans, at most (a tenth of its episodes when it has fewer
#: than ten times as many).
ROLLING = 100


def rolling_window(episodes: int, rolling: int = ROLLING) -> int:
    return max(1, min(rolling, episodes // 10))


def _curves(run, rolling: int):
    """(window, rolled training episodes, rolled evaluation episodes or None) of a run."""
    train_ep = training_episodes(run.episodes)
    eval_ep = evaluation_episodes(run.episodes)
    window = rolling_window(len(train_ep), rolling)
    rolled_eval = (rolling_returns(eval_ep, rolling_window(len(eval_ep), rolling))
                   if len(eval_ep) else None)
    return window, rolling_returns(train_ep, window), rolled_eval


def _setting_groups(members):
    """``{(arch, settings): [(run, curve, eval curve)]}``: runs are averaged only with runs
    of the same architecture and learning settings
    (:func:`seed.results.run_dirs.learning_settings`)."""
    groups: dict = {}
    for run, _, c, ev in members:
        key = (run.architecture, learning_settings(run.config))
        groups.setdefault(key, []).append((run, c, ev))
    return groups


def _reward_axis(ax, members, x: str, xlabel: str) -> None:
    groups = _setting_groups(members)
    spare = iter(SPARE_COLORS * len(groups))
    for arch in sorted({a for a, _ in groups}):
        settings = [k for k in groups if k[0] == arch]
        for key in settings:
            mine = groups[key]
            # One setting: the architecture's colour and name. Several: each a colour of
            # its own, no architecture's and no other setting's, named by its runs.
            color = COLORS.get(arch) if len(settings) == 1 else next(spare)
            name = arch if len(settings) == 1 else \
                f"{arch} {', '.join(run.run_id for run, _, _ in mine)}"
            for run, c, _ in mine:
                xs, ys = return_curve(c, x)
                ax.plot(xs, ys, color=color, lw=0.8, marker="." if len(xs) < 30 else None,
                        alpha=0.35 if len(mine) > 1 else 0.9,
                        label=None if len(mine) > 1 else f"{name} (1 run)")
            for run, _, ev in mine:  # evaluation envs (greedy, never trained on), dashed
                if ev is not None:
                    xs, ys = return_curve(ev, x)
                    ax.plot(xs, ys, color=color, lw=0.8, ls="--", label=f"{name} eval envs")
            if len(mine) > 1:
                agg = curve_over_runs([return_curve(c, x) for _, c, _ in mine])
                if len(agg):
                    seeds = ", ".join(str(run.seed) for run, _, _ in mine)
                    ax.plot(agg["x"], agg["median"], color=color, lw=2,
                            label=f"{name} (median of {len(mine)} runs, seeds {seeds})")
                    ax.fill_between(agg["x"], agg["min"], agg["max"], color=color, alpha=0.15)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel("episode return (rolling mean)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)


#: Line styles of the reference returns drawn across reward curves, one per reference.
REFERENCE_STYLES = ["--", ":", "-.", (0, (5, 1, 1, 1, 1, 1))]


def _reference_lines(ax, lines) -> None:
    """Each ``(label, returns)`` as horizontal lines in black, one style per reference."""
    for (label, returns), style in zip(lines, REFERENCE_STYLES * len(lines)):
        for i, value in enumerate(returns):
            ax.axhline(value, color="black", lw=1, ls=style, label=None if i else label)


def reward_figure(runs, rolling: int = ROLLING, title: str = "", lines=()):
    """Episode return against env frames (left) and wall time (right), one colour per
    architecture (per run group where an architecture's runs differ in their learning
    settings: only runs of one setting are put together). Each run's curve, thin, is the
    rolling mean of its last ``rolling`` training episodes (fewer for a short run, see
    :func:`rolling_window`); a group of several runs (seeds) also gets their median, bold,
    and their min-max band, both only over the frames (or seconds) every run of the group
    reached; evaluation envs' episodes (R2D2's greedy envs) are dashed. Runs without
    finished episodes are left out; PlotError if that leaves none. ``lines``: published
    returns to set the curves against, ``(label, [return, ...])`` each, drawn across both
    panels (black, one line style per label)."""
    members = [(run, *_curves(run, rolling)) for run in runs
               if len(training_episodes(run.episodes))]
    if not members:
        raise PlotError("no run has finished training episodes: no reward curve to draw")
    windows = sorted({w for _, w, _, _ in members})
    fig, axes = figure(1, 2, size=(12, 4))
    left, right = axes[0]
    _reward_axis(left, members, "env_frames",
                 frames_label([run.frames_per_step for run, *_ in members]))
    _reward_axis(right, members, "wall_time", "wall time (s)")
    for ax in (left, right):
        _reference_lines(ax, lines)
        if lines:
            ax.legend(fontsize=8)
    name = f"{title}: " if title else ""
    left.set_title(f"{name}return against env frames", fontsize=9)
    right.set_title(f"{name}return against wall time", fontsize=9)
    caveats = sorted({c for run, *_ in members if (c := run.engine_caveat)})
    fig.suptitle("\n".join([f"{name}rolling mean over {', '.join(map(str, windows))} episodes; "
                            "bold = median over runs, band = min-max, where every run reached",
                            *caveats]), fontsize=9)
    return fig


#: (column, axis label, y scale) of each diagnostics panel, in order; ``dead_relu`` stands
#: for every ``dead_relu_<i>_<layer>`` column of the run.
PANELS = [
    ("entropy", "policy entropy (nats)", "linear"),
    ("mean_abs_log_rho", "mean |log rho| (policy lag)", "linear"),
    ("explained_variance", "explained variance of the value", "linear"),
    ("update_ratio", "||d theta|| / ||theta|| per update", "log"),
    ("grad_norm", "gradient norm before clipping", "log"),
    ("dead_relu", "dead ReLU units (share, per layer)", "linear"),
]
_STYLES = ["-", "--", ":", "-."]


def _series(run, column):
    """(frames, values) of one column of a run's metrics, rows without a value dropped."""
    m = run.metrics
    if column not in m.columns:
        return np.zeros(0), np.zeros(0)
    rows = m[["env_frames", column]].dropna()
    return rows["env_frames"].to_numpy(float), rows[column].to_numpy(float)


def dead_relu_columns(run) -> list[str]:
    return [c for c in run.metrics.columns if c.startswith("dead_relu_")]


def available_panels(runs) -> list[tuple[str, str, str]]:
    """The panels at least one run has a value for (runs from before the diagnostics have
    none, and R2D2 has no entropy or rho)."""
    out = []
    for column, label, scale in PANELS:
        columns = ([c for r in runs for c in dead_relu_columns(r)] if column == "dead_relu"
                   else [column])
        if any(_series(r, c)[0].size for r in runs for c in columns):
            out.append((column, label, scale))
    return out


def diagnostics_figure(runs, title: str = ""):
    """One panel per diagnostic some run logged, against env frames; lines coloured by
    architecture, dead-ReLU layers told apart by line style. PlotError if no run logged
    any (runs from before the diagnostics existed)."""
    panels = available_panels(runs)
    if not panels:
        raise PlotError("no run logged learning diagnostics (runs from before they existed)")
    cols = min(3, len(panels))
    rows = -(-len(panels) // cols)
    fig, axes = figure(rows, cols, size=(5 * cols, 3.2 * rows))
    for ax, (column, label, scale) in zip(axes.flat, panels):
        for run in runs:
            color = COLORS.get(run.architecture)
            columns = dead_relu_columns(run) if column == "dead_relu" else [column]
            for i, c in enumerate(columns):
                x, y = _series(run, c)
                if not x.size:
                    continue
                name = c.removeprefix("dead_relu_") if column == "dead_relu" else None
                ax.plot(x, y, color=color, lw=0.9, alpha=0.85, ls=_STYLES[i % len(_STYLES)],
                        label=f"{run.architecture} {run.run_id}" + (f" {name}" if name else ""))
        if scale == "log":
            ax.set_yscale("log")
        if column == "explained_variance":  # the first steps (and a resume's) can be -50
            ax.set_ylim(-1.05, 1.05)
        ax.set_title(label, fontsize=9)
        ax.set_xlabel("env frames", fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig
