"""seed.plots: every figure builds from small synthetic results and writes a PNG; given
nothing to draw, a figure function says so in one line."""

from __future__ import annotations

import json
from dataclasses import replace

import pandas as pd
import pytest
from matplotlib.colors import to_hex
from tests.support.results_tree import BENCH, make_compare, make_run, make_tree

from seed.plots import PlotError, frames_label, save
from seed.plots import compare as C
from seed.plots import learning as L
from seed.plots import throughput as T
from seed.results import run_dirs, tables
from seed.results.compare import find_compare_files, load_compare
from seed.results.roofline import find_roofline_files, load_roofline
from seed.results.sweep import find_sweep_files, load_sweep

PNG = b"\x89PNG\r\n\x1a\n"


def _written(fig, path) -> None:
    assert save(fig, path) == path
    assert path.read_bytes()[:8] == PNG and path.stat().st_size > 10_000


def _one_line(excinfo) -> str:
    msg = str(excinfo.value)
    assert msg and "\n" not in msg
    return msg


@pytest.fixture
def tree(tmp_path):
    return make_tree(tmp_path / "results")


def test_reward_figure_per_architecture_with_mean_and_band(tree, tmp_path):
    runs, _ = run_dirs.load_runs(tree)
    fig = L.reward_figure(runs, title=BENCH)
    frames_ax, wall_ax = fig.axes
    assert frames_ax.get_title() == f"{BENCH}: return against env frames"
    assert wall_ax.get_xlabel() == "wall time (s)"
    labels = [t.get_text() for t in frames_ax.get_legend().get_texts()]
    assert labels == ["impala (median of 2 runs, seeds 0, 1)", "seed (median of 2 runs, seeds 0, 1)"]
    assert len(frames_ax.lines) == 6 and len(frames_ax.collections) == 2  # 4 runs, 2 means
    _written(fig, tmp_path / "plots" / "reward.png")


def test_reward_figure_averages_only_runs_of_one_setting(tmp_path):
    # Two seeds of one setting are averaged; a run with another batch size is drawn apart,
    # named by its run id, and so are the others then.
    dirs = [make_run(tmp_path / f"seed-{i}", "seed", i, 100.0) for i in range(3)]
    path = dirs[2] / "config.json"
    data = json.loads(path.read_text())
    data["config"]["batch_size"] = 4
    path.write_text(json.dumps(data))
    runs = [run_dirs.load_run(d) for d in dirs]
    assert run_dirs.learning_settings(runs[0].config) == run_dirs.learning_settings(runs[1].config)
    assert run_dirs.learning_settings(runs[0].config) != run_dirs.learning_settings(runs[2].config)
    labels = [t.get_text() for t in L.reward_figure(runs).axes[0].get_legend().get_texts()]
    assert labels == ["seed seed-0, seed-1 (median of 2 runs, seeds 0, 1)", "seed seed-2 (1 run)"]


def test_every_setting_and_architecture_in_a_figure_has_a_colour_of_its_own(tmp_path):
    # SEED with two settings beside IMPALA: three colours, none of them drawn twice (a
    # setting once took IMPALA's orange).
    dirs = [make_run(tmp_path / f"seed-{i}", "seed", i, 100.0) for i in range(2)]
    dirs.append(make_run(tmp_path / "impala-0", "impala", 0, 100.0))
    path = dirs[1] / "config.json"
    data = json.loads(path.read_text())
    data["config"]["batch_size"] = 4
    path.write_text(json.dumps(data))
    ax = L.reward_figure([run_dirs.load_run(d) for d in dirs]).axes[0]
    colours = {line.get_label(): to_hex(line.get_color()) for line in ax.lines}
    assert len(colours) == 3 and len(set(colours.values())) == 3
    assert colours["impala (1 run)"] == to_hex("tab:orange")


def test_reward_figure_dashes_evaluation_envs_and_needs_episodes(tmp_path):
    run = run_dirs.load_run(make_run(tmp_path / "r", "seed", 0, 100.0, eval_env=5))
    ax = L.reward_figure([run]).axes[0]
    assert [line.get_linestyle() for line in ax.lines] == ["-", "--"]
    empty = replace(run, episodes=run.episodes.iloc[:0])
    with pytest.raises(PlotError) as e:
        L.reward_figure([empty])
    assert "no run has finished training episodes" in _one_line(e)
    assert L.rolling_window(50) == 5 and L.rolling_window(5000) == 100
    assert L.rolling_window(3) == 1


def test_diagnostics_figure_has_a_panel_per_logged_diagnostic(tmp_path):
    new = run_dirs.load_run(make_run(tmp_path / "new", "seed", 0, 100.0))
    old = run_dirs.load_run(make_run(tmp_path / "old", "impala", 0, 100.0, diagnostics=False))
    panels = [p[0] for p in L.available_panels([new, old])]
    assert panels == ["entropy", "mean_abs_log_rho", "explained_variance", "update_ratio",
                      "grad_norm", "dead_relu"]
    fig = L.diagnostics_figure([new, old], "t")
    assert len([a for a in fig.axes if a.get_visible()]) == 6
    dead = [a for a in fig.axes if a.get_title().startswith("dead ReLU")][0]
    assert len(dead.lines) == 2  # one line per layer of the run that logged them
    _written(fig, tmp_path / "diagnostics.png")
    with pytest.raises(PlotError) as e:
        L.diagnostics_figure([old])
    assert "no run logged learning diagnostics" in _one_line(e)


def test_ratio_figure_one_row_per_group_one_dot_per_compare(tmp_path):
    root = tmp_path / "results"
    for i, ratio in enumerate((0.5, 0.6, 0.8)):
        make_compare(root / "c" / f"serve-{i}", "serve", 100.0 * ratio, 100.0,
                     {"jit_inference": i == 2})
    make_compare(root / "c" / "train-0", "train", 300.0, 200.0)
    ratios = tables.compare_ratios([load_compare(p, root)
                                    for p in find_compare_files(root)])
    fig = T.ratio_figure(ratios)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == [f"{BENCH} · train · mlp",
                                                            f"{BENCH} · serve · mlp"]
    assert len(ax.collections) == 4  # one dot per compare
    notes = sorted(t.get_text() for t in ax.texts)
    assert notes == ["0.60x (0.50-0.80), n=3", "1.50x, n=1"]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["median of the row", "default data path", "jit_inference"]
    _written(fig, tmp_path / "ratio.png")
    with pytest.raises(PlotError) as e:
        T.ratio_figure(tables.compare_ratios([]))
    assert "no compare with a SEED/IMPALA ratio" in _one_line(e)


def test_throughput_figures_from_a_tree(tree, tmp_path):
    runs, _ = run_dirs.load_runs(tree)
    table = tables.runs_table(runs)
    fig = T.runs_fps_figure(table)
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == [f"{BENCH}\ntrain"]
    assert "SEED/IMPALA 1.58x" in [t.get_text() for t in fig.axes[0].texts]  # 410 / 260
    _written(fig, tmp_path / "runs.png")
    _written(T.fps_over_time_figure(runs), tmp_path / "fps.png")
    compares = [load_compare(p, tree) for p in find_compare_files(tree)]
    roofs = [load_roofline(p) for p in find_roofline_files(tree)]
    _written(T.roofline_figure(tables.roofline_table(runs, compares, roofs, tree)),
             tmp_path / "roofline.png")
    for empty, draw, words in ((table.iloc[:0], T.runs_fps_figure, "no run with a steady"),
                               ([], T.fps_over_time_figure, "no runs"),
                               (tables.roofline_table([], [], []), T.roofline_figure,
                                "no roofline fraction")):
        with pytest.raises(PlotError) as e:
            draw(empty)
        assert words in _one_line(e)


def test_sweep_figure_against_inference_cost_else_parameters(tree, tmp_path):
    [path] = find_sweep_files(tree)
    sweep = load_sweep(path, tree).sizes  # parameters, no inference cost at the actor batch
    fig = T.sweep_figure(sweep, "t", "serve")
    assert len(fig.axes) == 1 and fig.axes[0].get_xlabel() == "network parameters"
    _written(fig, tmp_path / "sweep.png")
    rows = [  # as seed compare --sweep-network hands them over, a measurement missing
        {"size": "small", "inf_cpu_us_per_sample_actor_batch": 300.0, "seed_fps": 1500.0,
         "impala_fps": 2600.0, "seed_frames_per_cpu_s": 1600.0,
         "impala_frames_per_cpu_s": None},
        {"size": "large", "inf_cpu_us_per_sample_actor_batch": 1300.0, "seed_fps": 550.0,
         "impala_fps": 300.0, "seed_frames_per_cpu_s": 650.0,
         "impala_frames_per_cpu_s": 620.0}]
    fig = T.sweep_figure(pd.DataFrame(rows), "t", "serve")
    assert len(fig.axes) == 2 and fig.axes[0].get_xlabel().startswith("inference cost")
    assert fig.axes[0].get_ylabel() == "steady env frames/s (serve)"
    _written(fig, tmp_path / "sweep2.png")
    with pytest.raises(PlotError) as e:
        T.sweep_figure(sweep.iloc[:0])
    assert "no rows" in _one_line(e)


def _compare_dir(tmp_path):
    d = tmp_path / "cmp"
    runs = [("seed-1", "seed", 300.0), ("impala-1", "impala", 100.0), ("seed-2", "seed", 280.0)]
    for name, arch, fps in runs:
        make_run(d / name, arch, 0, fps)
    pd.DataFrame([{"run": n, "arch": a, "fps": f, "run_dir": str(d / n)} for n, a, f in runs]
                 ).to_csv(d / "compare.csv", index=False)
    (d / "compare.json").write_text(json.dumps({"fps_ratio": 2.9, "mode": "serve"}))
    return d


def test_compare_figure_writes_compare_png(tmp_path):
    d = _compare_dir(tmp_path)
    (d / "seed-2" / "metrics.csv").write_text("wall_time\n")  # a run that broke off
    assert C.main([str(d)]) == 0
    png = d / "compare.png"
    assert png.read_bytes()[:8] == PNG and png.stat().st_size > 10_000
    fig = C.compare_figure(d)
    left, right = fig.axes
    assert [line.get_label() for line in left.lines] == ["seed-1", "impala-1"]
    assert right.get_title() == "steady state: SEED / IMPALA = 2.90x"


def test_compare_figure_bad_input_is_one_line(tmp_path, capsys):
    assert C.main([str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "has no compare.csv" in err and "Traceback" not in err and err.count("\n") == 1
    (tmp_path / "compare.csv").write_text("run,arch,fps\nseed-1,seed,fast\n")
    assert C.main([str(tmp_path)]) == 1
    assert "column fps: 'fast' is not a number" in capsys.readouterr().err
    assert C.main([]) == 2


def test_frames_label_says_what_a_frame_is():
    assert frames_label([1, 1]) == "env frames (= env steps: 1 frame per step)"
    assert frames_label([4]) == "env frames (emulator frames = env steps x 4)"
    assert "frame skip" in frames_label([1, 4])


def test_reward_figure_says_when_a_run_ran_on_an_engine_from_a_partial_source(tmp_path):
    run = run_dirs.load_run(make_run(tmp_path / "r", "seed", 0, 100.0))
    assert run.env_engine is None and run.engine_caveat is None
    assert "partial source" not in L.reward_figure([run])._suptitle.get_text()
    path = run.path / "config.json"
    data = json.loads(path.read_text())
    data["env_engine"] = {"source": "archive lab.tar.xz", "commit": "b1db91af", "complete": False,
                          "absent": ["a.bsp", "b.tga", "c.tga"], "level_absent_assets": ["b.tga"]}
    path.write_text(json.dumps(data))
    partial = run_dirs.load_run(run.path)
    assert partial.engine_caveat == ("engine built from a partial source (3 files absent, 1 of "
                                     "them named by this level)")
    assert partial.engine_caveat in L.reward_figure([partial])._suptitle.get_text()
    data["env_engine"].update(complete=True, absent=[], level_absent_assets=[])
    path.write_text(json.dumps(data))
    assert run_dirs.load_run(run.path).engine_caveat is None
