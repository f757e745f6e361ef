"""One training run, either architecture: learner service, actors, metrics, checkpoints.

``train(config)`` runs the learner in this process (:func:`train_here`, after
:func:`check`); ``seed train`` runs :func:`train_here` on a GPU node of a Ray cluster
instead with ``learner_on_gpu_node``. In this process a run is made of these parts, in the
order they act:

* :func:`prepare_run_dir`: a new run directory's path, or a resumed one with its
  checkpoint and counters;
* :func:`_learner_core`: the agent and its buffer, checked against the machine's memory
  (:mod:`seed.runtime.memory`) before the run directory is written, restored on a resume;
* :class:`_Learner`: gRPC server and service, training thread, launched actors;
* :class:`_RunRecord`: episodes, metrics rows, checkpoints, progress bar, summary;
* :func:`_tick_loop`: every tick, the budget, failures, when to log and checkpoint;
* :class:`_StopSignals`: Ctrl-C / SIGTERM stop the run cleanly: actors first, then
  training, then a final checkpoint; no process is left behind.

A full disk stops the run as any failure does, and ends it with one line
(:mod:`seed.runtime.disk`).
"""

from __future__ import annotations

import json
import logging
import math
import os
import signal
import threading
import time
from pathlib import Path

import numpy as np

import envs
from seed.config import (Config, ConfigError, config_paths, from_paths, from_saved,
                         paths)
from seed.launch.base import Launcher
from seed.metrics.cpu import ForeignLoad
from seed.metrics.cpu_facts import with_effective_compute_dtype
from seed.metrics.critic_watch import CriticWatch
from seed.metrics.machine import learner_device, machine_facts
from seed.metrics.writer import MetricsWriter
from seed.runtime import architectures, checkpoint, cpu_idle, disk, memory
from seed.runtime.learner_core import EnvSpec, LearnerCore
from seed.runtime.service import LearnerService
from seed.runtime.stats import RunStats
from seed.transport.channel import start_server, unix_socket_path
from seed.unroll_spec import UnrollSpec

log = logging.getLogger(__name__)


def default_run_dir(config: Config) -> Path:
    bench = config.benchmark or config.env.replace(":", "_")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return Path("results") / bench / config.arch / f"{stamp}-{os.getpid()}"


def make_launcher(config: Config, run_dir: Path) -> Launcher:
    if config.launcher == "local":
        from seed.launch.local import LocalLauncher
        return LocalLauncher(run_dir, actor_args=actor_security_args(config))
    if config.launcher == "none":
        from seed.launch.external import ExternalActors
        return ExternalActors()
    if config.launcher == "ray":
        from seed.launch.ray_launcher import RayLauncher
        return RayLauncher(config, run_dir, architectures.architecture(config.arch).run_actor)
    raise ConfigError(f"unknown launcher {config.launcher!r}: choose local, ray or none")


def actor_security_args(config: Config) -> list[str]:
    """``seed actor`` flags that give an actor what it needs to reach this learner: paths
    only (a token from $SEED_AUTH_TOKEN reaches local actors through their environment)."""
    args = []
    transport = config.transport
    if transport.auth_token_file:
        args += ["--auth-token-file", transport.auth_token_file]
    if transport.tls_ca_file or transport.tls_cert_file:
        args += ["--tls-ca-file", transport.tls_ca_file or transport.tls_cert_file]
    return args


def _mean_or_none(values: np.ndarray) -> float | None:
    return float(values.mean()) if values.size else None


class _Interval:
    """Turns cumulative counters into one metrics row per log interval."""

    def __init__(self, frames_per_step: int, env_steps: int, trained: int):
        self.frames_per_step = frames_per_step
        self.t = time.monotonic()
        self.env_steps = env_steps
        self.trained = trained

    def row(self, sample: dict, core: LearnerCore, service: LearnerService,
            wall: float) -> dict:
        now = time.monotonic()
        dt = max(now - self.t, 1e-9)
        env_steps, trained = sample["env_steps"], sample["env_steps_trained"]
        lat = sample["action_latencies_ms"]
        pull = sample["pull_ms"]
        episodes = [e for e in sample["episodes"] if not e.evaluation]
        evaluation = [e for e in sample["episodes"] if e.evaluation]
        batch = service.take_batch_stats()
        row = {
            "wall_time": wall,
            "env_steps": env_steps,
            "env_frames": env_steps * self.frames_per_step,
            "fps": (env_steps - self.env_steps) * self.frames_per_step / dt,
            "learner_steps": sample["learner_steps"],
            "learner_fps": (trained - self.trained) * self.frames_per_step / dt,
            "inference_batch_size": batch,
            "queue_fill": len(core.buffer) / core.buffer.capacity,
            "episodes": len(episodes),
            "episode_return": (float(np.mean([e.episode_return for e in episodes])) if episodes
                               else None),
            "action_latency_p50_ms": float(np.percentile(lat, 50)) if lat.size else None,
            "action_latency_p99_ms": float(np.percentile(lat, 99)) if lat.size else None,
            "parameter_pull_ms": float(pull.mean()) if pull.size else None,
            "loss": sample["train"].get("loss"),
            "learner_inference_ms": _mean_or_none(sample["learner_inference_ms"]),
            "actor_inference_ms": _mean_or_none(sample["actor_inference_ms"]),
            "eval_episodes": len(evaluation),
            "eval_return": (float(np.mean([e.episode_return for e in evaluation]))
                            if evaluation else None),
        }
        row.update({k: v for k, v in sample["train"].items() if k not in row})
        self.t, self.env_steps, self.trained = now, env_steps, trained
        return row


#: What a checkpoint was trained for: a resume may not change it (another level, frame size or
#: network would train the saved weights on what they never saw, or fail to load them).
RESUME_FIXED = ("env", "env_kwargs", "agent", "network", "network_kwargs")


def resumed_config(run_dir: Path, given: dict) -> tuple[Config, dict]:
    """The saved run's config with every field in ``given`` (what the user asked for
    explicitly, any spelling) set as given; returns it with ``{path: (saved, given)}`` of
    what changed (``frames``, ``vtrace.entropy_cost``)."""
    from seed.results.files import RunDirError
    from seed.results.run_dirs import load_config
    try:
        saved = load_config(run_dir)["config"]
    except RunDirError as e:  # missing (not a run directory), or damaged
        raise ConfigError(f"cannot resume {run_dir}: {e}") from None
    config = from_saved(saved)
    given = paths(given, config.agent)  # a key of another agent is refused here
    values = config_paths(config)
    changed = {k: (values.get(k), v) for k, v in given.items()
               if k != "logdir" and values.get(k) != v}
    for key in RESUME_FIXED:
        if key in changed:
            saved_value, given_value = changed[key]
            raise ConfigError(f"cannot resume {run_dir} under {key} {given_value!r}: it was "
                              f"trained with {key} {saved_value!r}; start a new run for that")
    config = from_paths({**values, **{k: v for k, (_, v) in changed.items()},
                         "logdir": str(run_dir)})
    return config, changed


def prepare_run_dir(config: Config, resume_dir: str | None, given: dict | None = None):
    """(config, run_dir, counters, agent_state) for a new or resumed run; a new run's
    directory is made later (:func:`_learner_core`), once the run is known to fit.

    A resumed run takes its saved config, with each field in ``given`` (the fields the user
    gave explicitly, e.g. a longer ``frames`` budget) set as given; ``config`` is then unused.
    """
    if resume_dir:
        run_dir = Path(resume_dir)
        config, changed = resumed_config(run_dir, given or {})
        agent_state, counters = checkpoint.load(run_dir)
        for field, (before, after) in changed.items():
            log.info("resume: %s %r -> %r (given explicitly)", field, before, after)
        return config, run_dir, counters, agent_state
    run_dir = Path(config.logdir) if config.logdir else default_run_dir(config)
    if (run_dir / "checkpoint.npz").exists():
        raise ConfigError(f"{run_dir} already holds a run; use --resume {run_dir} to continue "
                          "it, or another --logdir")
    config.logdir = str(run_dir)
    return config, run_dir, {}, None


def check(config: Config) -> None:
    """What a run checks before anything is made: the config against its architecture
    (one line, ConfigError), and that idle cores may be made to poll where it asks to."""
    architectures.validate(config)
    if config.cpu_idle_poll:
        cpu_idle.check()  # before a run directory is made


def train(config: Config, resume_dir: str | None = None, given: dict | None = None) -> dict:
    """Run to the budget with the learner in this process; returns a summary dict (also
    written to summary.json). ``seed train`` runs it here, or with ``learner_on_gpu_node``
    runs :func:`train_here` on a GPU node of the Ray cluster (``seed.cli.launch_training``).

    With ``resume_dir`` the saved run goes on under its saved config, with each field in
    ``given`` (the fields the user gave explicitly) set as given (:func:`prepare_run_dir`).
    """
    check(config)
    return train_here(config, resume_dir, given)


def train_here(config: Config, resume_dir: str | None = None,
               given: dict | None = None) -> dict:
    """The run with its learner in this process (``config`` checked by :func:`check`).

    It ends at the budget, on SIGINT/SIGTERM, or when the learner or an actor
    fails; then actors stop first, then training and the server, and a clean stop
    logs a last row and checkpoints. The summary is written in every case the
    disk allows; a failure is raised after it, a full disk as a one-line
    :class:`seed.runtime.disk.DiskFull`.
    """
    config, run_dir, counters, agent_state = prepare_run_dir(config, resume_dir, given)
    if resume_dir:
        architectures.validate(config)  # the saved config with what was given
    # config.json and the actors get the dtype this CPU computes in
    config = with_effective_compute_dtype(config, log.warning)
    try:
        return _run(config, run_dir, counters, agent_state)
    except Exception as e:
        no_space = disk.no_space(e)
        if no_space is None:
            raise
        raise disk.disk_full(no_space, run_dir, _checkpoint_frames(run_dir),
                             "learner" if config.launcher == "none" else "train") from e


def _run(config: Config, run_dir: Path, counters: dict, agent_state: dict | None) -> dict:
    """:func:`train_here` once its run directory is known."""
    core, device = _learner_core(config, run_dir, counters, agent_state)
    learner = _Learner(config, core, run_dir)
    record = _RunRecord(config, core, learner.service, run_dir, counters)
    error: BaseException | None = None
    with cpu_idle.idle_polling(config.cpu_idle_poll), _StopSignals() as stop:
        try:
            learner.start(device)
            _tick_loop(config, learner, record, stop.event)
        except BaseException as e:  # stop cleanly, then re-raise
            error = e
        finally:
            learner.close()
            try:
                record.close(clean=error is None)  # a last row and checkpoint if clean
            except Exception as e:
                if error is None:
                    error = e
                else:
                    log.warning("closing the run's files after %r: %r", error, e)
    summary = record.summary(stop.reason if error is None else repr(error))
    try:
        _write_json(run_dir / "summary.json", summary)
    except OSError as e:
        error = error or e
    if error is not None:
        raise error
    return summary


def _checkpoint_frames(run_dir: Path) -> int | None:
    """The frames the run's checkpoint holds, read back from it; None if it has none that
    reads."""
    try:
        _, counters = checkpoint.load(run_dir)
        frames_per_step = json.loads((run_dir / "config.json").read_text())["frames_per_step"]
    except (checkpoint.CheckpointError, OSError, ValueError, KeyError):
        return None
    return int(counters["env_steps"]) * int(frames_per_step)


def _write_json(path: Path, value: dict) -> None:
    """``path`` replaced atomically: a resumed run's file stays whole if writing fails."""
    disk.replace_atomically(path, lambda f: f.write(json.dumps(value, indent=2).encode()))


def _learner_core(config: Config, run_dir: Path, counters: dict,
                  agent_state: dict | None) -> tuple[LearnerCore, str]:
    """(core, device): the run's agent and buffer, restored with the counters on a resume,
    and the device the learner runs on; records both in config.json. A buffer too large for
    the machine's memory is refused before the run directory is made or written."""
    env_spec = EnvSpec.probe(config.env, config.env_kwargs)
    device = learner_device()
    core = LearnerCore(config, env_spec)
    memory.check_buffer(core.buffer, UnrollSpec.of(core.agent, env_spec.observation_space))
    run_dir.mkdir(parents=True, exist_ok=True)
    _write_json(run_dir / "config.json",
                {"config": config.to_json(), "machine": machine_facts(device),
                 "learner_device": device, "architecture": config.arch,
                 "frames_per_step": env_spec.frames_per_step,
                 "env_engine": envs.engine_info(config.env)})
    if agent_state is not None:
        from seed.agents.contract import CheckpointMismatch  # loaded with the agent by now
        try:
            core.agent.restore_state(agent_state)
        except CheckpointMismatch as e:
            raise checkpoint.CheckpointError(
                f"cannot resume {run_dir}: its {checkpoint.CHECKPOINT} is not from the agent "
                f"and network its config.json names ({e})") from None
        core.stats.restore(counters)
    return core, device


class _Learner:
    """The learner in this process: its core's training thread, its gRPC service and
    server, and the launcher of the actors that connect to it."""

    def __init__(self, config: Config, core: LearnerCore, run_dir: Path):
        from seed.transport.security import server_security
        self.config, self.core, self.run_dir = config, core, run_dir
        self.security = server_security(config.transport.auth_token_file,
                                        config.transport.tls_cert_file,
                                        config.transport.tls_key_file)
        arch = architectures.architecture(config.arch)
        self.service = arch.service(core)
        self.launcher = make_launcher(config, run_dir)
        try:
            self.server, self.address = start_server(
                self.service, self.launcher.learner_address(config.transport.server),
                max_workers=arch.grpc_workers(config), security=self.security)
        except BaseException:
            self.launcher.stop()
            raise

    def start(self, device: str) -> None:
        """The actors, then training."""
        c = self.config
        self.launcher.start(self.address, c.actors)
        self.core.start_training()
        log.info("learner (%s, %s) serving %d actors x %d envs at %s (%s); results in %s",
                 c.arch, device, c.actors, c.envs_per_actor, self.address,
                 self.security.describe(), self.run_dir)

    def check(self) -> None:
        """Raise what a learner thread failed with, or what the launcher cannot mend."""
        if self.core.error is not None:
            raise self.core.error
        self.launcher.check()

    def close(self) -> None:
        """Actors first, then the service, training and the server; no socket file is left."""
        self.launcher.stop()
        self.service.close()
        self.core.stop()
        self.server.stop(grace=1.0).wait(5)
        path = unix_socket_path(self.address)
        if path and os.path.exists(path):
            os.unlink(path)


class _RunRecord:
    """What a run writes as it goes: episodes and metrics rows, checkpoints, the progress
    bar; at the end, its summary."""

    def __init__(self, config: Config, core: LearnerCore, service: LearnerService,
                 run_dir: Path, counters: dict):
        self.config, self.core, self.service, self.run_dir = config, core, service, run_dir
        self.frames_per_step = core.env_spec.frames_per_step
        self.wall_offset = float(counters.get("wall_time", 0.0))  # a resumed run's wall time
        self.resumed_frames = int(counters.get("env_steps", 0)) * self.frames_per_step
        self.writer = MetricsWriter(run_dir, relu_columns=core.agent.relu_columns)
        self.critic_watch = CriticWatch(core.agent.relu_columns)
        self.start = time.monotonic()
        self.interval = _Interval(self.frames_per_step, core.stats.env_steps,
                                  core.stats.env_steps_trained)
        self.progress = _Progress(config, core.stats.env_steps * self.frames_per_step)
        # The training and evaluation envs' last 100 episodes and how many there were, the
        # whole run's (a resumed run's earlier segments read from its episodes.csv, as the
        # report reads them), so summary.json and the report agree.
        self.recent_returns, self.recent_eval, self.episode_counts = _logged_episodes(
            run_dir) if counters else ([], [], [0, 0])
        # Segments: 1 for a new run, one more at each resume. A checkpoint from before the
        # count was kept gives a lower bound (segments_exact false).
        self.segments = int(counters.get("segments", 1)) + 1 if counters else 1
        self.segments_exact = not counters or "segments" in counters
        self.load = ForeignLoad(os.getpid())  # the machine's load besides this run's tree
        self.logged: dict | None = None  # the counters of the last metrics row

    def frames(self) -> int:
        return self.core.stats.env_steps * self.frames_per_step

    def log_row(self, now: float) -> None:
        """Write the interval's episodes and metrics row; keep the counters it logged."""
        sample = self.core.stats.take_interval()
        wall = self.wall_offset + now - self.start
        frames = sample["env_steps"] * self.frames_per_step
        for env_id, actor, ret, length, evaluation in sample["episodes"]:
            self.writer.write_episode(wall, frames, actor, env_id, ret, length, evaluation)
            (self.recent_eval if evaluation else self.recent_returns).append(ret)
            self.episode_counts[int(bool(evaluation))] += 1
        del self.recent_returns[:-LAST_EPISODES], self.recent_eval[:-LAST_EPISODES]
        row = self.interval.row(sample, self.core, self.service, wall)
        row["foreign_cpu"] = self.load.sample()
        row.update(self.critic_watch.check(row))
        self.writer.write_metrics(row)
        self.progress.update(row, self.recent_returns)
        self.logged = {**{name: sample[name] for name in RunStats.COUNTERS}, "wall_time": wall,
                       "segments": self.segments}

    def checkpoint(self) -> None:
        """A checkpoint of the counters of the row just logged: a resume never counts a
        frame whose episode is missing from episodes.csv (the agent may be a few steps
        newer than the counters, which only means a few frames counted twice)."""
        checkpoint.save(self.run_dir, self.core.agent.checkpoint_state(), self.logged)

    def close(self, clean: bool) -> None:
        """A clean stop logs what ran since the last row and checkpoints; then the metrics
        files and the progress bar close."""
        if clean:
            if self.logged is None or self.core.stats.env_steps != self.logged["env_steps"]:
                self.log_row(time.monotonic())
            self.checkpoint()
        self.writer.close()
        self.progress.close()

    def summary(self, stopped_by: str) -> dict:
        elapsed = time.monotonic() - self.start
        s = self.core.stats
        return {
            "run_dir": str(self.run_dir), "arch": self.config.arch, "env": self.config.env,
            "env_frames": s.env_steps * self.frames_per_step, "env_steps": s.env_steps,
            "learner_steps": s.learner_steps,
            # the whole run's training episodes (the mean below is over their last 100) and
            # evaluation episodes
            "episodes": self.episode_counts[0], "eval_episodes": self.episode_counts[1],
            "seconds": elapsed,  # this segment's, as is fps
            "fps": (s.env_steps * self.frames_per_step - self.resumed_frames) / max(elapsed, 1e-9),
            "wall_time": self.wall_offset + elapsed,  # the whole run's
            "segments": self.segments, "segments_exact": self.segments_exact,
            "mean_return_last_100": (float(np.mean(self.recent_returns))
                                     if self.recent_returns else None),
            "mean_eval_return_last_100": (float(np.mean(self.recent_eval))
                                          if self.recent_eval else None),
            "stopped_by": stopped_by,
        }


LAST_EPISODES = 100  # summary.json's means are over the last this many episodes


def _logged_episodes(run_dir: Path) -> tuple[list, list, list]:
    """A resumed run's episodes so far, from its episodes.csv, ordered as the report orders
    them (:func:`seed.results.curves.last_returns`): the last :data:`LAST_EPISODES` returns
    of the training envs and of the evaluation envs, and [training, evaluation] counts."""
    from seed.results.curves import last_returns
    from seed.results.files import RunDirError
    from seed.results.run_dirs import EPISODES, evaluation_episodes, read_episodes, \
        training_episodes
    try:
        episodes = read_episodes(run_dir / EPISODES)
    except RunDirError as e:
        raise checkpoint.CheckpointError(f"cannot resume {run_dir}: {e}") from None
    train, evals = training_episodes(episodes), evaluation_episodes(episodes)
    return (list(last_returns(train, LAST_EPISODES)), list(last_returns(evals, LAST_EPISODES)),
            [len(train), len(evals)])


TICK_S = 0.25  # how often the loop below looks at the run


def _tick_loop(config: Config, learner: _Learner, record: _RunRecord,
               stop: threading.Event) -> None:
    """Until the budget is spent or ``stop`` is set, every tick: tell the agent how much of
    the frame budget is spent, raise what failed, log a row every log interval and
    checkpoint every checkpoint interval (right after a row), else move the progress bar."""
    last_log = last_ckpt = record.start
    while not stop.is_set():
        stop.wait(TICK_S)
        now = time.monotonic()
        frames = record.frames()
        if config.frames:
            learner.core.agent.set_progress(min(1.0, frames / config.frames))
        learner.check()
        done = (config.frames and frames >= config.frames) or \
            (config.seconds and now - record.start >= config.seconds)
        checkpoint_due = now - last_ckpt >= config.checkpoint_interval_s
        if now - last_log >= config.log_interval_s or done or checkpoint_due:
            record.log_row(now)
            last_log = now
            if checkpoint_due:
                record.checkpoint()
                last_ckpt = now
        else:
            record.progress.tick(frames)
        if done:
            break


class _StopSignals:
    """For the run's duration, SIGINT and SIGTERM set ``event`` and name themselves in
    ``reason`` (handlers can only be set from the main thread; elsewhere nothing changes)."""

    def __init__(self):
        self.event = threading.Event()
        self.reason = "budget"
        self._previous: dict = {}

    def _on_signal(self, signum, frame) -> None:
        self.reason = signal.Signals(signum).name
        self.event.set()

    def __enter__(self) -> "_StopSignals":
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._on_signal)
        return self

    def __exit__(self, *exc) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


class _Progress:
    """A live bar: frames, FPS, episodes, recent return."""

    def __init__(self, config: Config, initial_frames: int):
        self._bar = None
        if config.progress:
            from tqdm import tqdm
            total = config.frames if config.frames else None
            self._bar = tqdm(total=total, initial=initial_frames, unit="frame",
                             unit_scale=True, dynamic_ncols=True, smoothing=0.1,
                             desc=f"{config.arch}:{config.env}")
        self._frames = initial_frames

    def tick(self, frames: int) -> None:
        if self._bar is not None and frames > self._frames:
            self._bar.update(frames - self._frames)
            self._frames = frames

    def update(self, row: dict, recent_returns: list) -> None:
        self.tick(int(row["env_frames"]))
        if self._bar is not None:
            ret = f"{np.mean(recent_returns):.2f}" if recent_returns else "-"
            self._bar.set_postfix_str(
                f"fps={row['fps']:.0f} learner_steps={row['learner_steps']} "
                f"return(100)={ret}", refresh=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def format_summary(s: dict) -> str:
    ret = s["mean_return_last_100"]
    ret_s = "n/a" if ret is None or (isinstance(ret, float) and math.isnan(ret)) else f"{ret:.3f}"
    return (f"{s['arch']} {s['env']}: {s['env_frames']:,} frames in {s['seconds']:.1f}s "
            f"({s['fps']:,.0f} frames/s), {s['learner_steps']} learner steps, "
            f"{s['episodes']} episodes, mean return (last 100) {ret_s}; results in "
            f"{s['run_dir']}")
