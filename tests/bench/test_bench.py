"""seed compare / seed roofline / the network-size sweep: schema and rules, not speed.
(The steady-state rule they measure by is tested in test_results_steady.py.)"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from seed.bench import ceilings, compare, costs, roofline, sweep
from seed.cli import main
from seed.config import Config, ConfigError, make_config
from seed.results.compare import RUN_COLUMNS
from seed.results.roofline import from_json, load_roofline

# -- compare ---------------------------------------------------------------------------

def test_compare_rejects_bad_input(tmp_path, capsys):
    assert main(["compare", "--env", "toy:catch", "--logdir", str(tmp_path / "x")]) == 2
    assert "needs --seconds" in capsys.readouterr().err
    # A bad flag value is refused while the flags are read (argparse's exit 2), in one line.
    for args in (["compare", "--env", "toy:catch", "--network", "nope", "--seconds", "1",
                  "--logdir", str(tmp_path / "y")],
                 ["roofline", "--env", "toy:catch", "--network", "nope"]):
        with pytest.raises(SystemExit) as stop:
            main(args)
        assert stop.value.code == 2
        assert "bad value for network: 'nope'" in capsys.readouterr().err
    assert main(["compare", "--env", "toy:nope", "--seconds", "1",
                 "--logdir", str(tmp_path / "z")]) == 2
    assert main(["compare", "--env", "toy:catch", "--arch", "seed", "--seconds", "1"]) == 2
    assert not (tmp_path / "y").exists() and not (tmp_path / "z").exists()
    with pytest.raises(ConfigError):
        compare.base_config(Config(), "fast", 5, 1.0)
    with pytest.raises(ConfigError, match="unknown size"):
        sweep.parse_sizes("small,huge", "mlp")


def test_compare_config_and_flags_override_it(tmp_path):
    cfg = tmp_path / "bench.yaml"
    cfg.write_text("env: toy:cartpole\nactors: 3\nenvs_per_actor: 5\nseconds: 99\n")
    from seed.cli import build_parser
    from seed.run_flags import load_config
    args = build_parser().parse_args(["compare", "--config", str(cfg), "--actors", "1",
                                      "--seconds", "7", "--set", "unroll_length=5"])
    c = load_config(args)
    assert (c.env, c.actors, c.envs_per_actor, c.seconds, c.unroll_length) == \
        ("toy:cartpole", 1, 5, 7.0, 5)
    assert c.benchmark == "bench"
    values = compare.base_config(c, "serve", c.seconds, 1.0, budget="total")
    assert values["train"] is False and values["seconds"] == 7.0
    assert values["log_interval_s"] == 1.0 and values["frames"] >= 10 ** 12


def test_compare_end_to_end_serve(tmp_path, capsys):
    out = tmp_path / "cmp"
    rc = main(["compare", "--env", "toy:catch", "--actors", "1", "--envs-per-actor", "2",
               "--seconds", "3", "--mode", "serve", "--unroll-length", "5",
               "--logdir", str(out)])
    printed = capsys.readouterr().out
    assert rc == 0, printed
    assert "SEED/IMPALA FPS ratio" in printed
    for run in ("seed-1", "impala-1", "seed-2"):
        assert run in printed
        assert (out / run / "metrics.csv").exists()
    with open(out / "compare.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["run"] for r in rows] == ["seed-1", "impala-1", "seed-2"]
    assert set(RUN_COLUMNS) <= set(rows[0])
    data = json.loads((out / "compare.json").read_text())
    for key in ("command", "machine", "mode", "seconds", "config", "runs", "fps_ratio",
                "seed_fps_mean", "impala_fps", "steady_state_rule"):
        assert key in data
    assert data["mode"] == "serve" and data["seconds"] == 3 and data["budget"] == "steady"
    assert data["config"]["train"] is False and data["machine"]["cpu_count"] >= 1
    assert len(data["runs"]) == 3
    for r in data["runs"]:
        assert r["rc"] == 0
        assert r["steady"] and r["window_s"] >= 3
        assert math.isfinite(r["fps"]) and r["fps"] > 0
        assert 0 < r["cpu_util_run"] < 1.5
        assert 0 < r["learner_cpu_util"] < r["cpu_util"]  # its actors' share is on top
    assert data["runs"][1]["inference_batch_size"] == 2
    assert math.isfinite(data["fps_ratio"]) and data["fps_ratio"] > 0
    # A second compare into the same directory is refused, not mixed in.
    assert main(["compare", "--env", "toy:catch", "--seconds", "1", "--logdir", str(out)]) == 2


# -- roofline --------------------------------------------------------------------------

def test_roofline_json_and_ceiling_formula(tmp_path):
    cfg = make_config(env="toy:catch", network="mlp", actors=2, envs_per_actor=2,
                      actor_splits=1,
                      unroll_length=5, batch_size=2)
    result = roofline.run_roofline(cfg, seconds=0.3, processes=1, echo=lambda *_: None)
    path = roofline.write_roofline(result, tmp_path / "roof.json")
    r = json.loads(path.read_text())
    assert load_roofline(path).to_json() == r  # the type reads back what it wrote
    for key in ("env", "network", "network_kwargs", "config", "cores", "frames_per_step",
                "simulation", "inference", "training", "costs_cpu_s_per_frame", "ceilings",
                "formula", "machine", "seed_batch", "impala_batch"):
        assert key in r
    assert set(r["inference"]) == {"1", "2", "4"}
    assert r["seed_batch"] == 4 and r["impala_batch"] == 2
    c, cores = r["costs_cpu_s_per_frame"], r["cores"]
    assert all(v > 0 for v in c.values())
    assert c["inf_seed"] == r["inference"]["4"]["cpu_s_per_frame"]
    assert c["inf_impala"] == r["inference"]["2"]["cpu_s_per_frame"]
    ceil = r["ceilings"]
    assert ceil["seed_train"] == pytest.approx(cores / (c["sim"] + c["inf_seed"] + c["train"]))
    assert ceil["seed_serve"] == pytest.approx(cores / (c["sim"] + c["inf_seed"]))
    assert ceil["impala_train"] == pytest.approx(
        cores / (c["sim"] + c["inf_impala"] + c["train"]))
    assert ceil["simulation_only"] == pytest.approx(cores / c["sim"])
    d = r["seed_data_path"]  # SEED's data path alone, its CPU per frame on both sides
    dp = d["learner_cpu_s_per_frame"] + d["actor_cpu_s_per_frame"]
    assert d["seed_serve_with_data_path"] == pytest.approx(
        cores / (c["sim"] + c["inf_seed"] + dp))
    assert d["seed_train_with_data_path"] == pytest.approx(
        cores / (c["sim"] + c["inf_seed"] + c["train"] + dp))
    assert "SEED data path alone" in from_json(r, path).format()
    assert r["training"]["env_steps_per_train_step"] == 5 * 2
    # FLOPs: the MLP's (50 -> 64 -> 64 -> 3 policy + 1 baseline) per env step, 2 a
    # multiply-add; every unroll step (T + 1 = 6) of both unrolls forward and backward
    f = r["flops"]
    assert r["config"]["compute_dtype"] == f["compute_dtype"] == "float32"
    assert f["forward_per_env_step"] == 2 * (50 * 64 + 64 * 64 + 64 * 3 + 64 * 1)
    assert f["train_step"] == 2 * 6 * (f["forward_per_env_step"] + f["backward_per_env_step"])
    assert f["train_per_frame"] == f["train_step"] / 10  # Catch: one frame a step
    for b, m in r["inference"].items():
        assert f["inference"][b]["flops_per_s"] == pytest.approx(
            int(b) * f["forward_per_env_step"] / m["wall_s_per_call"])
    assert f["training"]["flops_per_s"] == pytest.approx(
        f["train_step"] / r["training"]["wall_s_per_step"])
    assert f["training"]["share_of_peak"] == pytest.approx(
        f["training"]["flops_per_s"] / f["peak"]["float32"])
    assert "FLOPs per frame: inference" in from_json(r, path).format()
    assert r["bare_training"] is None  # the bare reference exists for the Atari networks only
    assert "bare TensorFlow" not in from_json(r, path).format()
    r["bare_training"] = {"frames_per_s": 2000.0, "wall_s_per_step": 0.04, "agent_over_bare": 0.5}
    assert r["inference_vs_bare"] is None  # likewise the bare inference step
    r["inference_vs_bare"] = {"16": {
        "agent_ms_per_call": 5.0, "bare_ms_per_call": 4.5, "infer_over_bare": 0.9,
        "agent_parts_ms": {"network": 4.0, "stack_update": 0.3, "sampling": 0.1,
                           "host_copies_in": 0.1, "host_copies_out": 0.05},
        "agent_rest_ms": 0.45}}
    text = from_json(r, path).format()
    assert ("inference batch 16 vs bare TensorFlow: agent / bare 5.00 / 4.50 ms a call, infer "
            "over bare 0.90; the agent's call in parts, each alone (ms): 4.00, 0.30, 0.10, "
            "0.10, 0.05") in text
    assert "bare TensorFlow train step: 40.00 ms a step; agent at 0.50 of bare" in text
    # compare reads it: fractions of the ceiling per architecture
    summary = {"seed_fps_mean": ceil["seed_serve"] / 2, "impala_fps": ceil["impala_serve"] / 4}
    frac = ceilings.ceiling_fractions(path, "serve", summary, cfg.to_json())
    assert frac["seed_fraction"] == pytest.approx(0.5)
    assert frac["impala_fraction"] == pytest.approx(0.25)
    assert frac["mismatched"] == []
    same = dict(cfg.to_json(), network_kwargs={"hidden_sizes": [64, 64]})  # the default
    assert ceilings.ceiling_fractions(path, "serve", summary, same)["mismatched"] == []
    other = dict(cfg.to_json(), network_kwargs={"hidden_sizes": [512, 512]})
    assert ceilings.ceiling_fractions(path, "serve", summary, other)["mismatched"] == \
        ["network_kwargs"]
    polled = dict(cfg.to_json(), cpu_idle_poll=True)  # measured with halting cores
    assert ceilings.ceiling_fractions(path, "serve", summary, polled)["mismatched"] == \
        ["cpu_idle_poll"]
    # SEED's steps in turn: inference of the batch of all 4 envs, both actors' 2 steps
    # (one process per core at most), the data path's cycle
    lock = r["seed_lockstep_serve"]
    step_s = r["simulation"]["processes"] / r["simulation"]["steps_per_s"]
    frames = 4 * r["frames_per_step"]
    cycle = (r["inference"]["4"]["wall_s_per_call"] + 4 * step_s / min(2, cores)
             + frames / d["frames_per_s"])
    assert lock["frames_per_s"] == pytest.approx(frames / cycle)
    assert lock["fraction_of_serve_ceiling"] == pytest.approx(frames / cycle / ceil["seed_serve"])
    assert "SEED lock-step serve bound: " in from_json(r, path).format()
    # the same turns run for real (seed/bench/turns.py), plus the data path's cycle
    turns = lock["turns"]
    assert turns["cycles"] >= 1
    assert turns["cycle_wall_s"] == pytest.approx(
        turns["inference_wall_s"] + turns["simulation_wall_s"])
    assert turns["frames_per_s"] == pytest.approx(frames / turns["cycle_wall_s"])
    assert turns["with_data_path_frames_per_s"] == pytest.approx(frames / (
        turns["inference_wall_s"] + turns["stepping_wall_s"] + lock["data_path_wall_s"]))
    assert "SEED lock-step turns without SEED: " in from_json(r, path).format()
    assert frac["seed_lockstep_fraction"] == pytest.approx(summary["seed_fps_mean"] / (frames / cycle))
    table = compare.format_table([], dict(summary, fps_ratio=None, seed_drift=None), frac,
                                 "serve")
    assert "its bound with simulation, inference and data path in turn" in table
    assert frac["seed_turns_fps"] == pytest.approx(turns["with_data_path_frames_per_s"])
    assert frac["seed_turns_fraction"] == pytest.approx(
        summary["seed_fps_mean"] / turns["with_data_path_frames_per_s"])
    assert "the same turns run for real without SEED" in table
    # it bounds that schedule's serve runs only
    assert "seed_lockstep_fraction" not in ceilings.ceiling_fractions(
        path, "train", summary, cfg.to_json())
    assert "seed_lockstep_fraction" not in ceilings.ceiling_fractions(
        path, "serve", summary, dict(cfg.to_json(), actor_splits=2))


def test_ceiling_fractions_without_or_with_a_damaged_roofline(tmp_path):
    summary = {"seed_fps_mean": 100.0, "impala_fps": 50.0}
    config = make_config(env="toy:catch", network="mlp").to_json()
    path = tmp_path / "roofline" / "toy_catch_mlp.json"
    assert ceilings.ceiling_fractions(path, "serve", summary, config) is None
    path.parent.mkdir()
    path.write_text('{"env": "toy:catch"}')  # read through seed.results: its one-line reason
    assert ceilings.ceiling_fractions(path, "serve", summary, config) == {
        "path": str(path),
        "error": f"{path}: has no 'ceilings' mapping (not written by seed roofline)"}
    path.write_text('{"ceilings": ')
    assert ceilings.ceiling_fractions(path, "serve", summary, config)["error"].startswith(
        f"{path}: not valid JSON")


def test_lockstep_serve_bound_by_hand():
    sim = {"processes": 2, "steps_per_s": 8000.0}  # 0.25 ms per env step and process
    data_path = {"frames_per_s": 64000.0}  # 128 frames in 2 ms
    b = roofline.lockstep_serve(32, 2, 2, 4, sim, 0.005, data_path)
    assert b["simulation_wall_s"] == pytest.approx(0.004)  # 16 steps per actor, in parallel
    assert b["data_path_wall_s"] == pytest.approx(0.002)
    assert b["cycle_wall_s"] == pytest.approx(0.011)
    assert b["frames_per_s"] == pytest.approx(128 / 0.011)
    # four actors on two cores step in two waves; on four cores, at once
    assert roofline.lockstep_serve(32, 4, 2, 4, sim, 0.005, data_path)["simulation_wall_s"] == \
        pytest.approx(0.004)
    assert roofline.lockstep_serve(32, 4, 4, 4, sim, 0.005, data_path)["simulation_wall_s"] == \
        pytest.approx(0.002)


def test_roofline_has_no_lockstep_bound_for_split_actors(tmp_path):
    cfg = make_config(env="toy:catch", network="mlp", actors=1, envs_per_actor=2, actor_splits=2,
                      unroll_length=5, batch_size=2, arch="seed")
    r = roofline.run_roofline(cfg, seconds=0.2, processes=1, echo=lambda *_: None)
    assert r.seed_lockstep_serve is None
    assert "lock-step" not in r.format()


def test_roofline_times_an_r2d2_step_whatever_its_replay_ratio():
    # Held to 4 per insert, a buffer filled once would stop the train step after
    # error buffer / batch = (4 x 3 + 2) / 2 = 7 steps; the roofline times 20. And the
    # synthetic unrolls (5 steps) must not use more env ids than the 4 envs.
    cfg = make_config(env="toy:catch", network="mlp", agent="r2d2", actors=1, envs_per_actor=4,
                      eval_envs=1, unroll_length=4, burn_in=1, batch_size=2, replay_min_size=2,
                      replay_ratio=4.0, network_kwargs={"lstm_size": 8}, arch="seed")
    agent, spec = costs.build_agent(cfg)
    assert agent.new_buffer().limiter.samples_per_insert == 0
    timer = costs.training_timer(agent, cfg, spec.observation_space, 1, min_steps=20)
    assert timer(0.0)["steps"] >= 20


# -- sweep -----------------------------------------------------------------------------

def test_sweep_presets_resolve():
    assert sweep.resolve("large", "mlp") == ("mlp", {"hidden_sizes": [2048, 2048, 2048]})
    assert sweep.resolve("small", "nature_cnn") == ("nature_cnn", {})
    assert sweep.resolve("impala_resnet", "mlp") == ("impala_resnet", {})


def test_summary_ratio_drift_and_cpu_efficiency():
    rows = [compare.add_derived({"arch": "seed", "fps": 900.0, "cpu_util": 0.5}, cores=2),
            compare.add_derived({"arch": "impala", "fps": 500.0, "cpu_util": 0.25}, cores=2),
            compare.add_derived({"arch": "seed", "fps": 1100.0, "cpu_util": None}, cores=2)]
    assert rows[0]["frames_per_cpu_s"] == pytest.approx(900.0)
    assert rows[2]["frames_per_cpu_s"] is None
    s = compare.summarise(rows)
    assert s["seed_fps_mean"] == pytest.approx(1000.0)
    assert s["fps_ratio"] == pytest.approx(2.0)
    assert s["seed_drift"] == pytest.approx(0.2)
    assert s["frames_per_cpu_s_ratio"] == pytest.approx(900.0 / 1000.0)
    table = compare.format_table(
        [dict(r, run=f"r{i}", rc=0, steady=True, learner_fps=None, inference_batch_size=None,
              action_latency_p50_ms=None, action_latency_p99_ms=None, parameter_pull_ms=None,
              warmup_s=1.0, window_s=2.0) for i, r in enumerate(rows)], s, None, "train")
    assert "SEED/IMPALA FPS ratio (mean of the SEED runs / IMPALA): 2.00" in table


def test_time_steps_warms_up_prepares_each_call_and_times_only_the_steps():
    from seed.bench.timing import time_steps
    calls = []
    outputs, wall, cpu = time_steps(lambda: calls.append("step") or len(calls), seconds=0.0,
                                    min_steps=3, prepare=lambda: calls.append("prepare"))
    assert calls == ["prepare", "step"] * 5  # 2 warm-up calls, then 3 timed
    assert outputs == [6, 8, 10]  # the timed calls' own return values
    assert wall >= 0.0 and cpu >= 0.0


def test_alternate_runs_the_timers_in_turns_and_sums_their_blocks():
    from seed.bench.timing import alternate, rates
    order = []

    def timer(name, wall):
        def run(seconds):
            order.append((name, seconds))
            return {"steps": 2, "env_steps": 10, "frames": 40, "wall_s": wall, "cpu_s": 2 * wall}
        return run

    totals = alternate({"agent": timer("agent", 0.5), "bare": timer("bare", 0.25)},
                       seconds=3.0, rounds=3)
    assert order == [("agent", 1.0), ("bare", 1.0)] * 3
    assert totals["agent"] == {"steps": 6, "env_steps": 30, "frames": 120, "wall_s": 1.5,
                               "cpu_s": 3.0}
    r = rates(totals["bare"])
    assert r["frames_per_s"] == pytest.approx(120 / 0.75)
    assert r["wall_s_per_step"] == pytest.approx(0.125)
    assert r["cpu_s_per_frame"] == pytest.approx(1.5 / 120)
    assert r["env_steps_per_train_step"] == 5
    with pytest.raises(ValueError, match="rounds must be at least 1"):
        alternate({}, 1.0, 0)


def test_a_roofline_measured_with_idle_cores_polling_or_in_bfloat16_has_its_own_file():
    assert ceilings.roofline_path("atari:Pong", "nature_cnn") == \
        Path("results/roofline/atari_Pong_nature_cnn.json")
    assert ceilings.roofline_path("atari:Pong", "nature_cnn", cpu_idle_poll=True) == \
        Path("results/roofline/atari_Pong_nature_cnn-idlepoll.json")
    assert ceilings.roofline_path("atari:Pong", "nature_cnn", compute_dtype="bfloat16") == \
        Path("results/roofline/atari_Pong_nature_cnn-bfloat16.json")
    assert ceilings.roofline_path("atari:Pong", "nature_cnn", True, "bfloat16_train") == \
        Path("results/roofline/atari_Pong_nature_cnn-idlepoll-bfloat16_train.json")
