"""seed.results.tables: the tables the figures and the report draw from."""

from __future__ import annotations

import json
import math

import pytest
from tests.support.results_tree import BENCH, make_compare, make_timeline, make_tree, write_csv

from seed.results import run_dirs, tables
from seed.results.compare import find_compare_files, load_compare
from seed.results.roofline import find_roofline_files, load_roofline
from seed.results.timeline import SEGMENTS, load_timeline


def test_runs_table_has_each_runs_steady_fps(tmp_path):
    runs, _ = run_dirs.load_runs(make_tree(tmp_path))
    table = tables.runs_table(runs)
    # Steady state by compare's rule: cumulative frames after the warm-up row (row 1).
    fps = table.set_index(["arch", "seed"])["steady_fps"]
    assert fps["seed", 1] == pytest.approx(420.0, rel=1e-3)
    assert fps["impala", 0] == pytest.approx(250.0, rel=1e-3)


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
    write_csv(sweep / "sweep.csv", ["size", "seed_fps", "impala_fps"],
               [{"size": "small", "seed_fps": 1, "impala_fps": 1},
                {"size": "large", "seed_fps": 1, "impala_fps": 1}])
    compares = [load_compare(p, root) for p in find_compare_files(root)]
    t = tables.compare_ratios(compares)
    assert list(t["group"]) == [f"{BENCH} · serve · mlp"] * 3 + [
        f"{BENCH} · serve · sweep small (mlp hidden_sizes 64x64)",
        f"{BENCH} · serve · sweep large (mlp hidden_sizes 2048x2048)",
        f"{BENCH} · train · mlp"]
    assert t["fps_ratio"].tolist()[:4] == pytest.approx([0.5, 0.75, 0.9, 1.0])
    assert t["options"].tolist()[:3] == ["", "jit_inference",
                                         "actor_splits=2, inference_batch_size=8"]
    assert t["sweep_size"].tolist()[3:5] == ["small", "large"]
    assert t["cpu_ratio"].iloc[0] == pytest.approx(0.9) and t["seed_fps"].iloc[1] == 150.0
    assert tables.compare_ratios([]).empty


def test_roofline_table_and_final_returns(tmp_path):
    root = make_tree(tmp_path)
    runs, _ = run_dirs.load_runs(root)
    compares = [load_compare(p, root) for p in find_compare_files(root)]
    roofs = [load_roofline(p) for p in find_roofline_files(root)]
    frac = tables.roofline_table(runs, compares, roofs, root)
    # compare.json holds no roofline: every row is a run against toy_catch_mlp.json
    assert set(frac["source"]) == {"runs vs toy_catch_mlp.json"} and len(frac) == 4
    seed1 = frac[(frac["arch"] == "seed") & (frac["run"] == "run-1")].iloc[0]
    assert seed1["ceiling"] == 1000.0 and seed1["fraction"] == pytest.approx(0.42, rel=1e-3)
    (root / BENCH / "compare" / "20260101-000000" / "compare.json").write_text(json.dumps(
        {"mode": "train", "roofline": {"mode": "train", "seed_fraction": 0.5,
                                       "seed_ceiling_fps": 800.0, "impala_fraction": None,
                                       "mismatched": ["batch_size"]}}))
    compares = [load_compare(p, root) for p in find_compare_files(root)]
    frac = tables.roofline_table(runs, compares, roofs, root)
    row = frac[frac["run"] == "mean"].iloc[0]
    assert row["source"] == (f"{BENCH}/compare/20260101-000000 (roofline shape differs: "
                             "batch_size)") and row["fps"] == 400.0
    final = tables.final_returns(runs).set_index("arch")
    assert final.loc["seed", "runs"] == 2 and final.loc["impala", "runs"] == 2


def test_compare_details_and_before_after_pairs(tmp_path):
    d = tmp_path / "c" / "serve-before-x-1"
    d.mkdir(parents=True)
    write_csv(d / "compare.csv",
              ["run", "arch", "fps", "cpu_util", "learner_cpu_util", "frames_per_cpu_s",
               "latency_p50_ms", "inference_ms", "parameter_pull_ms"],
              [{"run": "seed-1", "arch": "seed", "fps": 100.0, "cpu_util": 0.5,
                "learner_cpu_util": 0.25, "frames_per_cpu_s": 100.0, "latency_p50_ms": 4.0,
                "inference_ms": 2.0},
               {"run": "impala-1", "arch": "impala", "fps": 200.0, "cpu_util": 1.0,
                "frames_per_cpu_s": 100.0, "latency_p50_ms": 9.0, "inference_ms": 3.0,
                "parameter_pull_ms": 7.0},
               {"run": "seed-2", "arch": "seed", "fps": 300.0, "cpu_util": 0.7,
                "learner_cpu_util": 0.35, "frames_per_cpu_s": 400.0, "latency_p50_ms": 6.0,
                "inference_ms": 4.0}])
    (d / "compare.json").write_text(json.dumps(
        {"mode": "serve", "cores": 2, "config": {"benchmark": BENCH},
         "roofline": {"mismatched": ["batch_size"], "seed_lockstep_fps": 500.0,
                      "seed_lockstep_fraction": 0.4, "seed_turns_fps": 400.0,
                      "seed_turns_fraction": 0.5}}))
    make_compare(tmp_path / "c" / "serve-after-x-1", "serve", 1.0, 1.0)
    make_compare(tmp_path / "c" / "serve-after-x-rerun-1", "serve", 1.0, 1.0)
    make_compare(tmp_path / "other" / "serve-after-x-1", "serve", 1.0, 1.0)
    compares = [load_compare(p, tmp_path) for p in find_compare_files(tmp_path)]
    t = tables.compare_details(compares).set_index("compare_dir")
    row = t.loc[str(d)]
    assert row["seed_run_fps"] == [100.0, 300.0]
    assert row["seed_cores_busy"] == pytest.approx(0.6) and row["impala_cores_busy"] == 1.0
    assert row["seed_cpu_us"] == pytest.approx(1e6 / 250.0)
    # learner: 0.3 of 2 cores at 200 frames/s (the SEED runs' means) = 3,000 us a frame
    assert row["seed_learner_cpu_us"] == pytest.approx(3000.0)
    # old columns read by architecture: SEED's latency is its action latency, IMPALA's not
    assert row["seed_latency_p50_ms"] == 5.0 and row["seed_batch_ms"] == 3.0
    assert row["impala_inference_ms"] == 3.0 and row["impala_pull_ms"] == 7.0
    assert row["ceiling_mismatch"] == "batch_size" and row["seed_lockstep_fraction"] == 0.4
    assert row["seed_turns_fps"] == 400.0 and row["seed_turns_fraction"] == 0.5
    after = t.loc[str(tmp_path / "c" / "serve-after-x-1")]
    assert math.isnan(after["seed_lockstep_fraction"]) and after["ceiling_mismatch"] == ""
    assert math.isnan(after["seed_turns_fraction"])
    assert tables.before_after_pairs(t.index) == [
        (str(d), str(tmp_path / "c" / "serve-after-x-1")),
        (str(d), str(tmp_path / "c" / "serve-after-x-rerun-1"))]


def test_the_cycle_groups_hold_each_timeline_segment_once_in_order():
    assert [name for _, names in tables.CYCLE_GROUPS for name in names] == [
        name for name, _ in SEGMENTS]


def test_lockstep_cycles_add_up_and_follow_the_compares_order(tmp_path):
    runs = {}
    for compare, run, idle in (("a", "seed-1", None), ("b", "seed-2", True),
                               ("b", "seed-1", False)):
        d = tmp_path / compare / run
        d.mkdir(parents=True)
        if idle is not None:  # a: no config.json, whether idle cores polled is not known
            (d / "config.json").write_text(json.dumps(
                {"config": {"cpu_idle_poll": idle}, "architecture": "seed"}))
        runs[compare, run] = load_timeline(make_timeline(d, {"decode": 0.625}))
    t = tables.lockstep_cycles(list(runs.values()), [str(tmp_path / "b")])
    assert list(zip(t["compare_dir"], t["run"])) == [
        (str(tmp_path / "b"), "seed-1"), (str(tmp_path / "b"), "seed-2"),
        (str(tmp_path / "a"), "seed-1")]
    assert t["cpu_idle_poll"].tolist() == [False, True, None]
    groups = [g for g, _ in tables.CYCLE_GROUPS]
    assert t[groups].sum(axis=1).tolist() == t["interval_ms"].tolist() == [13.5] * 3
    assert t["request"].tolist() == [1.5] * 3  # 0.25 + 0.5 + 0.625 + 0.0625 + 0.0625
