"""``seed compare``: SEED, then IMPALA, then SEED again, on one config and one budget.

Each run is its own ``python -m seed.cli train`` process (process isolation: no
TensorFlow state, threads or sockets carried from one run to the next) with a
wall-clock budget and a frame budget too large to matter. Budget (``--budget``):

* ``steady`` (default): every run gets ``seconds`` of *steady state*. Compare
  watches the run's ``metrics.csv`` and stops the run (SIGTERM: a clean stop)
  once the steady window (the rule is in :mod:`seed.results.steady`) spans ``seconds``; the
  run's own ``config.seconds`` is ``seconds + warmup_cap_s``, a backstop for a run
  that never warms up. Warm-up differs a lot between the architectures (an IMPALA
  actor imports TensorFlow and builds the model before its first step, and the
  learner sees nothing until a whole unroll arrives), and on a loaded machine can
  exceed a short total budget, so this is the fair default.
* ``total``: ``config.seconds = seconds`` from the learner's start, warm-up
  included; the steady window is whatever is left.

The
config is resolved once (defaults, ``--config``, flags) and written to
``DIR/base_config.json``; every run reads that file and differs only in
``--arch``. SEED runs twice, first and last, so drift on a shared machine shows.

For every run: steady-state figures from its ``metrics.csv`` (the rule is in
:mod:`seed.results.steady`) and the CPU use of its whole process tree over the same
window (:mod:`seed.bench.procmon`). Results: a printed table, ``DIR/compare.csv``
(one row per run) and ``DIR/compare.json`` (rows, ratio, command line, machine
facts, mode, seconds, config, and the roofline fractions when
``results/roofline/<env>_<network>.json`` exists).
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from seed.bench.ceilings import ceiling_fractions, roofline_path
from seed.bench.procmon import TreeCPUMonitor
from seed.metrics.cpu import usable_cores
from seed.config import Config, ConfigError, make_config
from seed.results.compare import RUN_COLUMNS, write_runs
from seed.results.files import ResultsError
from seed.results.run_dirs import read_metrics
from seed.results.steady import STEADY_STEP_WEIGHTED, steady_state, warmup_index

# One run per entry, in this order: SEED first and last brackets IMPALA in time.
SCHEDULE = (("seed", 1), ("impala", 1), ("seed", 2))

HUGE_FRAMES = 10 ** 15  # the wall-clock budget stops a compare run, never this
STARTUP_ALLOWANCE_S = 300.0  # a run that takes its config.seconds + this is killed
WARMUP_CAP_S = 240.0  # budget=steady: longest warm-up a run may take


def default_dir(config: Config) -> Path:
    bench = config.benchmark or config.env.replace(":", "_")
    return Path("results") / bench / "compare" / time.strftime("%Y%m%d-%H%M%S")


def base_config(config: Config, mode: str, seconds: float, log_interval_s: float | None,
                budget: str = "steady") -> dict:
    """The resolved config every run of the compare starts from (arch set per run)."""
    if mode not in ("train", "serve"):
        raise ConfigError(f"--mode must be train or serve, not {mode!r}")
    if budget not in ("steady", "total"):
        raise ConfigError(f"--budget must be steady or total, not {budget!r}")
    if not seconds or seconds <= 0:
        raise ConfigError("seed compare needs a positive --seconds budget per run")
    values = config.to_json()
    run_seconds = float(seconds) + (WARMUP_CAP_S if budget == "steady" else 0.0)
    values.update(seconds=run_seconds, frames=HUGE_FRAMES, train=(mode == "train"),
                  progress=False, logdir="", checkpoint_interval_s=1e9)
    if log_interval_s is not None:
        values["log_interval_s"] = float(log_interval_s)
    if values.get("launcher") == "none":
        raise ConfigError("seed compare starts its own actors: use --launcher local or ray")
    from seed.runtime.architectures import validate
    validate(make_config(**values))
    return values


def check_runnable(env: str, env_kwargs: dict, network: str) -> None:
    """Fail before any run starts on an env or network that cannot be built."""
    import envs
    from seed.networks import REGISTRY
    if network not in REGISTRY:
        raise ConfigError(f"unknown network {network!r}; known: {', '.join(sorted(REGISTRY))}")
    try:
        env_obj = envs.make(env, **env_kwargs)
    except envs.UnknownEnvError:
        raise
    except Exception as e:  # missing ROM, missing package, bad kwargs
        raise ConfigError(f"cannot build env {env}: {e}") from e
    env_obj.close()


def _terminate(proc: subprocess.Popen, grace_s: float = 30.0) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)  # the run stops its actors and checkpoints
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _steady_span(metrics: Path, train: bool) -> float:
    """Seconds the steady window of a running run spans so far (0 before warm-up ends)."""
    try:
        s = steady_state(read_metrics(metrics), train)
    except (ResultsError, TypeError):  # not written yet, a row half-written, a blank time
        return 0.0
    return s["window_s"] if s["steady"] else 0.0


def run_one(config_path: Path, run_seconds: float, arch: str, run_dir: Path, seconds: float,
            train: bool, cores: int, echo=print, budget: str = "steady",
            extra_args: tuple[str, ...] = ()) -> dict:
    """One ``seed train`` subprocess of the config at ``config_path`` (whose ``seconds`` is
    ``run_seconds``), with ``extra_args`` after its flags; returns its row of the compare
    table."""
    cmd = [sys.executable, "-m", "seed.cli", "train", "--config", str(config_path),
           "--arch", arch, "--logdir", str(run_dir), "--no-progress", *extra_args]
    run_dir.mkdir(parents=True, exist_ok=True)
    log_path = run_dir.parent / f"{run_dir.name}.log"
    echo(f"[compare] {run_dir.name}: {arch}, {seconds:g}s "
         f"{'of steady state' if budget == 'steady' else 'in all'} -> {run_dir}")
    t0 = time.monotonic()
    stop_when_steady = seconds if budget == "steady" else None
    with open(log_path, "wb") as logf:
        proc = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=dict(
                                    os.environ, PYTHONUNBUFFERED="1", TF_CPP_MIN_LOG_LEVEL="2"))
        monitor = TreeCPUMonitor(proc.pid, run_dir / "metrics.csv").start()
        try:
            rc = _wait(proc, t0 + run_seconds + STARTUP_ALLOWANCE_S, run_dir / "metrics.csv",
                       train, stop_when_steady)
        finally:
            monitor.stop()
    row = {c: None for c in RUN_COLUMNS}
    row.update(run=run_dir.name, arch=arch, rc=rc, wall_s=time.monotonic() - t0,
               run_dir=str(run_dir), command=cmd, log=str(log_path))
    _steady_figures(row, run_dir / "metrics.csv", arch, train, monitor, cores, echo)
    add_derived(row, cores)
    if rc != 0:
        tail = log_path.read_text(errors="replace").strip().splitlines()[-1:] or ["(no output)"]
        echo(f"[compare] {run_dir.name} failed (exit {rc}): {tail[0]}  (log: {log_path})")
    return row


def _wait(proc: subprocess.Popen, deadline: float, metrics: Path, train: bool,
          stop_when_steady: float | None):
    """The run's exit code once it ends, or once it is stopped: at ``deadline`` ("timeout"),
    or cleanly after ``stop_when_steady`` seconds of steady state (None: never)."""
    try:
        while True:
            try:
                return proc.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                if time.monotonic() > deadline:
                    _terminate(proc)
                    return "timeout"
                if stop_when_steady is not None and \
                        _steady_span(metrics, train) >= stop_when_steady:
                    _terminate(proc)  # clean stop; exits 0
                    return proc.returncode
    except BaseException:  # Ctrl-C: stop the run cleanly, then give up
        _terminate(proc)
        raise


def _steady_figures(row: dict, metrics: Path, arch: str, train: bool,
                    monitor: TreeCPUMonitor, cores: int, echo) -> None:
    """Into ``row``: the run's steady-state figures and the CPU its process tree (and its
    learner alone) used over them, else over the whole run."""
    if metrics.exists():
        try:
            m = read_metrics(metrics, arch)
        except ResultsError as e:  # the run logged nothing, or broke off mid-row
            echo(f"[compare] {metrics.parent.name}: no steady-state figures: {e}")
            row["steady"] = False
        else:
            s = steady_state(m, train)
            row.update({k: s[k] for k in ("steady", "warmup_s", "window_s", "fps",
                                           "learner_fps", "inference_batch_size",
                                           *STEADY_STEP_WEIGHTED, "env_frames")})
            if s["steady"]:
                window = (warmup_index(m, train) + 1, len(m))
                row["cpu_util"] = monitor.utilisation(*window, cores)
                # The learner process alone (the root; its children are the actors).
                row["learner_cpu_util"] = monitor.utilisation(*window, cores, root_only=True)
    row["cpu_util_run"] = monitor.utilisation(cores=cores)
    if row["cpu_util"] is None:
        row["cpu_util"] = row["cpu_util_run"]
        row["learner_cpu_util"] = monitor.utilisation(cores=cores, root_only=True)


def add_derived(row: dict, cores: int) -> dict:
    """frames_per_cpu_s = fps / (cpu_util x cores): frames per CPU-second the run's process
    tree used. On a machine shared with other jobs, a run gets whatever CPU is left; this
    figure (the inverse of the architecture's CPU cost per frame) depends much less on that
    than fps does."""
    fps, util = row.get("fps"), row.get("cpu_util")
    row["frames_per_cpu_s"] = fps / (util * cores) if fps and util else None
    return row


def _mean(xs):
    xs = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return sum(xs) / len(xs) if xs else None


def summarise(rows: list[dict]) -> dict:
    """SEED/IMPALA FPS ratio (mean of the SEED runs) and SEED's drift between its runs."""
    seed_fps = [r["fps"] for r in rows if r["arch"] == "seed"]
    impala_fps = _mean([r["fps"] for r in rows if r["arch"] == "impala"])
    seed_mean = _mean(seed_fps)
    out = {"seed_fps_mean": seed_mean, "impala_fps": impala_fps, "fps_ratio": None,
           "seed_drift": None,
           "seed_cpu_util_mean": _mean([r["cpu_util"] for r in rows if r["arch"] == "seed"]),
           "impala_cpu_util": _mean([r["cpu_util"] for r in rows if r["arch"] == "impala"])}
    if seed_mean and impala_fps:
        out["fps_ratio"] = seed_mean / impala_fps
    seed_eff = _mean([r.get("frames_per_cpu_s") for r in rows if r["arch"] == "seed"])
    impala_eff = _mean([r.get("frames_per_cpu_s") for r in rows if r["arch"] == "impala"])
    out["seed_frames_per_cpu_s"], out["impala_frames_per_cpu_s"] = seed_eff, impala_eff
    out["frames_per_cpu_s_ratio"] = seed_eff / impala_eff if seed_eff and impala_eff else None
    if len(seed_fps) == 2 and None not in seed_fps and seed_mean:
        out["seed_drift"] = (seed_fps[1] - seed_fps[0]) / seed_mean
    return out


def _fmt(v, spec):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return format(v, spec)


def _percent(share) -> str:
    return _fmt(None if share is None else 100 * share, ".0f")


def format_table(rows: list[dict], summary: dict, roof: dict | None, mode: str) -> str:
    head = (f"{'run':<9}{'fps':>10}{'learner':>10}{'batch':>7}{'lrn inf':>8}{'act inf':>8}"
            f"{'lat p50':>8}{'lat p99':>8}"
            f"{'pull ms':>9}{'cpu':>6}{'lrn cpu':>8}{'fr/cpu-s':>10}{'warmup':>8}{'window':>8}")
    lines = [f"mode={mode}; steady-state figures (frames/s; lat p50/p99 = action latency, "
             "ms, measured alike under both architectures: an actor's time from having a "
             "step's observations to stepping its envs with their actions; lrn inf = one "
             "inference call on the learner, ms (SEED only); act inf = one local inference "
             "call on an actor, ms (IMPALA only); cpu = whole process tree / all cores; "
             "lrn cpu = the learner process alone / all cores)", head,
             "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r['run']:<9}{_fmt(r['fps'], ',.0f'):>10}{_fmt(r['learner_fps'], ',.0f'):>10}"
            f"{_fmt(r['inference_batch_size'], '.1f'):>7}"
            f"{_fmt(r.get('learner_inference_ms'), '.2f'):>8}"
            f"{_fmt(r.get('actor_inference_ms'), '.2f'):>8}"
            f"{_fmt(r.get('action_latency_p50_ms'), '.2f'):>8}"
            f"{_fmt(r.get('action_latency_p99_ms'), '.2f'):>8}"
            f"{_fmt(r['parameter_pull_ms'], '.2f'):>9}"
            f"{_percent(r['cpu_util']):>5}%{_percent(r.get('learner_cpu_util')):>7}%"
            f"{_fmt(r.get('frames_per_cpu_s'), ',.0f'):>10}"
            f"{_fmt(r['warmup_s'], '.1f'):>7}s{_fmt(r['window_s'], '.1f'):>7}s"
            + ("" if r["steady"] else "  (no steady window)")
            + ("" if r["rc"] == 0 else f"  FAILED (exit {r['rc']})"))
    ratio = summary["fps_ratio"]
    drift = summary["seed_drift"]
    lines.append(f"SEED/IMPALA FPS ratio (mean of the SEED runs / IMPALA): "
                 f"{_fmt(ratio, '.2f')}; SEED drift run 1 -> 2: "
                 f"{_fmt(None if drift is None else 100 * drift, '+.1f')}%")
    lines.append(f"SEED/IMPALA frames per CPU-second of the process tree: "
                 f"{_fmt(summary.get('frames_per_cpu_s_ratio'), '.2f')} (less sensitive to "
                 "other load on the machine than the FPS ratio)")
    if roof and "error" not in roof:
        lines += _roofline_lines(roof, mode)
    return "\n".join(lines)


def _roofline_lines(roof: dict, mode: str) -> list[str]:
    """The compare's shares of the roofline's ceilings and of SEED's lock-step bounds."""
    parts = []
    for arch in ("seed", "impala"):
        c, f = roof.get(f"{arch}_ceiling_fps"), roof.get(f"{arch}_fraction")
        parts.append(f"{arch} {_fmt(f and 100 * f, '.0f')}% of {_fmt(c, ',.0f')}")
    note = (f" (roofline measured with different {', '.join(roof['mismatched'])})"
            if roof["mismatched"] else "")
    lines = [f"of the {mode} roofline ceiling ({roof['path']}): " + "; ".join(parts) + note]
    if roof.get("seed_lockstep_fps"):
        lines.append(f"seed: {_percent(roof['seed_lockstep_fraction'])}% of "
                     f"{roof['seed_lockstep_fps']:,.0f}, its bound with simulation, "
                     "inference and data path in turn")
    if roof.get("seed_turns_fps"):
        lines.append(f"seed: {_percent(roof['seed_turns_fraction'])}% of "
                     f"{roof['seed_turns_fps']:,.0f}, the same turns run for real "
                     "without SEED (seed/bench/turns.py), plus the data path")
    return lines


def timeline_of(row: dict):
    """``seed timeline`` of a SEED run's directory (a
    :class:`~seed.results.timeline.Timeline`, also written there as timeline.json), or the
    one line that says why there is none."""
    from seed.bench import timeline
    from seed.results.timeline import write_timeline
    try:
        summary = timeline.analyse(row["run_dir"])
    except timeline.TimelineError as e:
        return str(e)
    write_timeline(row["run_dir"], summary)
    return summary


def format_timelines(timelines: dict) -> str:
    """Each run's timeline (``{run: Timeline or why none}``) as the terminal shows it."""
    return "\n\n".join(f"[{run}] " + (f"no timeline: {t}" if isinstance(t, str) else t.format())
                        for run, t in timelines.items())


def _base_config_file(out_dir: Path, values: dict) -> Path:
    """``out_dir/base_config.json``, written with ``values`` (what every run starts from);
    ``out_dir`` is made, and refused if it holds compare runs already."""
    out_dir.mkdir(parents=True, exist_ok=True)
    existing = [f"{a}-{i}" for a, i in SCHEDULE if (out_dir / f"{a}-{i}").exists()]
    if existing:
        raise ConfigError(f"{out_dir} already holds compare runs ({', '.join(existing)}); "
                          "give another --logdir")
    config_path = out_dir / "base_config.json"
    config_path.write_text(json.dumps(values, indent=2))
    return config_path


def run_compare(config: Config, mode: str, seconds: float, out_dir: Path,
                log_interval_s: float | None = 1.0, command: list[str] | None = None,
                echo=print, budget: str = "steady", timeline: bool = False) -> dict:
    """Three runs (SEED, IMPALA, SEED) into ``out_dir``; returns what compare.json holds.

    ``timeline`` (or ``timeline`` set in ``config``): the SEED runs record a
    per-cycle timeline, and each SEED row gets its ``seed timeline`` summary under
    ``timeline``; the returned ``table`` ends with their breakdowns."""
    from seed.metrics.cpu_facts import with_effective_compute_dtype
    from seed.metrics.machine import machine_facts

    config = with_effective_compute_dtype(config, echo)  # its runs' and its roofline's
    values = base_config(config, mode, seconds, log_interval_s, budget)
    check_runnable(values["env"], values.get("env_kwargs") or {}, values["network"])
    config_path = _base_config_file(out_dir, values)
    cores = usable_cores()
    timeline = timeline or bool(values.get("timeline"))
    rows, timelines = [], {}
    for arch, i in SCHEDULE:
        recorded = timeline and arch == "seed"  # IMPALA has no lock-step cycle to time
        rows.append(run_one(config_path, values["seconds"], arch, out_dir / f"{arch}-{i}",
                            seconds, mode == "train", cores, echo, budget,
                            ("--set", "timeline=true") if recorded else ()))
        if recorded:
            found = timelines[rows[-1]["run"]] = timeline_of(rows[-1])
            rows[-1]["timeline"] = {"error": found} if isinstance(found, str) else \
                found.to_json()
    summary = summarise(rows)
    roof = ceiling_fractions(roofline_path(values["env"], values["network"],
                                           bool(values.get("cpu_idle_poll")),
                                           values["compute_dtype"]),
                             mode, summary, values)
    result = {
        "command": command or sys.argv, "mode": mode, "seconds": seconds, "budget": budget,
        "cores": cores, "machine": machine_facts(), "config": values,
        "steady_state_rule": "rows after the first row with env_frames > 0"
                             + (" and learner_steps > 0" if mode == "train" else "")
                             + " (see seed/results/steady.py, steady_state)",
        "runs": rows, **summary, "roofline": roof,
    }
    write_runs(out_dir / "compare.csv", rows)
    (out_dir / "compare.json").write_text(json.dumps(result, indent=2, default=str))
    result["table"] = format_table(rows, summary, roof, mode)
    if timeline:
        result["table"] += "\n\n" + format_timelines(timelines)
    return result
