"""Throughput of the two architectures: how many env frames per second each reaches.

* :func:`ratio_figure`: the answer at a glance, the SEED/IMPALA ratio of steady frames/s
  of every ``seed compare`` (one dot each), grouped by benchmark, mode and network, with
  the median and spread of each group's repeats.
* :func:`runs_fps_figure`: every run's steady frames/s, per benchmark, mode and
  architecture; :func:`fps_over_time_figure`: frames/s per log interval over wall time.
* :func:`sweep_figure`: a model-size sweep, frames/s (and frames per CPU-second) against
  the network's inference cost.
* :func:`roofline_figure`: each architecture's frames/s as a fraction of this machine's
  ceiling.

Frames are env frames (emulator frames: Atari counts 4 per step with frame skip 4).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from seed.plots import COLORS, PlotError, figure, frames_label

_ARCHS = ("seed", "impala")
_MARKERS = ("o", "^", "s", "D", "v", "P", "X")


def _archs(names) -> list[str]:
    names = set(names)
    return [a for a in _ARCHS if a in names] + sorted(names - set(_ARCHS))


def ratio_figure(ratios: pd.DataFrame):
    """SEED/IMPALA steady frames/s, one row per group of repeated compares, one dot per
    compare; the median of a group as a bar, its min-max as a line, and a line at 1
    (left of it IMPALA is faster). Dots whose runs set a data-path option get their own
    marker. ``ratios`` is :func:`seed.results.tables.compare_ratios`'s table; PlotError when it
    has no ratio."""
    if ratios is None or not len(ratios) or ratios["fps_ratio"].isna().all():
        raise PlotError("no compare with a SEED/IMPALA ratio: nothing to draw "
                        "(seed compare writes compare.csv and compare.json)")
    ratios = ratios.dropna(subset=["fps_ratio"])
    groups = list(dict.fromkeys(ratios["group"]))
    options = sorted(set(ratios["options"]), key=lambda o: (o != "", o))
    marker = dict(zip(options, _MARKERS * (1 + len(options) // len(_MARKERS))))
    fig, axes = figure(1, 1, size=(9.5, 1.6 + 0.55 * len(groups)))
    ax = axes[0, 0]
    for i, group in enumerate(groups):
        _ratio_row(ax, len(groups) - 1 - i,
                   ratios[ratios["group"] == group].sort_values("fps_ratio"), marker)
    lo = min(float(ratios["fps_ratio"].min()), 1.0) / 1.2
    hi = max(float(ratios["fps_ratio"].max()), 1.0) * 1.2
    ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    ticks = [t for t in (0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10) if lo <= t <= hi]
    ax.set_xticks(ticks, [f"{t:g}x" for t in ticks])
    ax.minorticks_off()
    ax.axvline(1.0, color="black", lw=0.8, ls="--", zorder=2)
    ax.set_ylim(-0.6, len(groups) - 0.4)
    ax.set_yticks(range(len(groups)), list(reversed(groups)), fontsize=8)
    ax.grid(axis="x", alpha=0.3)
    ax.set_xlabel("SEED / IMPALA steady env frames per second (log scale):  "
                  "\u2190 IMPALA faster | SEED faster \u2192", fontsize=8)
    ax.set_title("SEED/IMPALA throughput: one dot per seed compare (SEED, IMPALA, SEED again "
                 "in one session), repeats in one row", fontsize=9)
    handles = [Line2D([], [], color="black", lw=2, label="median of the row")]
    handles += [Line2D([], [], ls="", marker=marker[o], color="tab:purple",
                       label=o or "default data path") for o in options]
    fig.legend(handles=handles, loc="outside lower center", ncol=len(handles), fontsize=7,
               frameon=False)
    return fig


def _ratio_row(ax, y: int, sub: pd.DataFrame, marker: dict) -> None:
    """One group's compares at height ``y``: their min-max, median and dots."""
    values = sub["fps_ratio"].to_numpy(float)
    offsets = np.linspace(-0.18, 0.18, len(values)) if len(values) > 1 else [0.0]
    ax.plot([values.min(), values.max()], [y, y], color="0.75", lw=3, zorder=1,
            solid_capstyle="round")
    median = float(np.median(values))
    ax.plot([median, median], [y - 0.32, y + 0.32], color="black", lw=2, zorder=3)
    for option, value, dy in zip(sub["options"], values, offsets):
        ax.scatter(value, y + dy, marker=marker[option], s=36, color="tab:purple",
                   edgecolor="white", linewidth=0.6, zorder=4)
    spread = f" ({values.min():.2f}-{values.max():.2f})" if len(values) > 1 else ""
    ax.annotate(f"{median:.2f}x{spread}, n={len(values)}", (1.01, y),
                xycoords=("axes fraction", "data"), va="center", fontsize=8)


def runs_fps_figure(table: pd.DataFrame):
    """Steady frames/s of every run (:func:`seed.results.tables.runs_table`), bars per benchmark
    and mode, one per architecture: the mean over runs, whiskers min-max, the number of
    runs at the foot and the SEED/IMPALA ratio of the means on top. PlotError without
    runs."""
    table = table.dropna(subset=["steady_fps"]) if len(table) else table
    if not len(table):
        raise PlotError("no run with a steady frames/s: no per-run throughput to draw")
    by = (table.groupby(["benchmark", "mode", "arch"])["steady_fps"]
          .agg(["mean", "min", "max", "count"]).reset_index())
    keys = list(by[["benchmark", "mode"]].drop_duplicates().itertuples(index=False, name=None))
    archs = _archs(by["arch"])
    fig, axes = figure(1, 1, size=(max(5.0, 1.9 * len(keys) + 2), 4.2))
    ax = axes[0, 0]
    width = 0.8 / len(archs)
    x0 = np.arange(len(keys))
    for j, arch in enumerate(archs):
        sub = by[by["arch"] == arch].set_index(["benchmark", "mode"]).reindex(keys)
        x = x0 + (j - (len(archs) - 1) / 2) * width
        lo = (sub["mean"] - sub["min"]).fillna(0).to_numpy()
        hi = (sub["max"] - sub["mean"]).fillna(0).to_numpy()
        ax.bar(x, sub["mean"].fillna(0), width, yerr=[lo, hi], capsize=3, label=arch,
               color=COLORS.get(arch, "gray"))
        for xi, n in zip(x, sub["count"].fillna(0)):
            ax.annotate(f"n={int(n)}", (xi, 0), ha="center", va="bottom", fontsize=7)
    means = by.set_index(["benchmark", "mode", "arch"])["mean"]
    top = ax.get_ylim()[1]
    for i, (bench, mode) in enumerate(keys):
        s, m = means.get((bench, mode, "seed")), means.get((bench, mode, "impala"))
        if s is not None and m:
            ax.annotate(f"SEED/IMPALA {s / m:.2f}x", (i, top), ha="center", va="top",
                        fontsize=8)
    ax.set_xticks(x0, [f"{b}\n{m}" for b, m in keys], fontsize=8)
    ax.set_ylabel("steady-state " + frames_label(table["frames_per_step"]) + " / s",
                  fontsize=8)
    ax.set_title("Steady frames/s of every run, from its metrics.csv (bar: mean over runs, "
                 "whiskers: min-max)", fontsize=9)
    ax.legend(loc="center right")
    return fig


def fps_over_time_figure(runs):
    """Frames/s per log interval against wall time, every run, one panel per benchmark.
    PlotError without runs."""
    if not runs:
        raise PlotError("no runs: no frames/s over time to draw")
    benches = sorted({r.benchmark for r in runs})
    fig, axes = figure(len(benches), 1, size=(7, 3 * len(benches)))
    for ax, bench in zip(axes[:, 0], benches):
        these = [r for r in runs if r.benchmark == bench]
        seen = set()
        for r in these:
            ax.plot(r.metrics["wall_time"], r.metrics["fps"], color=COLORS.get(r.architecture),
                    alpha=0.8, label=None if r.architecture in seen else r.architecture)
            seen.add(r.architecture)
        ax.set_title(f"{bench}: frames/s per log interval ({len(these)} run(s))", fontsize=9)
        ax.set_xlabel("wall time (s)")
        ax.set_ylabel(frames_label([r.frames_per_step for r in these]) + " / s", fontsize=8)
        ax.legend(fontsize=8)
    return fig


def _numeric(sweep: pd.DataFrame, column: str) -> pd.Series | None:
    """A column's positive values (NaN elsewhere: the axes are logarithmic), None when it
    is absent or has none."""
    if column not in sweep.columns:
        return None
    values = pd.to_numeric(sweep[column], errors="coerce")
    values = values.where(values > 0)
    return values if values.notna().any() else None


def _sweep_x(sweep: pd.DataFrame) -> tuple[pd.Series, str, bool]:
    """(x, its label, log scale): the inference cost at an IMPALA actor's batch, else the
    parameters, else the sizes in order."""
    for column, label in (("inf_cpu_us_per_sample_actor_batch",
                           "inference cost at an IMPALA actor's batch (CPU us per sample)"),
                          ("parameters", "network parameters")):
        x = _numeric(sweep, column)
        if x is not None and x.notna().all():
            return x, label, True
    return pd.Series(np.arange(len(sweep)), index=sweep.index), "network size", False


def sweep_figure(sweep: pd.DataFrame, title: str = "", mode: str = ""):
    """A model-size sweep (rows of sweep.csv, :attr:`seed.results.sweep.Sweep.sizes`): steady
    frames/s of both architectures and, where measured, frames per CPU-second of the
    process tree, against the inference cost per sample at an IMPALA actor's batch (the
    cost the IMPALA side pays; SEED pays the lower cost at its larger batch), else the
    parameter count, else the sizes in order. PlotError without rows."""
    if sweep is None or not len(sweep):
        raise PlotError("the sweep has no rows: nothing to draw")
    x, xlabel, log_x = _sweep_x(sweep)
    panels = [("seed_fps", "impala_fps",
               f"steady env frames/s{f' ({mode})' if mode else ''}")]
    if _numeric(sweep, "seed_frames_per_cpu_s") is not None:
        panels.append(("seed_frames_per_cpu_s", "impala_frames_per_cpu_s",
                       "env frames per CPU-second of the process tree"))
    order = np.argsort(x.to_numpy(float), kind="stable")
    fig, axes = figure(1, len(panels), size=(5.2 * len(panels), 4.2))
    for ax, (seed_col, impala_col, ylabel) in zip(axes[0], panels):
        tops = np.full(len(sweep), np.nan)
        for arch, col, mark, label in (("seed", seed_col, "o", "SEED (mean of its runs)"),
                                       ("impala", impala_col, "s", "IMPALA")):
            y = _numeric(sweep, col)
            if y is None:
                continue
            xs, ys = x.to_numpy(float)[order], y.to_numpy(float)[order]
            ok = ~np.isnan(ys)
            ax.plot(xs[ok], ys[ok], marker=mark, color=COLORS[arch], label=label)
            tops = np.fmax(tops, y.to_numpy(float))
        for xi, top, size in zip(x, tops, sweep["size"]):
            if not np.isnan(top):
                ax.annotate(str(size), (xi, top), textcoords="offset points", xytext=(4, 4),
                            fontsize=8)
        if log_x:
            ax.set_xscale("log")
        else:
            ax.set_xticks(np.arange(len(sweep)), sweep["size"])
        ax.set_yscale("log")
        ax.set_xlabel(xlabel, fontsize=8)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    if title:
        fig.suptitle(title, fontsize=9)
    return fig


def roofline_figure(fractions: pd.DataFrame):
    """Each architecture's steady frames/s over this machine's ceiling
    (:func:`seed.results.tables.roofline_table`), one pair of bars per source and mode: the
    mean over runs, whiskers min-max, a line at 1. PlotError without fractions."""
    if fractions is None or not len(fractions):
        raise PlotError("no roofline fraction: no compare.json holds one and no run matches "
                        "a roofline's env, network and shape")
    g = (fractions.groupby(["source", "mode", "arch"], sort=False)["fraction"]
         .agg(["mean", "min", "max"]).reset_index())
    keys = list(g[["source", "mode"]].drop_duplicates().itertuples(index=False, name=None))
    fig, axes = figure(1, 1, size=(10, 1.0 + 0.6 * len(keys)))
    ax = axes[0, 0]
    y0 = np.arange(len(keys))[::-1]
    for j, arch in enumerate(_ARCHS):
        sub = g[g["arch"] == arch].set_index(["source", "mode"]).reindex(keys)
        y = y0 + (0.5 - j) * 0.4
        lo = (sub["mean"] - sub["min"]).fillna(0).to_numpy()
        hi = (sub["max"] - sub["mean"]).fillna(0).to_numpy()
        ax.barh(y, sub["mean"].fillna(0), 0.4, xerr=[lo, hi], capsize=3, label=arch,
                color=COLORS[arch])
    ax.axvline(1.0, color="black", lw=0.8, ls="--")
    ax.set_yticks(y0, [f"{s}\n{m} mode" for s, m in keys], fontsize=7)
    ax.set_ylim(-0.6, len(keys) - 0.4)
    ax.set_xlabel("steady env frames/s / roofline ceiling (env frames/s)", fontsize=8)
    ax.set_title("Fraction of the machine's ceiling (mean over runs; whiskers min-max)",
                 fontsize=9)
    ax.legend(fontsize=8)
    return fig
