"""End to end: `seed train` as a user runs it, both architectures, on toy:catch.

These are the suite's learning checks: each run is a real learner process with
two actor processes talking gRPC over a Unix socket.
"""

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONUNBUFFERED="1")


def seed_cli(*args, timeout=300, check=True, env=None):
    proc = subprocess.run([sys.executable, "-m", "seed.cli", *args], cwd=ROOT,
                          env=dict(ENV, **(env or {})), capture_output=True, text=True,
                          timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"seed {' '.join(args)} exited {proc.returncode}:\n"
                             f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def frames_to_threshold(run_dir: Path, threshold=0.8, window=100):
    rows = [r for r in csv.DictReader((run_dir / "episodes.csv").open())
            if r.get("evaluation", "0") != "1"]  # training envs only
    returns = np.array([float(r["episode_return"]) for r in rows])
    frames = np.array([int(r["env_frames"]) for r in rows])
    for i in range(window, len(returns) + 1):
        if returns[i - window:i].mean() >= threshold:
            return int(frames[i - 1])
    return None


def check_run_dir(run_dir: Path, arch: str):
    config = json.loads((run_dir / "config.json").read_text())
    assert config["architecture"] == arch and config["config"]["arch"] == arch
    assert config["machine"]["cpu_count"] >= 1 and "tensorflow-cpu" in config["machine"]["packages"]
    assert config["learner_device"] == "CPU"
    metrics = list(csv.DictReader((run_dir / "metrics.csv").open()))
    assert len(metrics) >= 2
    from seed.metrics.writer import LEARNING_COLUMNS, METRICS_COLUMNS
    columns = list(metrics[0].keys())
    relu = columns[len(METRICS_COLUMNS) + len(LEARNING_COLUMNS):]
    assert columns == METRICS_COLUMNS + LEARNING_COLUMNS + relu
    assert relu == ["dead_relu_0_torso_0", "dead_relu_1_torso_1"]  # the MLP's two ReLU layers
    trained = [r for r in metrics if r["update_ratio"]]
    assert trained, "no row carries the learning diagnostics"
    for r in trained:  # the policy moves, and the diagnostics are in range
        assert 0 < float(r["update_ratio"]) < 0.1
        assert 0 <= float(r["entropy"]) <= np.log(3) + 1e-4  # Catch has 3 actions
        assert float(r["mean_abs_log_rho"]) >= 0 and float(r["grad_norm"]) > 0
        assert float(r["explained_variance"]) <= 1 and float(r["learning_rate"]) > 0
        assert all(0 <= float(r[c]) <= 1 for c in relu)
    # A policy that learned Catch is far from uniform (ln 3 = 1.10 nats); the entropy bonus
    # and the states where the paddle may wait keep it from zero (0.4-0.6 seen at the end).
    # Its explained variance is no test: once every episode is won the targets barely vary.
    assert float(trained[-1]["entropy"]) < 0.75 * np.log(3)
    frames = [int(r["env_frames"]) for r in metrics]
    assert frames == sorted(frames) and frames[-1] >= 100_000
    assert int(metrics[-1]["learner_steps"]) > 0
    episodes = list(csv.DictReader((run_dir / "episodes.csv").open()))
    assert len(episodes) > 1000
    assert {float(e["episode_return"]) for e in episodes} <= {-1.0, 1.0}
    assert all(int(e["episode_length"]) == 9 for e in episodes)
    assert list((run_dir / "tb").glob("events.out.tfevents.*"))
    assert (run_dir / "checkpoint.npz").exists()


def cpuinfo_with_flags(path: Path, add: str = "", drop: tuple = ()) -> dict:
    """This machine's /proc/cpuinfo with flags added or dropped, written to ``path``: the
    environment that makes a run read it (seed.metrics.cpu_facts, $SEED_CPUINFO)."""
    lines = []
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            key, _, flags = line.partition(":")
            line = f"{key}: {' '.join(f for f in flags.split() if f not in drop)} {add}"
        lines.append(line)
    path.write_text("\n".join(lines) + "\n")
    return {"SEED_CPUINFO": str(path)}


@pytest.mark.parametrize("arch,compute_dtype", [
    ("seed", "float32"), ("impala", "float32"),
    # The learner and SEED's inference, or IMPALA's actors, in bfloat16 (on a CPU with it:
    # this one's flags and avx512_bf16, whatever it has, so it runs everywhere; TensorFlow
    # emulates it without bfloat16 units). They wait for -m slow: the float32 runs above
    # prove the learning, tests/networks/test_precision.py that bfloat16 computes the same
    # forward passes within its rounding and that its train steps move the float32 variables.
    pytest.param("seed", "bfloat16", marks=pytest.mark.slow),
    pytest.param("impala", "bfloat16", marks=pytest.mark.slow)])
def test_catch_learns_to_0_8_within_100k_frames(tmp_path, arch, compute_dtype):
    run_dir = tmp_path / arch
    t0 = time.monotonic()
    proc = seed_cli("train", "--env", "toy:catch", "--arch", arch, "--actors", "2",
                    "--envs-per-actor", "4", "--frames", "100000", "--logdir", str(run_dir),
                    "--no-progress", "--set", "log_interval_s=2",
                    "--compute-dtype", compute_dtype,
                    env=cpuinfo_with_flags(tmp_path / "cpuinfo", add="avx512_bf16"))
    elapsed = time.monotonic() - t0
    summary = json.loads((run_dir / "summary.json").read_text())
    reached = frames_to_threshold(run_dir)
    config = json.loads((run_dir / "config.json").read_text())["config"]
    assert config["compute_dtype"] == compute_dtype
    print(f"\n{arch}, {compute_dtype}: mean return >= 0.8 (last 100 episodes) at {reached} "
          f"frames; {summary['env_frames']} frames in {elapsed:.0f}s, "
          f"{summary['fps']:.0f} frames/s")
    assert "frames/s" in proc.stdout  # the one-line summary
    assert reached is not None and reached <= 100_000, f"never reached 0.8: {summary}"
    assert summary["mean_return_last_100"] >= 0.8
    check_run_dir(run_dir, arch)


# R2D2's learning is checked in the default suite by tests/agents/test_r2d2_agent.py (its train
# step against a NumPy reference, and the two-step chain learned), its run end to end by the
# replay-ratio test below (replay, the eval env logged apart); this run of 2.5 minutes waits
# for -m slow.
@pytest.mark.slow
def test_r2d2_learns_catch_to_0_8(tmp_path):
    run_dir = tmp_path / "r2d2"
    seed_cli("train", "--env", "toy:catch", "--arch", "seed", "--agent", "r2d2", "--actors", "2",
             "--envs-per-actor", "4", "--frames", "100000", "--logdir", str(run_dir),
             "--no-progress", "--set", "burn_in=2", "--set", "n_steps=3",
             "--set", 'network_kwargs={"lstm_size": 32}', "--set", "log_interval_s=2",
             "--set", "eval_envs=1")
    reached = frames_to_threshold(run_dir)
    summary = json.loads((run_dir / "summary.json").read_text())
    print(f"\nr2d2: mean return >= 0.8 (last 100 episodes) at {reached} frames; "
          f"{summary['env_frames']} frames, {summary['fps']:.0f} frames/s; eval envs "
          f"{summary['mean_eval_return_last_100']}")
    assert reached is not None and reached <= 100_000, f"never reached 0.8: {summary}"
    # The eval env (the last id) is logged apart: its own episodes, its own metrics column.
    episodes = list(csv.DictReader((run_dir / "episodes.csv").open()))
    assert {e["env_id"] for e in episodes if e["evaluation"] == "1"} == {"7"}
    assert {e["evaluation"] for e in episodes if e["env_id"] != "7"} == {"0"}
    metrics = list(csv.DictReader((run_dir / "metrics.csv").open()))
    assert any(r["eval_return"] for r in metrics) and summary["mean_eval_return_last_100"] >= 0.8
    assert all(float(r["replay_ratio"]) > 0 for r in metrics if r["replay_ratio"])


def test_r2d2_replay_ratio_holds_the_actors_back_for_a_slower_learner(tmp_path):
    # Free-running, the learner has made a few steps by the end of so short a run (tracing
    # its train step takes most of it): ratio 0.03-0.04 here. Held to 10, the actors must
    # wait: 6,000 frames insert about 7 training envs x (750 steps - 21) / 17 new steps
    # per sequence + 7 = 307 sequences; the first
    # 50 buy nothing (replay_min_size), so the ratio ends near 10 x 257 / 307 = 8.4,
    # within the error buffer (10 x 7 + 8 = 78 sequences, 0.3 of the ratio) of it.
    run_dir = tmp_path / "r2d2-ratio"
    seed_cli("train", "--env", "toy:catch", "--arch", "seed", "--agent", "r2d2", "--actors", "2",
             "--envs-per-actor", "4", "--frames", "6000", "--logdir", str(run_dir),
             "--no-progress", "--set", "burn_in=2", "--set", 'network_kwargs={"lstm_size": 32}',
             "--set", "log_interval_s=1", "--set", "eval_envs=1", "--set", "replay_ratio=10",
             "--set", "replay_min_size=50")
    config = json.loads((run_dir / "config.json").read_text())["config"]
    assert (config["r2d2"]["replay_ratio"], config["r2d2"]["replay_min_size"],
            config["unroll_length"]) == (10, 50, 20)
    metrics = list(csv.DictReader((run_dir / "metrics.csv").open()))
    rows = [r for r in metrics if r["replay_ratio"]]
    assert rows, "no train step was logged"
    # Each row is the mean over its interval's steps, so the last one trails a little.
    assert 7.0 <= float(rows[-1]["replay_ratio"]) <= 10.0 + 78 / 257, rows[-1]
    # The eval env (the last id, about 83 episodes of 9 steps here) is logged apart: its
    # own episodes, its own metrics column and summary figure.
    episodes = list(csv.DictReader((run_dir / "episodes.csv").open()))
    evaluation = [e for e in episodes if e["evaluation"] == "1"]
    assert {e["env_id"] for e in evaluation} == {"7"}
    assert {e["evaluation"] for e in episodes if e["env_id"] != "7"} == {"0"}
    assert any(r["eval_return"] for r in metrics)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["eval_episodes"] == len(evaluation) > 0
    assert summary["mean_eval_return_last_100"] == pytest.approx(
        np.mean([float(e["episode_return"]) for e in evaluation[-100:]]))


@pytest.mark.parametrize("arch", ["seed", "impala"])
def test_short_pong_run_writes_well_formed_results_bfloat16_falling_back_to_float32(tmp_path,
                                                                                    arch):
    """The committed Pong config, asked for bfloat16 on a CPU without avx512_bf16 or
    amx_bf16: one line says so (the learner's, not one per actor) and the run computes in
    float32, writing well-formed results."""
    run_dir = tmp_path / arch
    proc = seed_cli("train", "--config", "experiments/atari_pong_vtrace.yaml", "--arch", arch,
                    "--frames", "4000", "--envs-per-actor", "2", "--logdir", str(run_dir),
                    "--no-progress", "--set", "batch_size=2", "--set", "log_interval_s=1",
                    "--compute-dtype", "bfloat16",
                    env=cpuinfo_with_flags(tmp_path / "cpuinfo",
                                           drop=("avx512_bf16", "amx_bf16")))
    lines = [line for line in proc.stderr.splitlines() if "compute_dtype" in line]
    assert len(lines) == 1 and lines[0].endswith(
        "has no avx512_bf16 or amx_bf16: computing in float32"), proc.stderr[-2000:]
    config = json.loads((run_dir / "config.json").read_text())
    assert config["architecture"] == arch and config["frames_per_step"] == 4
    assert config["config"]["benchmark"] == "atari_pong_vtrace"
    assert config["config"]["compute_dtype"] == "float32"
    rows = list(csv.DictReader((run_dir / "metrics.csv").open()))
    assert rows and all(int(r["env_frames"]) == 4 * int(r["env_steps"]) for r in rows)
    assert int(rows[-1]["env_frames"]) >= 4000
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["env_frames"] >= 4000 and summary["fps"] > 0
    print(f"\n{arch} Pong: {summary['env_frames']} frames, {summary['fps']:.0f} frames/s "
          f"(including start-up)")


def _children(pid):
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def test_sigterm_stops_cleanly_and_resume_continues_counters(tmp_path):
    run_dir = tmp_path / "run"
    args = ["train", "--env", "toy:catch", "--arch", "seed", "--actors", "2",
            "--envs-per-actor", "2", "--frames", "1000000", "--logdir", str(run_dir),
            "--no-progress", "--set", "log_interval_s=1"]
    proc = subprocess.Popen([sys.executable, "-m", "seed.cli", *args], cwd=ROOT, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # wait until training is under way
            time.sleep(1)
            rows = (list(csv.DictReader((run_dir / "metrics.csv").open()))
                    if (run_dir / "metrics.csv").exists() else [])
            if rows and int(rows[-1]["learner_steps"]) >= 5:
                break
        actors = _children(proc.pid)
        assert len([a for a in actors if "actor" in " ".join(a.cmdline())]) == 2
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-2000:]
    time.sleep(0.5)
    assert not [a for a in actors if a.is_running() and a.status() != psutil.STATUS_ZOMBIE], \
        "actor processes outlived the run"
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["stopped_by"] == "SIGTERM"
    before = list(csv.DictReader((run_dir / "metrics.csv").open()))
    from seed.runtime.checkpoint import load
    _, counters = load(run_dir)
    assert counters["env_steps"] == summary["env_steps"] > 0
    assert counters["learner_steps"] == summary["learner_steps"] > 0

    target = counters["env_steps"] + 3000
    proc = seed_cli("train", "--resume", str(run_dir), "--frames", str(target), "--no-progress")
    assert f"resume: frames 1000000 -> {target} (given explicitly)" in proc.stderr
    after = list(csv.DictReader((run_dir / "metrics.csv").open()))
    assert len(after) > len(before)
    new = after[len(before):]
    assert int(new[0]["env_frames"]) >= int(before[-1]["env_frames"])  # carries on
    assert float(new[0]["wall_time"]) >= float(before[-1]["wall_time"])
    assert int(new[-1]["learner_steps"]) >= counters["learner_steps"]
    assert int(new[-1]["env_frames"]) >= target
    resumed = json.loads((run_dir / "summary.json").read_text())
    assert resumed["learner_steps"] > counters["learner_steps"]
    assert json.loads((run_dir / "config.json").read_text())["config"]["frames"] == target
    # Two segments, and the summary's last-100 mean and episodes are the whole run's, as
    # the report reads them from episodes.csv.
    assert (summary["segments"], resumed["segments"], resumed["segments_exact"]) == (1, 2, True)
    from seed.results.curves import final_return
    from seed.results.run_dirs import load_run, training_episodes
    run = load_run(run_dir)
    assert resumed["episodes"] == len(training_episodes(run.episodes)) > summary["episodes"]
    assert resumed["mean_return_last_100"] == pytest.approx(
        final_return(training_episodes(run.episodes)))
    assert resumed["wall_time"] == pytest.approx(float(after[-1]["wall_time"]), abs=2.0)
    # every row records the machine's foreign load, a share of its CPU
    assert all(0.0 <= float(r["foreign_cpu"]) <= 1.0 for r in after)


def train_refused(capsys, *args) -> str:
    """stderr of ``seed train ARGS`` run by ``seed.cli.main`` in this process, which must
    refuse it with exit code 2 (a bad flag: argparse's SystemExit(2)). The refusal as a
    process a user sees, its exit code, one line and no TensorFlow noise, is
    tests/test_quiet_tf.py's test of the command line."""
    from seed.cli import main
    capsys.readouterr()
    try:
        code = main(["train", *args])
    except SystemExit as e:
        code = e.code
    err = capsys.readouterr().err
    assert code == 2, err[-2000:]
    assert "Traceback" not in err
    return err


def test_resume_of_a_dir_without_a_checkpoint_is_one_clear_line(tmp_path, capsys):
    (tmp_path / "config.json").write_text(json.dumps({"config": {"env": "toy:catch"}}))
    assert "no checkpoint.npz" in train_refused(capsys, "--resume", str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json"]


@pytest.mark.parametrize("args,message", [
    (["--inference-batch-size", "16"], "larger than the 8 envs"),
    (["--env", "toy:chess"], "unknown toy env"),
    (["--env", "pong"], "must look like kind:name"),
    (["--arch", "a3c"], "bad value for arch: 'a3c' (allowed: one of seed, impala)"),
    (["--agent", "r2d2", "--arch", "impala"], "r2d2 agent runs under --arch seed only"),
    (["--set", "unroll_lenght=5"], "unknown config key unroll_lenght"),
    (["--set", "burn_in=2"], "burn_in belongs to the r2d2 agent"),
    (["--set", "learning_rate=-0.1"], "bad value for vtrace.learning_rate: -0.1"),
    (["--set", "loss_reduction=median"], "allowed: one of mean, sum"),
    (["--compute-dtype", "float16"], "allowed: one of float32, bfloat16, bfloat16_train"),
])
def test_configs_that_cannot_work_fail_at_start_with_one_line(tmp_path, capsys, args, message):
    base = ["--env", "toy:catch", "--actors", "2", "--envs-per-actor", "4",
            "--frames", "1000", "--logdir", str(tmp_path / "x"), "--no-progress"]
    err = train_refused(capsys, *base, *args)
    assert len(err.strip().splitlines()) == 1, err
    assert message in err.lower() or message in err
    assert list(tmp_path.iterdir()) == []  # at start: no run directory made
