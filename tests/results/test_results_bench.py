"""seed.results.bench: finding and reading what seed compare and seed roofline write, with
one-line errors on bad files; old compare columns converted row by row."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests.support.results_tree import BENCH, make_compare, make_timeline, make_tree

from seed.results import bench, files, roofline, timeline


def test_compare_sweep_roofline_loaders(tmp_path):
    root = make_tree(tmp_path)
    [cmp_path] = bench.find_compare_files(root)
    df = bench.load_compare(cmp_path, root)
    assert list(df["run"]) == ["seed-1", "impala-1", "seed-2"]
    assert df["benchmark"].unique().tolist() == [BENCH]
    assert df["mode"].iloc[0] == "train" and df["fps_ratio"].iloc[0] == pytest.approx(1.95)
    (cmp_path.parent / "compare.json").unlink()  # ratio then computed from the rows
    df = bench.load_compare(cmp_path, root)
    assert df["fps_ratio"].iloc[0] == pytest.approx(400.0 / 205.0)
    (cmp_path.parent / "base_config.json").write_text(json.dumps(
        {"benchmark": "", "env": "atari:Pong"}))  # what seed compare writes beside it
    assert bench.load_compare(cmp_path, None)["benchmark"].iloc[0] == "atari_Pong"
    [sweep] = bench.find_sweep_files(root)
    s = bench.load_sweep(sweep, root)
    assert list(s["size"]) == ["small", "large"] and s["parameters"].dtype.kind in "if"
    [roof] = roofline.find_roofline_files(root)
    assert roofline.load_roofline(roof).ceiling("seed", "train") == 1000.0


def test_bad_compare_files(tmp_path):
    root = make_tree(tmp_path)
    [cmp_path] = bench.find_compare_files(root)
    cmp_path.write_text("run,arch\nseed-1,seed\n")
    with pytest.raises(files.ResultsFileError, match="missing column.*fps"):
        bench.load_compare(cmp_path, root)
    cmp_path.write_text("run,arch,fps\nseed-1,seed,fast\n")
    with pytest.raises(files.ResultsFileError,
                       match="compare.csv: line 2, column fps: 'fast' is not a number"):
        bench.load_compare(cmp_path, root)
    cmp_path.write_text("run,arch,fps\nseed-1,seed,10\nimpala-1,impala\n")  # cut short
    with pytest.raises(files.ResultsFileError,
                       match="compare.csv: line 3 has 2 fields, the header has 3"):
        bench.load_compare(cmp_path, root)
    cmp_path.write_text("")
    with pytest.raises(files.ResultsFileError, match="empty"):
        bench.load_compare(cmp_path, root)
    [roof] = roofline.find_roofline_files(root)
    roof.write_text("[1, 2]")
    with pytest.raises(files.ResultsFileError, match="expected a JSON object"):
        roofline.load_roofline(roof)
    loaded, skipped = bench.load_all(root, roofline.find_roofline_files, roofline.load_roofline)
    assert loaded == [] and skipped[0][0] == roof


# compare.csv header as seed compare wrote it before each quantity had its own column.
OLD_COMPARE_HEADER = ("run,arch,rc,steady,warmup_s,window_s,fps,learner_fps,"
                      "inference_batch_size,inference_ms,latency_p50_ms,latency_p99_ms,"
                      "parameter_pull_ms,cpu_util,cpu_util_run,frames_per_cpu_s,env_frames,"
                      "wall_s,run_dir")
REPO_RESULTS = Path(__file__).resolve().parents[2] / "results"


def test_an_old_compare_table_is_converted_row_by_row(tmp_path):
    d = tmp_path / "cmp"
    d.mkdir()
    (d / "compare.csv").write_text(
        OLD_COMPARE_HEADER + "\n"
        "seed-1,seed,0,True,5,30,900,,16,1.5,4.0,12.0,,0.9,0.9,500,1000,40,x\n"
        "impala-1,impala,0,True,9,30,1200,,16,0.7,0.8,1.1,2.0,1.0,1.0,600,2000,40,y\n"
        "seed-2,seed,0,True,5,30,950,,16,1.6,4.5,13.0,,0.9,0.9,520,1100,40,z\n")
    df = bench.load_compare(d / "compare.csv").set_index("run")
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


def test_committed_compares_load_with_their_old_columns_converted():
    files = bench.find_compare_files(REPO_RESULTS)
    assert files
    for path in files:
        df = bench.load_compare(path, REPO_RESULTS)
        raw = pd.read_csv(path)
        if "latency_p50_ms" not in raw.columns:
            continue
        assert "latency_p50_ms" not in df.columns, path
        seed_rows = (raw["arch"] == "seed").to_numpy()
        np.testing.assert_array_equal(df["action_latency_p50_ms"].to_numpy()[seed_rows],
                                      raw["latency_p50_ms"].to_numpy()[seed_rows])
        assert df["action_latency_p50_ms"][~seed_rows].isna().all()


def test_a_compares_timelines_are_its_seed_runs(tmp_path):
    d = make_compare(tmp_path / "serve-1", "serve", 100.0, 50.0)
    for run in ("seed-1", "seed-2", "impala-1"):
        (d / run).mkdir()
    make_timeline(d / "seed-2")
    make_timeline(d / "impala-1")  # not a SEED run's: IMPALA has no lock-step cycle
    [df] = [bench.load_compare(p) for p in bench.find_compare_files(tmp_path)]
    [path] = timeline.find_timeline_files(d, df.loc[df["arch"] == "seed", "run"])
    assert path == d / "seed-2" / "timeline.json"
    t = timeline.load_timeline(path)
    assert t.source == path and t.cycles == 900 and t.interval.mean_ms == 13.0
    assert t.segments["actor sim"].mean_ms == 4.75 and t.schedule == {}  # a trimmed file


def _damage_timeline(summary: dict, how: str) -> str | list | dict:
    """``summary`` (a timeline.json's mapping) damaged ``how``; text is written as it is."""
    if how == "truncated":
        return json.dumps(summary)[:80]
    if how == "a list":
        return [summary]
    if how == "no cycles":
        return {**summary, "cycles": 0}
    if how == "no interval":
        return {k: v for k, v in summary.items() if k != "interval"}
    if how == "text frames/s":
        return {**summary, "frames_per_s": "fast"}
    if how == "a segment missing":
        return {**summary, "segments": summary["segments"][1:]}
    if how == "a segment unknown":
        return {**summary, "segments": summary["segments"] + [{"name": "nap", "mean_ms": 1}]}
    if how == "a segment twice":
        return {**summary, "segments": summary["segments"] + summary["segments"][:1]}
    if how == "a mean not a number":
        segments = [dict(s) for s in summary["segments"]]
        segments[3]["mean_ms"] = None
        return {**summary, "segments": segments}
    if how == "off path not a list":
        return {**summary, "off_path": {"post-reply bookkeeping": 2.5}}
    raise ValueError(how)


@pytest.mark.parametrize("how, says", [
    ("truncated", "not valid JSON"), ("a list", "expected a JSON object, got list"),
    ("no cycles", "cycles is 0, not a count"), ("no interval", "interval.mean_ms is None"),
    ("text frames/s", "frames_per_s is 'fast', not a number"),
    ("a segment missing", "segments are not the 12 seed timeline writes (missing: "
                          "pre-inference)"),
    ("a segment unknown", "(unknown: nap)"), ("a segment twice", "segments names an entry twice"),
    ("a mean not a number", "segment 'reply hand-off' mean_ms is None"),
    ("off path not a list", "off_path is not a list of named entries")])
def test_a_damaged_timeline_is_named_in_one_line(tmp_path, how, says):
    path = make_timeline(tmp_path)
    damaged = _damage_timeline(json.loads(path.read_text()), how)
    path.write_text(damaged if isinstance(damaged, str) else json.dumps(damaged))
    with pytest.raises(files.ResultsFileError) as e:
        timeline.load_timeline(path)
    assert str(e.value).startswith(f"{path}: ") and says in str(e.value)
    assert "\n" not in str(e.value)
