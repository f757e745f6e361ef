"""seed.results: discovering and loading runs and compare outputs; clear errors on damage.

``make_tree`` builds a small, well-formed results tree (two benchmarks' worth of runs is
not needed: one benchmark, two architectures, two seeds each, plus a compare, a sweep and
a roofline file) that test_notebooks.py reuses.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from seed import results as R
from seed.metrics.writer import EPISODE_COLUMNS, LEARNING_COLUMNS, METRICS_COLUMNS

BENCH = "toy_catch"


def _write_csv(path: Path, columns, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(columns)
        for r in rows:
            w.writerow(["" if r.get(c) is None else r[c] for c in columns])


def make_run(run_dir: Path, arch: str, seed: int, fps: float, intervals: int = 8,
             episodes_per_interval: int = 6, frames_per_step: int = 1, env="toy:catch",
             benchmark=BENCH, diagnostics: bool = True, eval_env: int | None = None) -> Path:
    """A fake but well-formed run directory: config.json, metrics.csv, episodes.csv.

    ``diagnostics``: metrics carry the learning columns and two dead-ReLU columns (False:
    a run written before they existed). ``eval_env``: that env id's episodes are
    evaluation episodes, with return 1.0.
    """
    run_dir.mkdir(parents=True)
    config = {"env": env, "arch": arch, "agent": "vtrace", "network": "mlp",
              "network_kwargs": {}, "benchmark": benchmark, "actors": 2, "envs_per_actor": 4,
              "unroll_length": 20, "batch_size": 8, "seed": seed, "train": True}
    (run_dir / "config.json").write_text(json.dumps(
        {"config": config, "machine": {"cores": 2}, "architecture": arch,
         "frames_per_step": frames_per_step}))
    rng = np.random.default_rng(seed)
    metrics, episodes = [], []
    frames, wall = 0, 0.0
    for i in range(intervals):
        wall += 5.0
        frames += int(fps * 5.0)
        noise = rng.normal(0, 0.3, episodes_per_interval)
        rets = list(np.clip(-1 + 2 * (i + 1) / intervals + noise, -1, 1))
        metrics.append({"wall_time": wall, "env_steps": frames // frames_per_step,
                        "env_frames": frames, "fps": fps * (0.5 if i == 0 else 1.0),
                        "learner_steps": 10 * i, "learner_fps": 0 if i == 0 else fps * 0.9,
                        "inference_batch_size": 8, "queue_fill": 0.5,
                        "episodes": len(rets), "episode_return": float(np.mean(rets)),
                        "action_latency_p50_ms": 1.0, "action_latency_p99_ms": 3.0,
                        "loss": 0.1})
        if diagnostics and i > 0:
            metrics[-1].update({"entropy": 1.0 - 0.1 * i, "mean_abs_log_rho": 0.01,
                                "explained_variance": 0.1 * i, "update_ratio": 1e-3,
                                "grad_norm": 0.5, "learning_rate": 1e-3,
                                "dead_relu_0_torso_0": 0.05, "dead_relu_1_torso_1": 0.1})
        for k, ret in enumerate(rets):
            evaluation = k == eval_env
            episodes.append({"wall_time": wall, "env_frames": frames, "actor": k % 2,
                             "env_id": k, "episode_length": 9, "evaluation": int(evaluation),
                             "episode_return": 1.0 if evaluation else round(float(ret), 4)})
    columns = METRICS_COLUMNS + (LEARNING_COLUMNS + ["dead_relu_0_torso_0",
                                                     "dead_relu_1_torso_1"]
                                 if diagnostics else [])
    _write_csv(run_dir / "metrics.csv", columns, metrics)
    _write_csv(run_dir / "episodes.csv", EPISODE_COLUMNS, episodes)
    return run_dir


def make_compare(d: Path, mode: str, seed_fps: float, impala_fps: float,
                 config: dict | None = None, config_in_json: bool = True) -> Path:
    """A seed compare output: compare.csv (SEED, IMPALA, SEED), base_config.json and
    compare.json (with the config too unless ``config_in_json`` is False)."""
    d.mkdir(parents=True)
    _write_csv(d / "compare.csv", ["run", "arch", "fps"],
               [{"run": "seed-1", "arch": "seed", "fps": seed_fps},
                {"run": "impala-1", "arch": "impala", "fps": impala_fps},
                {"run": "seed-2", "arch": "seed", "fps": seed_fps}])
    config = {"benchmark": BENCH, "env": "toy:catch", "network": "mlp", **(config or {})}
    (d / "base_config.json").write_text(json.dumps(config))
    meta = {"mode": mode, "fps_ratio": seed_fps / impala_fps, "frames_per_cpu_s_ratio": 0.9}
    if config_in_json:
        meta["config"] = config
    (d / "compare.json").write_text(json.dumps(meta))
    return d


def make_tree(root: Path) -> Path:
    """Two architectures x two seeds of one benchmark, a compare, a sweep, a roofline."""
    for arch, fps in (("seed", 400.0), ("impala", 250.0)):
        for seed in (0, 1):
            make_run(root / BENCH / arch / f"run-{seed}", arch, seed, fps + 20 * seed)
    cmp_dir = root / BENCH / "compare" / "20260101-000000"
    cmp_dir.mkdir(parents=True)
    cols = ["run", "arch", "rc", "steady", "warmup_s", "window_s", "fps", "learner_fps",
            "env_frames", "wall_s", "run_dir"]
    rows = [{"run": "seed-1", "arch": "seed", "rc": 0, "steady": True, "fps": 410.0,
             "learner_fps": 380.0, "env_frames": 20000},
            {"run": "impala-1", "arch": "impala", "rc": 0, "steady": True, "fps": 205.0,
             "learner_fps": 190.0, "env_frames": 10000},
            {"run": "seed-2", "arch": "seed", "rc": 0, "steady": True, "fps": 390.0,
             "learner_fps": 370.0, "env_frames": 19000}]
    _write_csv(cmp_dir / "compare.csv", cols, rows)
    (cmp_dir / "compare.json").write_text(json.dumps({"mode": "train", "fps_ratio": 1.95}))
    sweep_dir = root / BENCH / "compare" / "sweep"
    sweep_dir.mkdir(parents=True)
    _write_csv(sweep_dir / "sweep.csv",
               ["size", "network", "parameters", "inf_cpu_us_per_sample_b1", "seed_fps",
                "impala_fps", "fps_ratio"],
               [{"size": "small", "network": "mlp", "parameters": 5000,
                 "inf_cpu_us_per_sample_b1": 50, "seed_fps": 500, "impala_fps": 300,
                 "fps_ratio": 1.67},
                {"size": "large", "network": "mlp", "parameters": 9000000,
                 "inf_cpu_us_per_sample_b1": 900, "seed_fps": 300, "impala_fps": 60,
                 "fps_ratio": 5.0}])
    (root / "roofline").mkdir()
    (root / "roofline" / "toy_catch_mlp.json").write_text(json.dumps(
        {"env": "toy:catch", "network": "mlp", "network_kwargs": {},
         "config": {"actors": 2, "envs_per_actor": 4, "unroll_length": 20, "batch_size": 8},
         "ceilings": {"seed_train": 1000.0, "seed_serve": 2000.0, "impala_train": 800.0,
                      "impala_serve": 1500.0, "simulation_only": 50000.0}}))
    return root


# ----------------------------------------------------------------------------- good trees

def test_find_and_load_runs(tmp_path):
    root = make_tree(tmp_path)
    found = R.find_runs(root)
    assert [p.relative_to(root).as_posix() for p in found] == [
        f"{BENCH}/impala/run-0", f"{BENCH}/impala/run-1", f"{BENCH}/seed/run-0",
        f"{BENCH}/seed/run-1"]
    runs, skipped = R.load_runs(root)
    assert skipped == []
    assert {(r.architecture, r.seed) for r in runs} == {("seed", 0), ("seed", 1),
                                                         ("impala", 0), ("impala", 1)}
    r = R.load_run(root / BENCH / "seed" / "run-1")
    assert r.benchmark == BENCH and r.config["seed"] == 1 and r.frames_per_step == 1
    assert list(r.metrics.columns) == (R.METRICS_COLUMNS + LEARNING_COLUMNS
                                       + ["dead_relu_0_torso_0", "dead_relu_1_torso_1"])
    assert r.metrics["parameter_pull_ms"].isna().all()
    assert len(r.metrics) == 8 and len(r.episodes) == 48
    assert r.metrics["env_frames"].iloc[-1] == 8 * int(420.0 * 5)
    table = R.runs_table(runs)
    # Steady state by compare's rule: cumulative frames after the warm-up row (row 1).
    fps = table.set_index(["arch", "seed"])["steady_fps"]
    assert fps["seed", 1] == pytest.approx(420.0, rel=1e-3)
    assert fps["impala", 0] == pytest.approx(250.0, rel=1e-3)


def test_benchmark_falls_back_to_env_name(tmp_path):
    d = make_run(tmp_path / "x", "seed", 0, 100.0, benchmark="", env="atari:Pong",
                 frames_per_step=4)
    r = R.load_run(d)
    assert r.benchmark == "atari_Pong" and r.frames_per_step == 4


def test_compare_sweep_roofline_loaders(tmp_path):
    root = make_tree(tmp_path)
    [cmp_path] = R.find_compare_files(root)
    df = R.load_compare(cmp_path, root)
    assert list(df["run"]) == ["seed-1", "impala-1", "seed-2"]
    assert df["benchmark"].unique().tolist() == [BENCH]
    assert df["mode"].iloc[0] == "train" and df["fps_ratio"].iloc[0] == pytest.approx(1.95)
    (cmp_path.parent / "compare.json").unlink()  # ratio then computed from the rows
    df = R.load_compare(cmp_path, root)
    assert df["fps_ratio"].iloc[0] == pytest.approx(400.0 / 205.0)
    (cmp_path.parent / "base_config.json").write_text(json.dumps(
        {"benchmark": "", "env": "atari:Pong"}))  # what seed compare writes beside it
    assert R.load_compare(cmp_path, None)["benchmark"].iloc[0] == "atari_Pong"
    [sweep] = R.find_sweep_files(root)
    s = R.load_sweep(sweep, root)
    assert list(s["size"]) == ["small", "large"] and s["parameters"].dtype.kind in "if"
    [roof] = R.find_roofline_files(root)
    assert R.load_roofline(roof)["ceilings"]["seed_train"] == 1000.0


def test_rolling_and_curve_over_runs():
    import pandas as pd
    ep = pd.DataFrame({"wall_time": [3, 1, 2, 4], "env_frames": [30, 10, 20, 40],
                       "episode_return": [3.0, 1.0, 2.0, 4.0]})
    out = R.rolling_returns(ep, 2)
    assert out["env_frames"].tolist() == [10, 20, 30, 40]
    assert out["return_rolling"].tolist() == [1.0, 1.5, 2.5, 3.5]
    agg = R.curve_over_runs([(np.array([0, 10.0]), np.array([0, 10.0])),
                             (np.array([5, 20.0]), np.array([2, 2.0])),
                             (np.array([4, 12.0]), np.array([9, 9.0]))], points=3)
    # common grid 5..10 (no extrapolation: every run reached it) of y=x, y=2 and y=9
    assert agg["x"].tolist() == [5.0, 7.5, 10.0]
    assert agg["median"].tolist() == pytest.approx([5.0, 7.5, 9.0])
    assert agg["mean"].tolist() == pytest.approx([16 / 3, 18.5 / 3, 7.0])
    assert agg["min"].tolist() == pytest.approx([2, 2, 2])
    assert agg["max"].tolist() == pytest.approx([9, 9, 10]) and (agg["runs"] == 3).all()
    assert R.curve_over_runs([(np.array([0, 1.0]), np.zeros(2)),
                              (np.array([2, 3.0]), np.zeros(2))]).empty


# ----------------------------------------------------------------------------- steady state

STEADY_COLS = ["wall_time", "env_steps", "env_frames", "fps", "learner_steps", "learner_fps",
               "inference_batch_size", "action_latency_p50_ms", "action_latency_p99_ms",
               "parameter_pull_ms", "episodes", "episode_return"]
STEADY_ROWS = [
    # wall, steps, frames, fps, lsteps, lfps, batch, p50, p99, pull, episodes, return
    (1.0, 0, 0, 0, 0, 0, None, None, None, None, 0, None),         # start-up
    (2.0, 100, 400, 400, 0, 0, 4, 9.0, 50.0, 5.0, 0, None),         # frames, no training yet
    (3.0, 300, 1200, 800, 1, 100, 4, 8.0, 40.0, 4.0, 1, 0.5),       # warm-up row (train mode)
    (4.0, 700, 2800, 1600, 3, 400, 8, 2.0, 6.0, 1.0, 0, None),      # steady
    (6.0, 1300, 5200, 1200, 6, 300, 2, 4.0, 10.0, 3.0, 2, 1.0),     # steady (2 s interval)
]


def _steady_metrics(rows=STEADY_ROWS) -> pd.DataFrame:
    return pd.DataFrame([[np.nan if v is None else v for v in r] for r in rows],
                        columns=STEADY_COLS)


def test_steady_state_rule_train_mode(tmp_path):
    _write_csv(tmp_path / "metrics.csv", STEADY_COLS,
               [dict(zip(STEADY_COLS, r)) for r in STEADY_ROWS])
    metrics = R.read_metrics(tmp_path / "metrics.csv")
    assert R.warmup_index(metrics, train=True) == 2
    s = R.steady_state(metrics, train=True)
    assert s["steady"] and s["steady_rows"] == 2
    assert s["warmup_s"] == 3.0 and s["window_s"] == 3.0
    assert s["fps"] == pytest.approx((5200 - 1200) / 3.0)
    # learner_fps weighted by interval duration: (400 * 1 + 300 * 2) / 3
    assert s["learner_fps"] == pytest.approx(1000 / 3)
    # batches: 400 steps / 8 + 600 steps / 2 = 350 batches for 1000 steps
    assert s["inference_batch_size"] == pytest.approx(1000 / 350)
    # latencies and pulls weighted by env steps (400, 600)
    assert s["action_latency_p50_ms"] == pytest.approx((2.0 * 400 + 4.0 * 600) / 1000)
    assert s["action_latency_p99_ms"] == pytest.approx((6.0 * 400 + 10.0 * 600) / 1000)
    assert s["parameter_pull_ms"] == pytest.approx((1.0 * 400 + 3.0 * 600) / 1000)
    assert s == R.steady_state(_steady_metrics(), train=True)  # read or built: the same


def test_steady_state_rule_serve_mode_starts_at_first_frames():
    assert R.warmup_index(_steady_metrics(), train=False) == 1
    s = R.steady_state(_steady_metrics(), train=False)
    assert s["warmup_s"] == 2.0 and s["steady_rows"] == 3
    assert s["fps"] == pytest.approx((5200 - 400) / 4.0)


def test_steady_state_without_a_window_is_flagged():
    short = _steady_metrics(STEADY_ROWS[:3])
    s = R.steady_state(short, train=True)  # the warm-up row is the last row
    assert not s["steady"] and s["steady_rows"] == 0
    assert s["fps"] == pytest.approx(1200 / 3.0)  # from the run start, flagged
    assert R.steady_state(short.iloc[:1], train=False)["fps"] is None
    assert R.warmup_index(short.iloc[:1], train=False) is None


def test_metrics_values_are_read_as_python_reads_numbers(tmp_path):
    """Integer columns stay integers, others are floats parsed by float(): the figures a
    compare computed when it ran are the ones any later reader gets."""
    path = tmp_path / "metrics.csv"
    path.write_text(",".join(R.REQUIRED_METRICS) + "\n"
                    "1.0000000000000002,10,40,0.1,0,, 3 ,\n"
                    "2.5,20,80,0.30000000000000004,1,7e2,4,-1.25\n")
    m = R.read_metrics(path)
    assert m["env_steps"].dtype == np.int64 and m["episodes"].dtype == np.int64
    assert m["wall_time"].tolist() == [float("1.0000000000000002"), 2.5]
    assert m["fps"].tolist() == [0.1, float("0.30000000000000004")]
    assert np.isnan(m["learner_fps"].iloc[0]) and m["learner_fps"].iloc[1] == 700.0
    assert m["episode_return"].iloc[1] == -1.25 and m["parameter_pull_ms"].isna().all()


# ----------------------------------------------------------------------------- damage

def _damage(run: Path, how: str) -> str:
    """Damage a run directory; returns a fragment its RunDirError must contain."""
    if how == "no_config":
        (run / "config.json").unlink()
        return "config.json: missing"
    if how == "bad_json":
        (run / "config.json").write_text('{"config": {"env": ')
        return "config.json: not valid JSON"
    if how == "no_config_key":
        (run / "config.json").write_text('{"env": "toy:catch"}')
        return "has no 'config' mapping"
    if how == "no_metrics":
        (run / "metrics.csv").unlink()
        return "metrics.csv: missing"
    if how == "empty_metrics":
        (run / "metrics.csv").write_text("")
        return "metrics.csv: empty"
    if how == "header_only":
        (run / "metrics.csv").write_text(",".join(METRICS_COLUMNS) + "\n")
        return "header only"
    if how == "missing_column":
        lines = (run / "metrics.csv").read_text().splitlines()
        cols = lines[0].split(",")
        i = cols.index("env_frames")
        (run / "metrics.csv").write_text("\n".join(
            ",".join(f for j, f in enumerate(line.split(",")) if j != i) for line in lines))
        return "missing column(s) env_frames"
    if how == "truncated_row":
        text = (run / "episodes.csv").read_text()
        (run / "episodes.csv").write_text(text + "12.5,300,1")
        return "episodes.csv: line 50 has 3 fields"
    if how == "garbled_value":
        lines = (run / "metrics.csv").read_text().splitlines()
        lines[3] = "abc" + lines[3][lines[3].index(","):]
        (run / "metrics.csv").write_text("\n".join(lines) + "\n")
        return "metrics.csv: line 4, column wall_time: 'abc' is not a number"
    if how == "binary":
        (run / "episodes.csv").write_bytes(b"\xff\xfe\x00garbage\x00\x81")
        return "episodes.csv: cannot be read"
    raise ValueError(how)


DAMAGE = ["no_config", "bad_json", "no_config_key", "no_metrics", "empty_metrics",
          "header_only", "missing_column", "truncated_row", "garbled_value", "binary"]


@pytest.mark.parametrize("how", DAMAGE)
def test_damaged_run_dir_gives_one_line_error(tmp_path, how):
    run = make_run(tmp_path / BENCH / "seed" / "r", "seed", 0, 100.0)
    fragment = _damage(run, how)
    with pytest.raises(R.RunDirError) as e:
        R.load_run(run)
    msg = str(e.value)
    assert fragment in msg and "\n" not in msg and str(run) in msg


def test_load_runs_skips_damaged_and_says_why(tmp_path):
    root = make_tree(tmp_path)
    bad = root / BENCH / "impala" / "run-1"
    _damage(bad, "no_config")  # still found: it has metrics.csv
    runs, skipped = R.load_runs(root)
    assert len(runs) == 3
    assert [(d, "config.json: missing" in why) for d, why in skipped] == [(bad, True)]
    assert bad not in R.find_runs(root)  # a strict search wants config.json


def test_bad_compare_files(tmp_path):
    root = make_tree(tmp_path)
    [cmp_path] = R.find_compare_files(root)
    cmp_path.write_text("run,arch\nseed-1,seed\n")
    with pytest.raises(R.ResultsFileError, match="missing column.*fps"):
        R.load_compare(cmp_path, root)
    cmp_path.write_text("run,arch,fps\nseed-1,seed,fast\n")
    with pytest.raises(R.ResultsFileError, match="column fps: 'fast' is not a number"):
        R.load_compare(cmp_path, root)
    cmp_path.write_text("")
    with pytest.raises(R.ResultsFileError, match="empty"):
        R.load_compare(cmp_path, root)
    [roof] = R.find_roofline_files(root)
    roof.write_text("[1, 2]")
    with pytest.raises(R.ResultsFileError, match="expected a JSON object"):
        R.load_roofline(roof)
    loaded, skipped = R.load_all(root, R.find_roofline_files, R.load_roofline)
    assert loaded == [] and skipped[0][0] == roof


def test_missing_root(tmp_path):
    with pytest.raises(R.ResultsError, match="does not exist"):
        R.find_runs(tmp_path / "nope")
    assert R.find_runs(tmp_path) == []


def test_only_training_runs_go_on_reward_curves(tmp_path):
    run = R.load_run(make_tree(tmp_path) / BENCH / "seed" / "run-1")
    assert R.is_training_run(run)
    from dataclasses import replace
    assert not R.is_training_run(replace(run, config={**run.config, "train": False}))
    for where in ("compare-catch/serve-1/seed-1", "demo/20261203/impala-1"):
        assert not R.is_training_run(replace(run, path=tmp_path / where))


def test_training_and_evaluation_episodes_are_told_apart(tmp_path):
    run = R.load_run(make_run(tmp_path / "r", "seed", 0, 100.0, eval_env=5))
    train, evaluation = R.training_episodes(run.episodes), R.evaluation_episodes(run.episodes)
    assert set(evaluation["env_id"]) == {5} and 5 not in set(train["env_id"])
    assert len(train) + len(evaluation) == len(run.episodes)
    row = R.runs_table([run]).iloc[0]
    assert row["final_eval_return"] == 1.0 and row["final_return"] < 1.0
    # A run from before the evaluation column: every episode is a training one.
    old = run.episodes.drop(columns=["evaluation"]).assign(evaluation=np.nan)
    assert len(R.training_episodes(old)) == len(old)


def test_first_reaching_a_return_by_hand():
    ep = pd.DataFrame({"env_frames": [10, 20, 30, 40, 50], "wall_time": [1, 2, 3, 4, 5.0],
                       "episode_return": [-21, -10, 0, 10, 21.0]})
    # windows of 2: -15.5, -5, 5, 15.5 -> first >= 5 completes at the 4th episode (frames 40)
    assert R.first_reaching(ep, 5.0, window=2) == {"env_frames": 40, "wall_time": 4.0,
                                                    "episodes": 4}
    assert R.first_reaching(ep, 18.0, window=2) is None
    assert R.first_reaching(ep, -21.0, window=10) is None  # fewer episodes than the window


def test_compare_ratios_group_repeats_and_sweeps(tmp_path):
    root = tmp_path
    make_compare(root / "c" / "serve-1", "serve", 100.0, 200.0)
    make_compare(root / "c" / "serve-2", "serve", 150.0, 200.0,
                 {"jit_inference": True, "actor_splits": 1, "network_kwargs": {"h": [8]}})
    make_compare(root / "c" / "serve-3", "serve", 90.0, 100.0,
                 {"actor_splits": 2, "inference_batch_size": 8},
                 config_in_json=False)
    make_compare(root / "c" / "train-1", "train", 300.0, 200.0)
    sweep = root / "c" / "sweep"
    for size, kwargs in (("small", [64, 64]), ("large", [2048, 2048])):  # not alphabetical
        make_compare(sweep / size, "serve", 100.0, 100.0, {"network_kwargs": {
            "hidden_sizes": kwargs}})
    _write_csv(sweep / "sweep.csv", ["size", "seed_fps", "impala_fps"],
               [{"size": "small", "seed_fps": 1, "impala_fps": 1},
                {"size": "large", "seed_fps": 1, "impala_fps": 1}])
    compares = [R.load_compare(p, root) for p in R.find_compare_files(root)]
    t = R.compare_ratios(compares)
    assert list(t["group"]) == [f"{BENCH} · serve · mlp"] * 3 + [
        f"{BENCH} · serve · sweep small (mlp hidden_sizes 64x64)",
        f"{BENCH} · serve · sweep large (mlp hidden_sizes 2048x2048)",
        f"{BENCH} · train · mlp"]
    assert t["fps_ratio"].tolist()[:4] == pytest.approx([0.5, 0.75, 0.9, 1.0])
    assert t["options"].tolist()[:3] == ["", "jit_inference",
                                         "actor_splits=2, inference_batch_size=8"]
    assert t["sweep_size"].tolist()[3:5] == ["small", "large"]
    assert t["cpu_ratio"].iloc[0] == pytest.approx(0.9) and t["seed_fps"].iloc[1] == 150.0
    assert R.compare_ratios([]).empty


def test_roofline_fractions_and_final_returns(tmp_path):
    root = make_tree(tmp_path)
    runs, _ = R.load_runs(root)
    compares = [R.load_compare(p, root) for p in R.find_compare_files(root)]
    roofs = [R.load_roofline(p) for p in R.find_roofline_files(root)]
    frac = R.roofline_fractions(runs, compares, roofs, root)
    # compare.json holds no roofline: every row is a run against toy_catch_mlp.json
    assert set(frac["source"]) == {"runs vs toy_catch_mlp.json"} and len(frac) == 4
    seed1 = frac[(frac["arch"] == "seed") & (frac["run"] == "run-1")].iloc[0]
    assert seed1["ceiling"] == 1000.0 and seed1["fraction"] == pytest.approx(0.42, rel=1e-3)
    (root / BENCH / "compare" / "20260101-000000" / "compare.json").write_text(json.dumps(
        {"mode": "train", "roofline": {"mode": "train", "seed_fraction": 0.5,
                                       "seed_ceiling_fps": 800.0, "impala_fraction": None,
                                       "mismatched": ["batch_size"]}}))
    compares = [R.load_compare(p, root) for p in R.find_compare_files(root)]
    frac = R.roofline_fractions(runs, compares, roofs, root)
    row = frac[frac["run"] == "mean"].iloc[0]
    assert row["source"] == (f"{BENCH}/compare/20260101-000000 (roofline shape differs: "
                             "batch_size)") and row["fps"] == 400.0
    final = R.final_returns(runs).set_index("arch")
    assert final.loc["seed", "runs"] == 2 and final.loc["impala", "runs"] == 2


# ----------------------------------------------------------------------------- old columns

# metrics.csv and compare.csv headers as runs wrote them before each quantity had its own
# column: latency_* and inference_ms meant one thing under SEED and another under IMPALA.
OLD_METRICS_HEADER = ("wall_time,env_steps,env_frames,fps,learner_steps,learner_fps,"
                      "inference_batch_size,queue_fill,episodes,episode_return,latency_p50_ms,"
                      "latency_p99_ms,parameter_pull_ms,loss,inference_ms")
OLD_METRICS_ROWS = ("1.0,100,100,100,0,0,4,0,0,,,,,,\n"
                    "2.0,300,300,200,1,50,4,0.5,1,0.5,2.5,7.5,,0.1,0.8\n"
                    "3.0,600,600,300,2,60,4,0.5,0,,3.5,9.5,,0.1,1.2\n")
OLD_COMPARE_HEADER = ("run,arch,rc,steady,warmup_s,window_s,fps,learner_fps,"
                      "inference_batch_size,inference_ms,latency_p50_ms,latency_p99_ms,"
                      "parameter_pull_ms,cpu_util,cpu_util_run,frames_per_cpu_s,env_frames,"
                      "wall_s,run_dir")
REPO_RESULTS = Path(__file__).resolve().parent.parent / "results"


def _old_run(d: Path, arch: str | None) -> Path:
    d.mkdir(parents=True)
    if arch:
        (d / "config.json").write_text(json.dumps(
            {"config": {"env": "toy:catch", "arch": arch}, "architecture": arch}))
    (d / "metrics.csv").write_text(OLD_METRICS_HEADER + "\n" + OLD_METRICS_ROWS)
    (d / "episodes.csv").write_text("wall_time,env_frames,episode_return,episode_length\n")
    return d


def _all_nan(series) -> bool:
    return bool(series.isna().all())


def test_an_old_seed_run_reads_its_round_trip_as_action_latency(tmp_path):
    run = R.load_run(_old_run(tmp_path / "seed-run", "seed"))
    m = run.metrics
    assert "latency_p50_ms" not in m.columns and "inference_ms" not in m.columns
    assert m["action_latency_p50_ms"].tolist()[1:] == [2.5, 3.5]
    assert m["action_latency_p99_ms"].tolist()[1:] == [7.5, 9.5]
    assert m["learner_inference_ms"].tolist()[1:] == [0.8, 1.2]
    assert _all_nan(m["actor_inference_ms"])
    assert m.attrs["old_columns"] == {"latency_p50_ms": {"seed": "action_latency_p50_ms"},
                                      "latency_p99_ms": {"seed": "action_latency_p99_ms"},
                                      "inference_ms": {"seed": "learner_inference_ms"}}
    # warm-up row: the 2nd (first with frames and a learner step); the window: the 3rd
    s = R.steady_state(m, train=True)
    assert s["action_latency_p50_ms"] == 3.5 and s["learner_inference_ms"] == 1.2
    assert s["actor_inference_ms"] is None


def test_an_old_impala_run_has_no_action_latency_only_local_inference(tmp_path):
    run = R.load_run(_old_run(tmp_path / "impala-run", "impala"))
    m = run.metrics
    assert "latency_p50_ms" not in m.columns and "inference_ms" not in m.columns
    # Its latency_* were percentiles of the actors' per-unroll mean local inference time.
    assert _all_nan(m["action_latency_p50_ms"]) and _all_nan(m["action_latency_p99_ms"])
    assert m["actor_inference_p50_ms"].tolist()[1:] == [2.5, 3.5]
    assert m["actor_inference_p99_ms"].tolist()[1:] == [7.5, 9.5]
    assert m["actor_inference_ms"].tolist()[1:] == [0.8, 1.2]
    assert _all_nan(m["learner_inference_ms"])
    assert m.attrs["old_columns"]["latency_p50_ms"] == {"impala": "actor_inference_p50_ms"}
    s = R.steady_state(m, train=True)
    assert s["action_latency_p50_ms"] is None and s["actor_inference_ms"] == 1.2


def test_an_old_metrics_file_of_unknown_architecture_keeps_its_columns(tmp_path):
    """Without a config.json to say the architecture, nothing is guessed."""
    path = _old_run(tmp_path / "orphan", None) / "metrics.csv"
    m = R.read_metrics(path)
    assert m["latency_p50_ms"].tolist()[1:] == [2.5, 3.5]
    assert m["inference_ms"].tolist()[1:] == [0.8, 1.2]
    assert _all_nan(m["action_latency_p50_ms"]) and m.attrs["old_columns"] == {}
    # ...and the caller who knows it can say so
    m = R.read_metrics(path, "seed")
    assert m["action_latency_p50_ms"].tolist()[1:] == [2.5, 3.5]


def test_an_old_compare_table_is_converted_row_by_row(tmp_path):
    d = tmp_path / "cmp"
    d.mkdir()
    (d / "compare.csv").write_text(
        OLD_COMPARE_HEADER + "\n"
        "seed-1,seed,0,True,5,30,900,,16,1.5,4.0,12.0,,0.9,0.9,500,1000,40,x\n"
        "impala-1,impala,0,True,9,30,1200,,16,0.7,0.8,1.1,2.0,1.0,1.0,600,2000,40,y\n"
        "seed-2,seed,0,True,5,30,950,,16,1.6,4.5,13.0,,0.9,0.9,520,1100,40,z\n")
    df = R.load_compare(d / "compare.csv").set_index("run")
    for old in ("latency_p50_ms", "latency_p99_ms", "inference_ms"):
        assert old not in df.columns
    assert df.loc["seed-1", "action_latency_p50_ms"] == 4.0
    assert df.loc["seed-2", "action_latency_p99_ms"] == 13.0
    assert df.loc["seed-2", "learner_inference_ms"] == 1.6
    assert np.isnan(df.loc["impala-1", "action_latency_p50_ms"])
    assert df.loc["impala-1", "actor_inference_p50_ms"] == 0.8
    assert df.loc["impala-1", "actor_inference_ms"] == 0.7
    assert np.isnan(df.loc["seed-1", "actor_inference_ms"])
    assert np.isnan(df.loc["impala-1", "learner_inference_ms"])


def test_no_column_written_today_has_an_old_name():
    from seed.bench.compare import COLUMNS
    assert set(R.OLD_COLUMNS).isdisjoint(METRICS_COLUMNS + LEARNING_COLUMNS + COLUMNS)


def _raw_column(path: Path, name: str) -> list[float]:
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    j = [h.strip() for h in rows[0]].index(name)
    return [float(r[j]) if r[j].strip() else float("nan") for r in rows[1:] if r]


def test_committed_runs_and_compares_load_with_their_old_columns_converted():
    runs, skipped = R.load_runs(REPO_RESULTS)
    assert runs
    # Two committed serve runs kept only their metrics (no episodes.csv): those still read.
    for d, reason in skipped:
        assert reason.endswith("episodes.csv: missing"), reason
        assert "latency_p50_ms" not in R.read_metrics(d / R.METRICS).columns
    old = 0
    for run in runs:
        path = run.path / R.METRICS
        with open(path, newline="") as f:
            header = next(csv.reader(f))
        if "latency_p50_ms" not in header:
            continue
        old += 1
        raw = _raw_column(path, "latency_p50_ms")
        assert "latency_p50_ms" not in run.metrics.columns, run.label
        new = "action_latency_p50_ms" if run.architecture == "seed" else "actor_inference_p50_ms"
        np.testing.assert_array_equal(run.metrics[new].to_numpy(), raw, err_msg=run.label)
        if run.architecture == "impala":
            assert _all_nan(run.metrics["action_latency_p50_ms"]), run.label
    assert old > 0
    files = R.find_compare_files(REPO_RESULTS)
    assert files
    for path in files:
        df = R.load_compare(path, REPO_RESULTS)
        raw = pd.read_csv(path)
        if "latency_p50_ms" not in raw.columns:
            continue
        assert "latency_p50_ms" not in df.columns, path
        seed_rows = (raw["arch"] == "seed").to_numpy()
        np.testing.assert_array_equal(df["action_latency_p50_ms"].to_numpy()[seed_rows],
                                      raw["latency_p50_ms"].to_numpy()[seed_rows])
        assert _all_nan(df["action_latency_p50_ms"][~seed_rows])
