"""Actors on a local Ray cluster, end to end: runs that learn, restarts, a separate head.

The cluster tests need Ray (``pip install 'ray[default]'``) and are skipped,
saying so, without it. Every Ray node here is this machine on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.support.optional_ray import HAVE_RAY, needs_ray, ray

from seed.config import make_config
from seed.runtime.seed_arch.actor import run_actor

ROOT = Path(__file__).resolve().parents[2]





# -- an in-process Ray cluster ------------------------------------------------------

@pytest.fixture(scope="module")
def local_ray():
    if not HAVE_RAY:
        pytest.skip("ray is not installed: pip install 'ray[default]>=2.40'")
    if not ray.is_initialized():
        # Two CPUs for two actors, one more and a declared (not real) GPU for the
        # learner-on-a-GPU-node test; Ray only counts these, TensorFlow sees no GPU.
        # address="local": a cluster of its own, never one already running on this machine.
        ray.init(address="local", num_cpus=3, num_gpus=1, include_dashboard=False,
                 log_to_driver=False, object_store_memory=100 * 1024 * 1024)
    yield ray
    ray.shutdown()


def _catch_config(tmp_path, **kw):
    values = dict(env="toy:catch", arch="seed", actors=2, envs_per_actor=4,
                  frames=100_000, logdir=str(tmp_path / "run"), launcher="ray",
                  progress=False, log_interval_s=2.0)
    values.update(kw)
    return make_config(**values)


def _episodes(run_dir):
    import csv
    with open(Path(run_dir) / "episodes.csv") as f:
        return list(csv.DictReader(f))


@needs_ray
@pytest.mark.slow
def test_seed_on_ray_actors_learns_catch(local_ray, tmp_path):
    from seed.runtime.run import train
    summary = train(_catch_config(tmp_path))
    assert summary["stopped_by"] == "budget"
    assert summary["env_frames"] >= 100_000
    assert summary["mean_return_last_100"] >= 0.8, summary
    run_dir = Path(summary["run_dir"])
    recorded = json.loads((run_dir / "config.json").read_text())
    assert recorded["config"]["launcher"] == "ray"
    import tensorflow as tf
    if not tf.config.list_physical_devices("GPU"):
        assert recorded["learner_device"] == "CPU"
    # Both actors played; the launcher killed its actors at the end.
    assert {r["actor"] for r in _episodes(run_dir)} == {"0", "1"}
    prefix = f"seed-{run_dir.name}-"
    assert not [a for a in ray.util.list_named_actors(all_namespaces=True)
                if a["name"].startswith(prefix)]


@needs_ray
def test_check_raises_once_ray_gives_up_on_an_actor(local_ray, tmp_path):
    from seed.launch.ray_launcher import RayLauncher
    launcher = RayLauncher(_catch_config(tmp_path, actors=1), tmp_path, run_actor,
                           max_restarts=0)
    # Nobody listens here: the actor just keeps retrying to connect.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    try:
        launcher.start(f"127.0.0.1:{port}", 1)
        actor = launcher.actor_handles()[0]
        ray.get(actor.info.remote(), timeout=120)
        launcher.check()  # alive and retrying: nothing to report
        ray.kill(actor, no_restart=False)  # max_restarts=0: Ray cannot restart it
        deadline = time.monotonic() + 60
        with pytest.raises(RuntimeError, match="gave up restarting"):
            while time.monotonic() < deadline:
                launcher.check()
                time.sleep(0.2)
    finally:
        launcher.stop()
    assert ray.is_initialized()  # the launcher did not start Ray, so it leaves it up


@needs_ray
@pytest.mark.slow
def test_killed_actor_is_restarted_by_ray_and_its_envs_start_fresh(local_ray, tmp_path,
                                                                   monkeypatch):
    from seed.unrolls import UnrollBuilder
    from seed.runtime.run import train

    resets: list[tuple[float, int]] = []
    original_reset = UnrollBuilder.reset

    def recording_reset(self, env_id, *a, **kw):
        resets.append((time.monotonic(), int(env_id)))
        return original_reset(self, env_id, *a, **kw)

    monkeypatch.setattr(UnrollBuilder, "reset", recording_reset)

    config = _catch_config(tmp_path, frames=60_000)
    run_dir = Path(config.logdir)
    result: dict = {}

    def run():
        try:
            result["summary"] = train(config)
        except BaseException as e:  # surfaced below
            result["error"] = e

    t0 = time.monotonic()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    name = f"seed-{run_dir.name}-{os.getpid()}-actor-1"
    actor = None
    deadline = time.monotonic() + 180
    while actor is None and time.monotonic() < deadline and thread.is_alive():
        try:
            actor = ray.get_actor(name, namespace="seed")
        except ValueError:
            time.sleep(0.5)
    assert actor is not None, f"actor {name} never appeared: {result}"
    before = ray.get(actor.info.remote(), timeout=120)
    time.sleep(8)  # let it play a while
    assert thread.is_alive(), "the run ended before the kill: raise the frame budget"
    t_kill = time.monotonic()
    ray.kill(actor, no_restart=False)
    # ray.kill is asynchronous: the old process may answer once more before it dies.
    after = None
    while time.monotonic() < deadline:
        try:
            info = ray.get(actor.info.remote(), timeout=10)
            if info["pid"] != before["pid"]:
                after = info
                break
        except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError):
            pass
        time.sleep(0.5)
    assert after is not None, "Ray did not restart the killed actor"
    assert after["started"] > before["started"]
    assert not Path(f"/proc/{before['pid']}").exists() or \
        _state(before["pid"]) == "(Z)", "the killed actor's process is still running"
    assert after["task"] == 1

    thread.join(300)
    assert not thread.is_alive()
    assert "error" not in result, result.get("error")
    summary = result["summary"]
    assert summary["stopped_by"] == "budget"
    assert summary["env_frames"] >= 60_000
    # The restarted actor reconnected under a new run id: the learner reset each of
    # its envs (dropping their half-built unrolls) after the kill ...
    killed_envs = set(range(1 * 4, 2 * 4))
    assert killed_envs <= {e for t, e in resets if t > t_kill}
    # ... and the other actor's envs were not reset then (their run went on).
    assert not {e for t, e in resets if t > t_kill} & set(range(0, 4))
    # It then played whole episodes again.
    kill_wall = t_kill - t0  # >= the run's own wall time at the kill
    later = [r for r in _episodes(run_dir) if float(r["wall_time"]) > kill_wall]
    assert {r["actor"] for r in later} == {"0", "1"}


@needs_ray
@pytest.mark.slow
def test_learner_runs_as_a_ray_actor_holding_the_gpu(local_ray, tmp_path):
    from seed.cli import launch_training
    summary = launch_training(_catch_config(tmp_path, frames=20_000, learner_on_gpu_node=True))
    assert summary["stopped_by"] == "budget" and summary["env_frames"] >= 20_000
    where = summary["learner_host"]
    assert where["pid"] != os.getpid()  # not this process: a Ray actor
    assert where["ray_gpu_ids"] == ["0"] and where["cuda_visible_devices"] == "0"
    run_dir = Path(summary["run_dir"])
    recorded = json.loads((run_dir / "config.json").read_text())
    assert recorded["config"]["learner_on_gpu_node"] is True
    import tensorflow as tf
    if not tf.config.list_physical_devices("GPU"):
        assert recorded["learner_device"] == "CPU"  # Ray's GPU here is only declared
    assert {r["actor"] for r in _episodes(run_dir)} == {"0", "1"}
    assert not [a for a in ray.util.list_named_actors(all_namespaces=True)
                if a["name"].startswith(f"seed-{run_dir.name}-")]


# -- a head started apart from the learner ------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _proc_table() -> dict[int, tuple[int, str]]:
    """pid -> (ppid, cmdline) from /proc."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{d}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            stat = Path(f"/proc/{d}/stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        out[int(d)] = (ppid, cmd)
    return out


def _stop_head(temp_dir: str, gcs_address: str) -> None:
    """Stop the processes of this one head, by pid.

    ``ray stop`` would stop every Ray on the machine, including ones this test
    did not start; the head's processes all name its temp dir or GCS address.
    """
    table = _proc_table()
    roots = {p for p, (_, cmd) in table.items()
             if temp_dir in cmd or f"--address={gcs_address}" in cmd}
    pids, frontier = set(roots), set(roots)
    while frontier:
        frontier = {p for p, (pp, _) in table.items() if pp in frontier} - pids
        pids |= frontier
    pids.discard(os.getpid())
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for p in pids:
            try:
                os.kill(p, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            alive = [p for p in pids if Path(f"/proc/{p}").exists()
                     and "(Z)" not in _state(p)]
            if not alive:
                return
            time.sleep(0.3)


def _state(pid: int) -> str:
    try:
        s = Path(f"/proc/{pid}/stat").read_text()
        return f"({s.rsplit(')', 1)[1].split()[0]})"
    except OSError:
        return "(Z)"


@pytest.fixture(scope="module")
def ray_head(tmp_path_factory):
    if not HAVE_RAY:
        pytest.skip("ray is not installed: pip install 'ray[default]>=2.40'")
    import secrets
    import tempfile
    temp_dir = tempfile.mkdtemp(prefix="rayh-", dir="/tmp")  # Ray's socket paths are short
    token = Path(temp_dir) / "auth_token"
    token.write_text(secrets.token_hex(32))
    token.chmod(0o600)
    port = _free_port()
    env = dict(os.environ, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN_PATH=str(token),
               RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0")
    env.pop("RAY_ADDRESS", None)
    ray_bin = Path(sys.executable).with_name("ray")
    cmd = [str(ray_bin), "start", "--head", "--node-ip-address=127.0.0.1",
           f"--port={port}", "--num-cpus=2", "--include-dashboard=false",
           f"--dashboard-port={_free_port()}", f"--ray-client-server-port={_free_port()}",
           "--disable-usage-stats", f"--temp-dir={temp_dir}"]
    gcs = f"127.0.0.1:{port}"
    try:
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        yield {"address": gcs, "env": env}
    finally:
        _stop_head(temp_dir, gcs)


def _train_on_head(head, tmp_path, arch, extra_env=None):
    run_dir = tmp_path / f"run-{arch}"
    env = dict(head["env"], **(extra_env or {}))
    r = subprocess.run(
        [sys.executable, "-m", "seed.cli", "train", "--env", "toy:catch", "--arch", arch,
         "--actors", "2", "--envs-per-actor", "4", "--frames", "12000",
         "--launcher", "ray", "--ray-address", head["address"],
         "--logdir", str(run_dir), "--set", "progress=false"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=400)
    return r, run_dir


@needs_ray
@pytest.mark.slow
@pytest.mark.parametrize("arch", ["impala", "seed"])
def test_learner_joins_a_separate_head(ray_head, tmp_path, arch):
    r, run_dir = _train_on_head(ray_head, tmp_path, arch)
    assert r.returncode == 0, r.stderr[-4000:]
    assert f"joined {ray_head['address']}" in r.stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["stopped_by"] == "budget" and summary["arch"] == arch
    assert summary["env_frames"] >= 12_000 and summary["learner_steps"] > 0
    assert {row["actor"] for row in _episodes(run_dir)} == {"0", "1"}
    # Both actors were Ray actors of that head, and the learner listened on loopback TCP.
    assert "serving 2 actors" in r.stderr and "at 127.0.0.1:" in r.stderr


@needs_ray
@pytest.mark.slow
def test_joining_a_token_head_without_its_token_fails_clearly(ray_head, tmp_path):
    wrong = tmp_path / "wrong_token"
    wrong.write_text("0" * 64)
    r, _ = _train_on_head(ray_head, tmp_path, "seed",
                          extra_env={"RAY_AUTH_TOKEN_PATH": str(wrong)})
    assert r.returncode == 2, r.stderr[-3000:]
    errors = [l for l in r.stderr.splitlines() if l.startswith("seed: error:")]
    assert errors and "cannot join the Ray cluster" in errors[0], r.stderr[-3000:]
    assert "RAY_AUTH_MODE=token" in errors[0]


@needs_ray
@pytest.mark.slow
def test_ray_actors_reach_a_learner_with_token_and_tls(local_ray, tmp_path):
    """Each Ray actor reads the token file and the certificate on its node; the token
    itself never passes through Ray, argv or config.json."""
    from tests.support.tls_files import TOKEN, self_signed, token_file

    from seed.runtime.run import train
    cert, key = self_signed(tmp_path)
    summary = train(_catch_config(tmp_path, frames=20_000, auth_token_file=token_file(tmp_path),
                                  tls_cert_file=cert, tls_key_file=key))
    assert summary["stopped_by"] == "budget" and summary["env_frames"] >= 20_000
    run_dir = Path(summary["run_dir"])
    assert {r["actor"] for r in _episodes(run_dir)} == {"0", "1"}
    assert TOKEN not in (run_dir / "config.json").read_text()
