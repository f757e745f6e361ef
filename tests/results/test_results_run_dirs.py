"""seed.results.run_dirs: finding run directories and reading them, with one-line errors
for partial, damaged or foreign ones; old metrics columns read through OLD_COLUMNS."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from tests.support.results_tree import BENCH, DAMAGE, damage, make_run, make_tree

from seed.metrics.writer import LEARNING_COLUMNS, METRICS_COLUMNS
from seed.results import files, run_dirs, steady, tables


def test_find_and_load_runs(tmp_path):
    root = make_tree(tmp_path)
    # A probe of a changed config (scripts/dmlab_probes.py) is no run of the benchmark.
    make_run(root / BENCH / "probes" / "impala-lr", "impala", 0, fps=100.0)
    found = run_dirs.find_runs(root)
    assert [p.relative_to(root).as_posix() for p in found] == [
        f"{BENCH}/impala/run-0", f"{BENCH}/impala/run-1", f"{BENCH}/seed/run-0",
        f"{BENCH}/seed/run-1"]
    runs, skipped = run_dirs.load_runs(root)
    assert skipped == []
    assert {(r.architecture, r.seed) for r in runs} == {("seed", 0), ("seed", 1),
                                                         ("impala", 0), ("impala", 1)}
    r = run_dirs.load_run(root / BENCH / "seed" / "run-1")
    assert r.benchmark == BENCH and r.config["seed"] == 1 and r.frames_per_step == 1
    assert list(r.metrics.columns) == (METRICS_COLUMNS + LEARNING_COLUMNS
                                       + ["dead_relu_0_torso_0", "dead_relu_1_torso_1"])
    assert r.metrics["parameter_pull_ms"].isna().all()
    assert len(r.metrics) == 8 and len(r.episodes) == 48
    assert r.metrics["env_frames"].iloc[-1] == 8 * int(420.0 * 5)


def test_benchmark_falls_back_to_env_name(tmp_path):
    d = make_run(tmp_path / "x", "seed", 0, 100.0, benchmark="", env="atari:Pong",
                 frames_per_step=4)
    r = run_dirs.load_run(d)
    assert r.benchmark == "atari_Pong" and r.frames_per_step == 4


@pytest.mark.parametrize("how", DAMAGE)
def test_damaged_run_dir_gives_one_line_error(tmp_path, how):
    run = make_run(tmp_path / BENCH / "seed" / "r", "seed", 0, 100.0)
    fragment = damage(run, how)
    with pytest.raises(files.RunDirError) as e:
        run_dirs.load_run(run)
    msg = str(e.value)
    assert fragment in msg and "\n" not in msg and str(run) in msg


def test_load_runs_skips_damaged_and_says_why(tmp_path):
    root = make_tree(tmp_path)
    bad = root / BENCH / "impala" / "run-1"
    damage(bad, "no_config")  # still found: it has metrics.csv
    runs, skipped = run_dirs.load_runs(root)
    assert len(runs) == 3
    assert [(d, "config.json: missing" in why) for d, why in skipped] == [(bad, True)]
    assert bad not in run_dirs.find_runs(root)  # a strict search wants config.json


def test_a_run_without_summary_is_in_progress_and_a_damaged_summary_is_named(tmp_path):
    run = make_run(tmp_path / "r", "seed", 0, 100.0)
    assert run_dirs.load_run(run).summary is None  # in progress, or stopped before writing it
    (run / "summary.json").write_text('{"stopped_by": "budget"}')
    assert run_dirs.load_run(run).summary == {"stopped_by": "budget"}
    (run / "summary.json").write_text('{"stopped_by": ')
    with pytest.raises(files.RunDirError, match=r"summary.json: not valid JSON"):
        run_dirs.load_run(run)


def test_a_foreign_config_json_is_named_with_why(tmp_path):
    run = make_run(tmp_path / "r", "seed", 0, 100.0)
    (run / "config.json").write_text(json.dumps({"config": {"env": "toy:catch"}}))
    with pytest.raises(files.RunDirError, match=r"config.json: names no architecture"):
        run_dirs.load_run(run)
    (run / "config.json").write_text(json.dumps(
        {"config": {"arch": "seed"}, "frames_per_step": "four"}))
    with pytest.raises(files.RunDirError, match=r"frames_per_step 'four' is not an integer"):
        run_dirs.load_run(run)
    with pytest.raises(files.RunDirError, match=r"metrics.csv: not a directory$"):
        run_dirs.load_run(run / "metrics.csv")


def test_only_training_runs_go_on_reward_curves(tmp_path):
    run = run_dirs.load_run(make_tree(tmp_path) / BENCH / "seed" / "run-1")
    assert run_dirs.is_training_run(run)
    from dataclasses import replace
    assert not run_dirs.is_training_run(replace(run, config={**run.config, "train": False}))
    for where in ("compare-catch/serve-1/seed-1", "demo/20261203/impala-1"):
        assert not run_dirs.is_training_run(replace(run, path=tmp_path / where))


def test_training_and_evaluation_episodes_are_told_apart(tmp_path):
    run = run_dirs.load_run(make_run(tmp_path / "r", "seed", 0, 100.0, eval_env=5))
    train = run_dirs.training_episodes(run.episodes)
    evaluation = run_dirs.evaluation_episodes(run.episodes)
    assert set(evaluation["env_id"]) == {5} and 5 not in set(train["env_id"])
    assert len(train) + len(evaluation) == len(run.episodes)
    row = tables.runs_table([run]).iloc[0]
    assert row["final_eval_return"] == 1.0 and row["final_return"] < 1.0
    # A run from before the evaluation column: every episode is a training one.
    old = run.episodes.drop(columns=["evaluation"]).assign(evaluation=np.nan)
    assert len(run_dirs.training_episodes(old)) == len(old)


# ----------------------------------------------------------------------------- old columns

# metrics.csv headers as runs wrote them before each quantity had its own column:
# latency_* and inference_ms meant one thing under SEED and another under IMPALA.
OLD_METRICS_HEADER = ("wall_time,env_steps,env_frames,fps,learner_steps,learner_fps,"
                      "inference_batch_size,queue_fill,episodes,episode_return,latency_p50_ms,"
                      "latency_p99_ms,parameter_pull_ms,loss,inference_ms")
OLD_METRICS_ROWS = ("1.0,100,100,100,0,0,4,0,0,,,,,,\n"
                    "2.0,300,300,200,1,50,4,0.5,1,0.5,2.5,7.5,,0.1,0.8\n"
                    "3.0,600,600,300,2,60,4,0.5,0,,3.5,9.5,,0.1,1.2\n")
REPO_RESULTS = Path(__file__).resolve().parents[2] / "results"


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
    run = run_dirs.load_run(_old_run(tmp_path / "seed-run", "seed"))
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
    s = steady.steady_state(m, train=True)
    assert s["action_latency_p50_ms"] == 3.5 and s["learner_inference_ms"] == 1.2
    assert s["actor_inference_ms"] is None


def test_an_old_impala_run_has_no_action_latency_only_local_inference(tmp_path):
    run = run_dirs.load_run(_old_run(tmp_path / "impala-run", "impala"))
    m = run.metrics
    assert "latency_p50_ms" not in m.columns and "inference_ms" not in m.columns
    # Its latency_* were percentiles of the actors' per-unroll mean local inference time.
    assert _all_nan(m["action_latency_p50_ms"]) and _all_nan(m["action_latency_p99_ms"])
    assert m["actor_inference_p50_ms"].tolist()[1:] == [2.5, 3.5]
    assert m["actor_inference_p99_ms"].tolist()[1:] == [7.5, 9.5]
    assert m["actor_inference_ms"].tolist()[1:] == [0.8, 1.2]
    assert _all_nan(m["learner_inference_ms"])
    assert m.attrs["old_columns"]["latency_p50_ms"] == {"impala": "actor_inference_p50_ms"}
    s = steady.steady_state(m, train=True)
    assert s["action_latency_p50_ms"] is None and s["actor_inference_ms"] == 1.2


def test_an_old_metrics_file_of_unknown_architecture_keeps_its_columns(tmp_path):
    """Without a config.json to say the architecture, nothing is guessed."""
    path = _old_run(tmp_path / "orphan", None) / "metrics.csv"
    m = run_dirs.read_metrics(path)
    assert m["latency_p50_ms"].tolist()[1:] == [2.5, 3.5]
    assert m["inference_ms"].tolist()[1:] == [0.8, 1.2]
    assert _all_nan(m["action_latency_p50_ms"]) and m.attrs["old_columns"] == {}
    # ...and the caller who knows it can say so
    m = run_dirs.read_metrics(path, "seed")
    assert m["action_latency_p50_ms"].tolist()[1:] == [2.5, 3.5]


def test_no_column_written_today_has_an_old_name():
    from seed.results.compare import RUN_COLUMNS
    assert set(run_dirs.OLD_COLUMNS).isdisjoint(METRICS_COLUMNS + LEARNING_COLUMNS + RUN_COLUMNS)


def _raw_column(path: Path, name: str) -> list[float]:
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    j = [h.strip() for h in rows[0]].index(name)
    return [float(r[j]) if r[j].strip() else float("nan") for r in rows[1:] if r]


def test_committed_runs_load_with_their_old_columns_converted():
    runs, skipped = run_dirs.load_runs(REPO_RESULTS)
    assert runs
    # Two committed serve runs kept only their metrics (no episodes.csv): those still read.
    for d, reason in skipped:
        assert reason.endswith("episodes.csv: missing"), reason
        assert "latency_p50_ms" not in run_dirs.read_metrics(d / run_dirs.METRICS).columns
    old = 0
    for run in runs:
        path = run.path / run_dirs.METRICS
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
