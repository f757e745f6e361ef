"""seed.results.tables: the tables the figures and the report draw from."""

from __future__ import annotations

import json

import pytest
from results_tree import BENCH, make_compare, make_tree, write_csv

from seed.results import bench, run_dirs, tables


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
    compares = [bench.load_compare(p, root) for p in bench.find_compare_files(root)]
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
    compares = [bench.load_compare(p, root) for p in bench.find_compare_files(root)]
    roofs = [bench.load_roofline(p) for p in bench.find_roofline_files(root)]
    frac = tables.roofline_table(runs, compares, roofs, root)
    # compare.json holds no roofline: every row is a run against toy_catch_mlp.json
    assert set(frac["source"]) == {"runs vs toy_catch_mlp.json"} and len(frac) == 4
    seed1 = frac[(frac["arch"] == "seed") & (frac["run"] == "run-1")].iloc[0]
    assert seed1["ceiling"] == 1000.0 and seed1["fraction"] == pytest.approx(0.42, rel=1e-3)
    (root / BENCH / "compare" / "20260101-000000" / "compare.json").write_text(json.dumps(
        {"mode": "train", "roofline": {"mode": "train", "seed_fraction": 0.5,
                                       "seed_ceiling_fps": 800.0, "impala_fraction": None,
                                       "mismatched": ["batch_size"]}}))
    compares = [bench.load_compare(p, root) for p in bench.find_compare_files(root)]
    frac = tables.roofline_table(runs, compares, roofs, root)
    row = frac[frac["run"] == "mean"].iloc[0]
    assert row["source"] == (f"{BENCH}/compare/20260101-000000 (roofline shape differs: "
                             "batch_size)") and row["fps"] == 400.0
    final = tables.final_returns(runs).set_index("arch")
    assert final.loc["seed", "runs"] == 2 and final.loc["impala", "runs"] == 2
