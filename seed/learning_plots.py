"""Figures of how a benchmark's runs learn: the diagnostics of ``metrics.csv`` over frames.

The reward notebook draws the return curves; this figure answers why a curve is flat or
rising: whether the policy moves (entropy, update size), how stale the actors' policy is
(|log rho|), whether the value learns (explained variance) and whether the torso still
sees its input (the share of dead ReLU units per layer). See
:mod:`seed.agents.diagnostics` for what each column is.
"""

from __future__ import annotations

import numpy as np

#: (column, axis label, y scale) of each panel, in order; ``dead_relu`` stands for every
#: ``dead_relu_<i>_<layer>`` column of the run.
PANELS = [
    ("entropy", "policy entropy (nats)", "linear"),
    ("mean_abs_log_rho", "mean |log rho| (policy lag)", "linear"),
    ("explained_variance", "explained variance of the value", "linear"),
    ("update_ratio", "||d theta|| / ||theta|| per update", "log"),
    ("grad_norm", "gradient norm before clipping", "log"),
    ("dead_relu", "dead ReLU units (share, per layer)", "linear"),
]
COLORS = {"seed": "tab:blue", "impala": "tab:orange"}
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
    """A figure with one panel per available diagnostic against env frames; None if no run
    logged any. Lines are coloured by architecture; dead-ReLU layers differ by line style."""
    import matplotlib.pyplot as plt

    panels = available_panels(runs)
    if not panels:
        return None
    cols = min(3, len(panels))
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.2 * rows), squeeze=False)
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
    fig.tight_layout()
    return fig
