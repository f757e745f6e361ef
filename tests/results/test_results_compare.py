"""seed.results.compare, .sweep, .roofline, .timeline: finding and reading what seed compare,
seed roofline and seed timeline write, with one-line errors on bad files; old compare columns
converted row by row."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests.support.results_tree import BENCH, make_compare, make_timeline, make_tree

from seed.results import compare, files, roofline, sweep, timeline


def test_compare_sweep_roofline_loaders(tmp_path):
    root = make_tree(tmp_path)
    [cmp_path] = compare.find_compare_files(root)
    c = compare.load_compare(cmp_path, root)
    assert list(c.runs["run"]) == ["seed-1", "impala-1", "seed-2"]
    assert c.benchmark == BENCH and c.directory == cmp_path.parent and c.source == cmp_path
    assert c.mode == "train" and c.fps_ratio == pytest.approx(1.95)
    assert c.seed_runs() == ["seed-1", "seed-2"] and c.fps("impala") == [205.0]
    assert c.mean("seed", "fps") == pytest.approx(400.0) and math.isnan(c.mean("seed", "nap"))
    (cmp_path.parent / "compare.json").unlink()  # ratio then computed from the rows
    c = compare.load_compare(cmp_path, root)
    assert c.fps_ratio == pytest.approx(400.0 / 205.0) and c.mode == "" and c.roofline == {}
    assert math.isnan(c.cpu_ratio) and c.cores is None
    (cmp_path.parent / "base_config.json").write_text(json.dumps(
        {"benchmark": "", "env": "atari:Pong"}))  # what seed compare writes beside it
    c = compare.load_compare(cmp_path, None)
    assert c.benchmark == "atari_Pong" and c.config["env"] == "atari:Pong"
    [sweep_path] = sweep.find_sweep_files(root)
    s = sweep.load_sweep(sweep_path, root)
    assert s.size_names() == ["small", "large"] and s.sizes["parameters"].dtype.kind in "if"
    assert s.benchmark == BENCH and len(s.rows()) == 2
    [roof] = roofline.find_roofline_files(root)
    assert roofline.load_roofline(roof).ceiling("seed", "train") == 1000.0


def test_bad_compare_files(tmp_path):
    root = make_tree(tmp_path)
    [cmp_path] = compare.find_compare_files(root)
    cmp_path.write_text("run,arch\nseed-1,seed\n")
    with pytest.raises(files.ResultsFileError, match="missing column.*fps"):
        compare.load_compare(cmp_path, root)
    cmp_path.write_text("run,arch,fps\nseed-1,seed,fast\n")
    with pytest.raises(files.ResultsFileError,
                       match="compare.csv: line 2, column fps: 'fast' is not a number"):
        compare.load_compare(cmp_path, root)
    cmp_path.write_text("run,arch,fps\nseed-1,seed,10\nimpala-1,impala\n")  # cut short
    with pytest.raises(files.ResultsFileError,
                       match="compare.csv: line 3 has 2 fields, the header has 3"):
        compare.load_compare(cmp_path, root)
    cmp_path.write_text("")
    with pytest.raises(files.ResultsFileError, match="empty"):
        compare.load_compare(cmp_path, root)
    [roof] = roofline.find_roofline_files(root)
    roof.write_text("[1, 2]")
    with pytest.raises(files.ResultsFileError, match="expected a JSON object"):
        roofline.load_roofline(roof)
    loaded, skipped = files.load_all(root, roofline.find_roofline_files, roofline.load_roofline)
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
    df = compare.load_compare(d / "compare.csv").runs.set_index("run")
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
    files = compare.find_compare_files(REPO_RESULTS)
    assert files
    for path in files:
        df = compare.load_compare(path, REPO_RESULTS).runs
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
    [c] = [compare.load_compare(p) for p in compare.find_compare_files(tmp_path)]
    [path] = timeline.find_timeline_files(d, c.seed_runs())
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
