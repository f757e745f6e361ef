"""Writes notebooks/throughput.ipynb and notebooks/reward_curves.ipynb (without outputs).

The notebooks are generated so their code lives in one reviewable place; edit the
cells here and run ``python scripts/build_notebooks.py`` to rewrite them.
``scripts/run_notebooks.py`` executes them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"

SETUP = '''\
import os
from pathlib import Path

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from seed import results as R

ROOT = Path(os.environ.get("SEED_RESULTS", "results"))
PLOTS = Path(os.environ.get("SEED_PLOTS", str(ROOT / "plots")))
PLOTS.mkdir(parents=True, exist_ok=True)
COLORS = {"seed": "tab:blue", "impala": "tab:orange"}
written = []


def save(fig, name):
    path = PLOTS / name
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    written.append(path)
    print(f"wrote {path}")


def safe(name):
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in str(name))


def frames_label(fps_units):
    """Axis words for env frames, saying what a frame is for the runs shown."""
    units = sorted({int(u) for u in fps_units})
    if units == [1]:
        return "env frames (= env steps: 1 frame per step)"
    if len(units) == 1:
        return f"env frames (emulator frames = env steps x {units[0]})"
    return "env frames (emulator frames = env steps x frame skip)"


print(f"results root: {ROOT.resolve()}")
print(f"plots to:     {PLOTS.resolve()}")
'''

LOAD_RUNS = '''\
runs, skipped = R.load_runs(ROOT)
print(f"{len(runs)} run(s) found under {ROOT}")
for d, why in skipped:
    print(f"skipped {d}: {why}")
table = R.runs_table(runs)
if len(table):
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(table.to_string(index=False))
'''

# ------------------------------------------------------------------------- throughput

THROUGHPUT_INTRO = '''\
# Throughput: SEED vs IMPALA

Frames per second of both architectures on each benchmark, from

1. the runs' own `metrics.csv` (steady state by the rule of `seed compare`,
   `seed/bench/steady.py`: the rows after the first row with frames and learner steps),
2. `seed compare` outputs (`results/**/compare.csv`: SEED, IMPALA, SEED again in one session),
3. `seed roofline` (`results/roofline/*.json`): each architecture's FPS as a fraction of this
   machine's ceiling,
4. the model-size sweep (`seed compare --sweep-network`, `sweep.csv`).

A frame is an env frame: an emulator frame (Atari with frame skip 4 counts 4 per step), as the
SEED and IMPALA papers count them. Every axis says so. Reads `SEED_RESULTS` (default `results`),
writes PNGs to `SEED_PLOTS` (default `$SEED_RESULTS/plots`).
'''

RUN_FPS = '''\
# 1. Steady-state FPS per run, mean (and spread) over the runs of each benchmark x architecture.
if len(table):
    by = (table.groupby(["benchmark", "arch"])["steady_fps"]
          .agg(["mean", "std", "min", "max", "count"]).reset_index())
    print(by.to_string(index=False))
    benches = sorted(by["benchmark"].unique())
    archs = [a for a in ("seed", "impala") if a in set(by["arch"])] + \\
        sorted(set(by["arch"]) - {"seed", "impala"})
    fig, ax = plt.subplots(figsize=(max(5, 1.8 * len(benches) + 2), 4))
    width = 0.8 / len(archs)
    for j, arch in enumerate(archs):
        sub = by[by["arch"] == arch].set_index("benchmark").reindex(benches)
        x = np.arange(len(benches)) + (j - (len(archs) - 1) / 2) * width
        lo = (sub["mean"] - sub["min"]).fillna(0).to_numpy()
        hi = (sub["max"] - sub["mean"]).fillna(0).to_numpy()
        ax.bar(x, sub["mean"], width, yerr=[lo, hi], capsize=3, label=arch,
               color=COLORS.get(arch))
        for xi, n in zip(x, sub["count"].fillna(0)):
            ax.annotate(f"n={int(n)}", (xi, 0), ha="center", va="bottom", fontsize=7)
    for i, b in enumerate(benches):
        s = by[(by.benchmark == b) & (by.arch == "seed")]["mean"]
        m = by[(by.benchmark == b) & (by.arch == "impala")]["mean"]
        if len(s) and len(m) and m.iloc[0] > 0:
            ax.annotate(f"SEED/IMPALA {s.iloc[0] / m.iloc[0]:.2f}x", (i, ax.get_ylim()[1]),
                        ha="center", va="top", fontsize=8)
    ax.set_xticks(np.arange(len(benches)), benches, rotation=20)
    units = table["frames_per_step"]
    ax.set_ylabel("steady-state " + frames_label(units) + " / s", fontsize=8)
    ax.set_title("Run FPS from metrics.csv (bar: mean over runs, whiskers: min-max)",
                 fontsize=9)
    ax.legend()
    save(fig, "throughput_runs.png")
else:
    print("no runs: no per-run FPS plot")
'''

FPS_OVER_TIME = '''\
# FPS over wall time, every run (one panel per benchmark).
if runs:
    benches = sorted({r.benchmark for r in runs})
    fig, axes = plt.subplots(len(benches), 1, figsize=(7, 3 * len(benches)), squeeze=False)
    for ax, b in zip(axes[:, 0], benches):
        these = [r for r in runs if r.benchmark == b]
        seen = set()
        for r in these:
            m = r.metrics
            ax.plot(m["wall_time"], m["fps"], color=COLORS.get(r.architecture), alpha=0.8,
                    label=None if r.architecture in seen else r.architecture)
            seen.add(r.architecture)
        ax.set_title(f"{b}: FPS per log interval ({len(these)} run(s))", fontsize=9)
        ax.set_xlabel("wall time (s)")
        ax.set_ylabel(frames_label([r.frames_per_step for r in these]) + " / s", fontsize=8)
        ax.legend(fontsize=8)
    fig.tight_layout()
    save(fig, "fps_over_time.png")
'''

COMPARE = '''\
# 2. seed compare outputs: one panel per compare.csv (SEED, IMPALA, SEED in one session).
compares, bad = R.load_all(ROOT, R.find_compare_files, lambda p: R.load_compare(p, ROOT))
for p, why in bad:
    print(f"skipped {p}: {why}")
if not compares:
    print(f"not found: no compare.csv under {ROOT} (written by `seed compare`, "
          "make compare-<benchmark>); no compare plot")
else:
    cmp = pd.concat(compares, ignore_index=True)
    cols = [c for c in ("benchmark", "compare_dir", "mode", "run", "arch", "fps",
                        "learner_fps", "fps_ratio") if c in cmp.columns]
    print(cmp[cols].to_string(index=False))
    shown = compares[-12:]
    if len(compares) > len(shown):
        print(f"showing the last {len(shown)} of {len(compares)} compares")
    fig, axes = plt.subplots(len(shown), 1, figsize=(7, 2.6 * len(shown)), squeeze=False)
    for ax, df in zip(axes[:, 0], shown):
        x = np.arange(len(df))
        ax.bar(x - 0.2, df["fps"], 0.4, label="env frames/s (acting)",
               color=[COLORS.get(a, "gray") for a in df["arch"]])
        if "learner_fps" in df.columns:
            ax.bar(x + 0.2, df["learner_fps"], 0.4, label="trained env frames/s",
                   color="lightgray", edgecolor="black")
        ax.set_xticks(x, df["run"])
        rel = os.path.relpath(df["compare_dir"].iloc[0], ROOT)
        mode = df["mode"].iloc[0] or "?"
        ax.set_title(f"{rel} ({mode} mode): SEED/IMPALA {df['fps_ratio'].iloc[0]:.2f}x",
                     fontsize=9)
        ax.set_ylabel("steady env frames/s\\n(emulator frames)", fontsize=8)
        ax.legend(fontsize=7)
    fig.tight_layout()
    save(fig, "compare_fps.png")
'''

ROOFLINE = '''\
# 3. Roofline: each architecture's steady FPS as a fraction of this machine's ceiling
# (seed roofline: cores / CPU seconds per frame of simulation + inference [+ training]).
# Two sources: the fractions seed compare stored in compare.json, and every run whose env,
# network and shape match a results/roofline/*.json.
roofs, bad = R.load_all(ROOT, R.find_roofline_files, R.load_roofline)
for p, why in bad:
    print(f"skipped {p}: {why}")
if not roofs:
    print(f"not found: no {ROOT}/roofline/*.json (written by `seed roofline`)")
rows = []
for df in (compares or []):
    d = Path(df["compare_dir"].iloc[0])
    roof = R.load_compare_json(d / "compare.json").get("roofline") or {}
    for arch in ("seed", "impala"):
        if roof.get(f"{arch}_fraction") is not None:
            note = (" (roofline shape differs: " + ", ".join(roof["mismatched"]) + ")"
                    if roof.get("mismatched") else "")
            rows.append({"source": f"compare {os.path.relpath(d, ROOT)}{note}",
                         "mode": roof.get("mode", ""), "arch": arch, "run": "mean",
                         "fps": roof[f"{arch}_fraction"] * roof[f"{arch}_ceiling_fps"],
                         "ceiling": roof[f"{arch}_ceiling_fps"],
                         "fraction": roof[f"{arch}_fraction"]})
for roof in roofs:
    print(f"{roof['source']}: {roof.get('env')} / {roof.get('network')}: ceilings "
          + ", ".join(f"{k} {v:,.0f}" for k, v in roof["ceilings"].items()
                      if isinstance(v, (int, float))) + " env frames/s")
    rconf = roof.get("config", {})
    for r in runs:  # runs of the same env, network and shape as the roofline
        c = r.config
        if (c.get("env"), c.get("network")) != (roof.get("env"), roof.get("network")):
            continue
        if c.get("network_kwargs", {}) != roof.get("network_kwargs", {}):
            continue
        if any(k in rconf and rconf[k] != c.get(k)
               for k in ("actors", "envs_per_actor", "unroll_length", "batch_size")):
            continue
        mode = "train" if c.get("train", True) else "serve"
        ceiling = roof["ceilings"].get(f"{r.architecture}_{mode}")
        fps = R.steady_fps(r.metrics, mode == "train")
        if ceiling and not np.isnan(fps):
            rows.append({"source": f"runs vs {Path(roof['source']).name}", "mode": mode,
                         "arch": r.architecture, "run": r.run_id, "fps": fps,
                         "ceiling": ceiling, "fraction": fps / ceiling})
frac = pd.DataFrame(rows)
if frac.empty:
    print("no roofline fraction: no compare.json holds one and no run matches a roofline's "
          "env, network and shape (actors, envs per actor, unroll length, batch size)")
else:
    print(frac.to_string(index=False))
    g = frac.groupby(["source", "mode", "arch"], sort=False)["fraction"].agg(
        ["mean", "min", "max", "count"]).reset_index()
    keys = list(g.drop_duplicates(["source", "mode"])[["source", "mode"]]
                .itertuples(index=False, name=None))
    fig, ax = plt.subplots(figsize=(7, 1.0 + 0.9 * len(keys)))
    for j, arch in enumerate(("seed", "impala")):
        sub = g[g.arch == arch].set_index(["source", "mode"]).reindex(keys)
        y = np.arange(len(keys)) + (j - 0.5) * 0.4
        lo = (sub["mean"] - sub["min"]).fillna(0).to_numpy()
        hi = (sub["max"] - sub["mean"]).fillna(0).to_numpy()
        ax.barh(y, sub["mean"], 0.4, xerr=[lo, hi], capsize=3, label=arch,
                color=COLORS[arch])
    ax.axvline(1.0, color="black", lw=0.8, ls="--")
    ax.set_yticks(np.arange(len(keys)), [f"{s}\\n{m} mode" for s, m in keys], fontsize=7)
    ax.set_xlabel("steady env frames/s / roofline ceiling (env frames/s)")
    ax.set_title("Fraction of the machine's ceiling (mean over runs; whiskers min-max)",
                 fontsize=9)
    ax.legend()
    save(fig, "roofline_fraction.png")
'''

SWEEP = '''\
# 4. Model-size sweep: FPS of both architectures against the network's size.
sweeps, bad = R.load_all(ROOT, R.find_sweep_files, lambda p: R.load_sweep(p, ROOT))
for p, why in bad:
    print(f"skipped {p}: {why}")
if not sweeps:
    print(f"not found: no sweep.csv under {ROOT} (written by `seed compare --sweep-network`); "
          "no sweep plot")
for df in sweeps:
    rel = os.path.relpath(Path(df["source"].iloc[0]).parent, ROOT)
    cols = [c for c in ("size", "network", "parameters", "inf_cpu_us_per_sample_b1",
                        "seed_fps", "impala_fps", "fps_ratio") if c in df.columns]
    print(f"{rel}:")
    print(df[cols].to_string(index=False))
    use_params = "parameters" in df.columns and df["parameters"].notna().all()
    x = df["parameters"] if use_params else np.arange(len(df))
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for arch, col, marker in (("seed", "seed_fps", "o"), ("impala", "impala_fps", "s")):
        ok = df[col].notna()
        ax.plot(np.asarray(x)[ok], df[col][ok], marker=marker, color=COLORS[arch], label=arch)
    for xi, r in zip(x, df.itertuples()):
        ys = [v for v in (r.seed_fps, r.impala_fps) if not pd.isna(v)]
        if ys:
            ax.annotate(r.size, (xi, max(ys)), textcoords="offset points", xytext=(4, 4),
                        fontsize=8)
    if use_params:
        ax.set_xscale("log")
        ax.set_xlabel("network parameters")
    else:
        ax.set_xticks(np.arange(len(df)), df["size"])
        ax.set_xlabel("network size")
    ax.set_ylabel("steady env frames/s (emulator frames)")
    ax.set_title(f"{rel}: FPS against model size", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    save(fig, f"sweep_{safe(rel)}.png")
'''

SUMMARY = '''\
print(f"{len(written)} plot(s) written to {PLOTS}:")
for p in written:
    print(f"  {p.name}")
'''

# ------------------------------------------------------------------------- reward curves

REWARD_INTRO = '''\
# Reward curves: SEED vs IMPALA

Episode return (raw game score, unclipped) against env frames and against wall time, for both
architectures on each benchmark, from each run's `episodes.csv`. Each run's curve is a rolling
mean over its last `SEED_ROLLING` episodes (default 100, fewer for short runs); where an
architecture has several runs (seeds), the bold line is their mean on a common grid and the band
spans their min to max. Env frames are emulator frames (Atari: 4 per step with frame skip 4).
Reads `SEED_RESULTS` (default `results`), writes PNGs to `SEED_PLOTS`.
'''

LOAD_EPISODES = '''\
ROLLING = int(os.environ.get("SEED_ROLLING", "100"))
curves = {}  # run label -> episodes with return_rolling
for r in runs:
    if not R.is_training_run(r):  # compare/demo runs measure throughput, not learning
        continue
    ep = r.episodes
    if ep.empty:
        print(f"{r.label}: no finished episodes yet, left out of the reward plots")
        continue
    train_ep, eval_ep = R.training_episodes(ep), R.evaluation_episodes(ep)
    window = max(1, min(ROLLING, len(train_ep) // 10))
    rolled_eval = (R.rolling_returns(eval_ep, max(1, min(ROLLING, len(eval_ep) // 10)))
                   if len(eval_ep) else None)
    curves[r.label] = (r, window, R.rolling_returns(train_ep, window), rolled_eval)
    print(f"{r.label}: {len(train_ep)} episodes, rolling window {window}, "
          f"last return (rolling) {curves[r.label][2]['return_rolling'].iloc[-1]:.3f}"
          + (f"; {len(eval_ep)} evaluation episodes, last (rolling) "
             f"{rolled_eval['return_rolling'].iloc[-1]:.3f}" if len(eval_ep) else ""))
'''

REWARD_PLOTS = '''\
def plot_axis(ax, members, xcol, xlabel):
    for arch in sorted({r.architecture for r, _, _, _ in members}):
        mine = [(r, w, c) for r, w, c, _ in members if r.architecture == arch]
        color = COLORS.get(arch)
        for r, w, c in mine:
            x, y = R.return_curve(c, xcol)
            ax.plot(x, y, color=color, lw=0.8, marker="." if len(x) < 30 else None,
                    alpha=0.35 if len(mine) > 1 else 0.9,
                    label=None if len(mine) > 1 else f"{arch} (1 run)")
        for r, _, _, ev in members:  # evaluation envs (greedy, never trained on), dashed
            if r.architecture == arch and ev is not None:
                x, y = R.return_curve(ev, xcol)
                ax.plot(x, y, color=color, lw=0.8, ls="--", label=f"{arch} eval envs")
        if len(mine) > 1:
            agg = R.mean_curve([R.return_curve(c, xcol) for _, _, c in mine])
            if len(agg):
                ax.plot(agg["x"], agg["mean"], color=color, lw=2,
                        label=f"{arch} (mean of {len(mine)} runs)")
                ax.fill_between(agg["x"], agg["min"], agg["max"], color=color, alpha=0.15)
            else:
                print(f"  {arch}: runs do not overlap in {xcol}; no mean curve")
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel("episode return (rolling mean)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)


benches = sorted({r.benchmark for r, _, _, _ in curves.values()})
if not benches:
    print("no run has finished episodes: no reward plots")
for b in benches:
    members = [v for v in curves.values() if v[0].benchmark == b]
    windows = sorted({w for _, w, _, _ in members})
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4))
    plot_axis(a1, members, "env_frames",
              frames_label([r.frames_per_step for r, _, _, _ in members]))
    plot_axis(a2, members, "wall_time", "wall time (s)")
    a1.set_title(f"{b}: return against env frames", fontsize=9)
    a2.set_title(f"{b}: return against wall time", fontsize=9)
    fig.suptitle(f"{b}: rolling mean over {', '.join(map(str, windows))} episodes; "
                 "band = min-max over runs", fontsize=9)
    fig.tight_layout()
    save(fig, f"reward_{safe(b)}.png")
'''

DIAGNOSTICS = '''\
# Learning diagnostics per benchmark (seed/learning_plots.py): does the policy move, how stale
# are the actors, does the value learn, does the torso still see its input?
from seed import learning_plots

for b in benches:
    members = [v[0] for v in curves.values() if v[0].benchmark == b]
    fig = learning_plots.diagnostics_figure(members, f"{b}: learning diagnostics")
    if fig is None:
        print(f"{b}: no run logged learning diagnostics (runs from before they existed)")
        continue
    save(fig, f"diagnostics_{safe(b)}.png")
'''

FINAL_TABLE = '''\
# Final return per benchmark x architecture: mean of each run's last 100 episodes, over the
# training runs (compare and demo runs measure throughput and would pass for seeds here).
learning = R.runs_table([r for r in runs if R.is_training_run(r)])
if len(learning):
    final = (learning.dropna(subset=["final_return"]).groupby(["benchmark", "arch"])
             .agg(runs=("final_return", "count"), mean=("final_return", "mean"),
                  std=("final_return", "std"), eval_mean=("final_eval_return", "mean"),
                  env_frames=("env_frames", "mean"))
             .reset_index())
    print(final.to_string(index=False))
'''


def throughput() -> nbformat.NotebookNode:
    return _notebook([new_markdown_cell(THROUGHPUT_INTRO), new_code_cell(SETUP),
                      new_code_cell(LOAD_RUNS), new_code_cell(RUN_FPS),
                      new_code_cell(FPS_OVER_TIME), new_code_cell(COMPARE),
                      new_code_cell(ROOFLINE), new_code_cell(SWEEP), new_code_cell(SUMMARY)])


def reward_curves() -> nbformat.NotebookNode:
    return _notebook([new_markdown_cell(REWARD_INTRO), new_code_cell(SETUP),
                      new_code_cell(LOAD_RUNS), new_code_cell(LOAD_EPISODES),
                      new_code_cell(REWARD_PLOTS), new_code_cell(DIAGNOSTICS),
                      new_code_cell(FINAL_TABLE),
                      new_code_cell(SUMMARY)])


def _notebook(cells) -> nbformat.NotebookNode:
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    for i, cell in enumerate(nb.cells):  # stable ids keep the committed files diff-quiet
        cell["id"] = f"cell-{i}"
    return nb


BUILDERS = {"throughput.ipynb": throughput, "reward_curves.ipynb": reward_curves}


def main() -> int:
    NOTEBOOKS.mkdir(exist_ok=True)
    for name, build in BUILDERS.items():
        nb = build()
        nbformat.validate(nb)
        nbformat.write(nb, NOTEBOOKS / name)
        print(f"wrote {NOTEBOOKS / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
