"""Small, well-formed results trees for the tests of seed.results, the plots, the report
and the notebooks: run directories (:func:`make_run`), compare outputs
(:func:`make_compare`), a whole tree (:func:`make_tree`: one benchmark, two architectures,
two seeds each, a compare, a sweep and a roofline file), a SEED run's ``timeline.json``
(:func:`make_timeline`), and ways to damage a run directory (:func:`damage`)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

from seed.metrics.writer import EPISODE_COLUMNS, LEARNING_COLUMNS, METRICS_COLUMNS

BENCH = "toy_catch"


def write_csv(path: Path, columns, rows):
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
    write_csv(run_dir / "metrics.csv", columns, metrics)
    write_csv(run_dir / "episodes.csv", EPISODE_COLUMNS, episodes)
    return run_dir


def make_compare(d: Path, mode: str, seed_fps: float, impala_fps: float,
                 config: dict | None = None, config_in_json: bool = True) -> Path:
    """A seed compare output: compare.csv (SEED, IMPALA, SEED), base_config.json and
    compare.json (with the config too unless ``config_in_json`` is False)."""
    d.mkdir(parents=True)
    write_csv(d / "compare.csv", ["run", "arch", "fps"],
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


#: A lock-step cycle's segments (``seed timeline``'s names, in order) and their mean ms in
#: :func:`make_timeline`'s file unless told otherwise: binary fractions, so sums are exact.
#: Grouped as the report groups them: pre-inference 0.25, inference 5.5, reply 1.5, actor
#: sim 4.75, request 1.0; 13.0 in all.
TIMELINE_SEGMENTS_MS = {
    "pre-inference": 0.25, "inference": 5.5, "post-inference": 0.125, "reply hand-off": 0.25,
    "reply encode": 0.125, "reply transit": 1.0, "actor sim": 4.75, "actor encode+send": 0.25,
    "request transit": 0.5, "decode": 0.125, "pre-submit": 0.0625, "batcher wake-up": 0.0625}


def make_timeline(run_dir: Path, segments_ms: dict | None = None, cycles: int = 900,
                  bookkeeping_ms: float | None = 2.5, batch_frames: int = 128) -> Path:
    """A SEED run's ``timeline.json`` as ``seed timeline`` writes it, with only the fields
    the report reads: ``cycles``, the segments' mean ms (:data:`TIMELINE_SEGMENTS_MS`, with
    ``segments_ms`` over them), the interval (their sum), the frames/s it implies at
    ``batch_frames`` a batch (32 envs x 4 frames), and the post-reply bookkeeping off the
    path (None: no off-path entries)."""
    assert set(segments_ms or {}) <= set(TIMELINE_SEGMENTS_MS), segments_ms
    means = {**TIMELINE_SEGMENTS_MS, **(segments_ms or {})}
    interval = sum(means.values())
    summary = {"cycles": cycles, "interval": {"mean_ms": interval},
               "frames_per_s": batch_frames / (interval / 1000.0),
               "segments": [{"name": k, "mean_ms": v} for k, v in means.items()],
               "off_path": ([] if bookkeeping_ms is None else
                            [{"name": "post-reply bookkeeping", "mean_ms": bookkeeping_ms}])}
    path = run_dir / "timeline.json"
    path.write_text(json.dumps(summary, indent=2))
    return path


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
    write_csv(cmp_dir / "compare.csv", cols, rows)
    (cmp_dir / "compare.json").write_text(json.dumps({"mode": "train", "fps_ratio": 1.95}))
    sweep_dir = root / BENCH / "compare" / "sweep"
    sweep_dir.mkdir(parents=True)
    write_csv(sweep_dir / "sweep.csv",
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


def damage(run: Path, how: str) -> str:
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
