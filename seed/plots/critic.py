"""The critic of a benchmark's runs against its goal's bounds
(:mod:`seed.results.critic`): explained variance and the torso output layer's dead share
against env frames, as the report judges them."""

from __future__ import annotations

import numpy as np

from seed.plots import COLORS, SPARE_COLORS, PlotError, figure
from seed.results.critic import WINDOW_FRAMES, CriticBounds, dead_column, windows

#: Frames of each window of the thin line: the shape between the judged windows' medians.
SHAPE_FRAMES = 50_000
_PANELS = [("explained_variance", "explained variance of the value (clipped to +-1)",
            "explained_variance_above", "above", (-1.05, 1.05)),
           ("dead_share", "dead share of the torso's output layer", "dead_share_below",
            "below", (-0.02, 1.02))]


def _run_colors(runs) -> list:
    """An architecture's colour for its one run; a spare colour each where it has several."""
    spare = iter(SPARE_COLORS * len(runs))
    counts = {a: sum(r.architecture == a for r in runs) for a in {r.architecture for r in runs}}
    return [COLORS.get(r.architecture) if counts[r.architecture] == 1 else next(spare)
            for r in runs]


def _medians(found, quantity: str) -> np.ndarray:
    return np.array([np.nan if getattr(w, quantity) is None else getattr(w, quantity)
                     for w in found], float)


def _draw_run(axes, run, color, after_frames: int) -> bool:
    """The run's thin and bold lines on both panels; False when it has nothing to draw."""
    dead = dead_column(run.metrics)
    shape = windows(run.metrics, 0, dead, SHAPE_FRAMES, min_rows=1)  # only drawn, not judged
    judged = windows(run.metrics, after_frames, dead)
    drawn = False
    for ax, (quantity, *_) in zip(axes, _PANELS):
        thin = _medians(shape, quantity)
        if np.isnan(thin).all():
            continue
        drawn = True
        label = f"{run.architecture} {run.run_id}"
        ax.plot([(w.start + w.end) / 2 for w in shape], thin, color=color, lw=0.8, alpha=0.6,
                label=None if judged else label)
        if judged:
            bold = _medians(judged, quantity)
            ax.plot([w.start for w in judged] + [judged[-1].end], np.append(bold, bold[-1]),
                    color=color, lw=2.2, drawstyle="steps-post", label=label)
    return drawn


def critic_figure(runs, bounds: CriticBounds, title: str = ""):
    """Explained variance (left) and the dead share of the torso's output layer (right)
    against env frames, per run: thin, the median of each 50K frames; bold steps, the
    median of each window the report judges (from ``bounds.after_frames``, see
    :mod:`seed.results.critic`); dashed, the bound; dotted, where judging starts. PlotError
    when no run logged either quantity."""
    fig, axes = figure(1, 2, size=(12, 4))
    axes = list(axes[0])
    drawn = [_draw_run(axes, run, color, bounds.after_frames)
             for run, color in zip(runs, _run_colors(runs))]
    if not any(drawn):
        raise PlotError("no run logged explained variance or dead ReLU shares: no critic to draw")
    for ax, (_, label, field, word, ylim) in zip(axes, _PANELS):
        bound = getattr(bounds, field)
        if bound is not None:
            ax.axhline(bound, color="black", ls="--", lw=1, label=f"goal: {word} {bound:g}")
        ax.axvline(bounds.after_frames, color="gray", ls=":", lw=1,
                   label=f"judged from {bounds.after_frames:,} frames")
        ax.set_ylim(*ylim)
        ax.set_title(label, fontsize=9)
        ax.set_xlabel("env frames", fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    name = f"{title}: " if title else ""
    fig.suptitle(f"{name}thin = median per {SHAPE_FRAMES:,} frames; bold = median per "
                 f"{WINDOW_FRAMES:,}-frame window, as the report judges the goal", fontsize=9)
    return fig
