"""Fault injection on real runs of `seed train` / `seed learner` + `seed actor` on Catch.

Each test injects one kind of fault into a running run, checks that the run
carries on (or resumes) and reaches its budget, that nothing the checkpoint
counts is missing from the logs, and that Catch is still learned. Each prints
one ``FAULT`` line (run with ``-s``): what was injected, how long until the
run was whole again, what was lost.
"""

import csv
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = {k: v for k, v in os.environ.items() if k != "SEED_AUTH_TOKEN"}
ENV.update(TF_CPP_MIN_LOG_LEVEL="2", PYTHONUNBUFFERED="1")
CATCH = ["--env", "toy:catch", "--arch", "seed", "--actors", "2", "--envs-per-actor", "4",
         "--no-progress", "--set", "log_interval_s=1", "--set", "checkpoint_interval_s=5"]
FRAMES = 100_000

pytestmark = pytest.mark.slow


# -- helpers -------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawn(args, log_path: Path, env=None) -> subprocess.Popen:
    log = open(log_path, "ab")
    return subprocess.Popen([sys.executable, "-m", "seed.cli", *args], cwd=ROOT,
                            env=env or ENV, stdout=log, stderr=subprocess.STDOUT)


def rows(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with path.open() as f:
        return list(csv.DictReader(f))


def env_steps(run_dir: Path) -> int:
    m = rows(run_dir / "metrics.csv")
    return int(m[-1]["env_steps"]) if m else 0


def wait_until(condition, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out after {seconds:.0f}s waiting for {what}")


def actor_process(learner_pid: int, task: int) -> psutil.Process | None:
    """The live actor process ``task`` under the learner, or None."""
    for p in psutil.Process(learner_pid).children(recursive=True):
        try:
            cmd = p.cmdline()
        except psutil.Error:  # exited, or a zombie not yet reaped
            continue
        if "actor" in cmd and "--task" in cmd and cmd[cmd.index("--task") + 1] == str(task):
            return p
    return None


def finish(proc: subprocess.Popen, seconds: float = 900) -> None:
    try:
        code = proc.wait(seconds)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 0, f"exit {code}"


def check_logs_cover_checkpoint(run_dir: Path) -> dict:
    """Nothing the checkpoint counts is missing from the logs."""
    from seed.runtime.checkpoint import load
    _, counters = load(run_dir)
    episodes = rows(run_dir / "episodes.csv")
    metrics = rows(run_dir / "metrics.csv")
    assert len(episodes) >= counters["episodes_total"], (len(episodes), counters)
    assert max(int(r["env_steps"]) for r in metrics) >= counters["env_steps"]
    assert max(int(r["learner_steps"]) for r in metrics) >= counters["learner_steps"]
    return counters


def check_learns_catch(run_dir: Path) -> float:
    returns = [float(r["episode_return"]) for r in rows(run_dir / "episodes.csv")
               if r["evaluation"] != "1"]
    mean = float(np.mean(returns[-100:]))
    assert mean >= 0.8, f"mean return of the last 100 episodes {mean:.2f}"
    return mean


def report(fault: str, **facts) -> None:
    print(f"\nFAULT {fault}: " + "; ".join(f"{k}={v}" for k, v in facts.items()), flush=True)


# -- actors ----------------------------------------------------------------------------------

def test_actor_sigkill_is_restarted_and_the_run_learns(tmp_path):
    run_dir = tmp_path / "run"
    proc = spawn(["train", *CATCH, "--frames", str(FRAMES), "--logdir", str(run_dir)],
                 tmp_path / "learner.log")
    try:
        wait_until(lambda: env_steps(run_dir) >= 10_000, 600, "10k env steps")
        victim = actor_process(proc.pid, 0)
        metrics_at_kill = len(rows(run_dir / "metrics.csv"))
        victim.send_signal(signal.SIGKILL)
        t0 = time.monotonic()
        wait_until(lambda: (actor_process(proc.pid, 0) or victim).pid != victim.pid, 120,
                   "a new actor 0")
        restarted = time.monotonic() - t0
        # Once the interval of the kill is logged, every episode the dead actor reported is
        # in episodes.csv: any later one is the new actor's (an upper bound on its start).
        wait_until(lambda: len(rows(run_dir / "metrics.csv")) >= metrics_at_kill + 2, 60,
                   "the interval of the kill logged")
        before = sum(r["actor"] == "0" for r in rows(run_dir / "episodes.csv"))
        wait_until(lambda: sum(r["actor"] == "0" for r in rows(run_dir / "episodes.csv"))
                   > before, 300, "episodes from the new actor 0")
        served = time.monotonic() - t0
        finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    counters = check_logs_cover_checkpoint(run_dir)
    mean = check_learns_catch(run_dir)
    learner_log = (tmp_path / "learner.log").read_text(errors="replace")
    assert "actor 0 exited with code -9 (SIGKILL); restarting (1/3)" in learner_log
    report("actor SIGKILL", restarted_after_s=f"{restarted:.1f}",
           new_actor_episodes_logged_within_s=f"{served:.1f}",
           lost="the killed actor's in-flight step and its envs' half-built unrolls "
                "(new run id)", frames=counters["env_steps"], last100=f"{mean:.2f}")


def test_actor_sigstop_for_30s_leaves_the_others_served(tmp_path):
    """The stopped actor's streams go silent past a 5 s idle limit (or miss keepalive
    pings, about 10 s) and are closed; on SIGCONT it reconnects under a new run id, so its
    envs' half-built unrolls are dropped, never continued from another run."""
    run_dir = tmp_path / "run"
    proc = spawn(["train", *CATCH, "--frames", str(FRAMES), "--logdir", str(run_dir),
                  "--set", "stream_idle_timeout_s=5"], tmp_path / "learner.log")
    try:
        wait_until(lambda: env_steps(run_dir) >= 10_000, 600, "10k env steps")
        victim = actor_process(proc.pid, 0)
        episodes = rows(run_dir / "episodes.csv")
        by_actor = [sum(r["actor"] == a for r in episodes) for a in ("0", "1")]
        victim.send_signal(signal.SIGSTOP)
        stopped_at = env_steps(run_dir)
        time.sleep(30)
        during = env_steps(run_dir) - stopped_at
        episodes = rows(run_dir / "episodes.csv")
        actor1_during = sum(r["actor"] == "1" for r in episodes) - by_actor[1]
        actor0_stopped = sum(r["actor"] == "0" for r in episodes)
        victim.send_signal(signal.SIGCONT)
        t0 = time.monotonic()
        wait_until(lambda: sum(r["actor"] == "0" for r in rows(run_dir / "episodes.csv"))
                   >= actor0_stopped + 8, 300, "episodes from actor 0 after SIGCONT")
        resumed = time.monotonic() - t0
        assert victim.is_running() and actor_process(proc.pid, 0).pid == victim.pid
        finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert during > 0 and actor1_during > 0  # actor 1 kept being served, in partial batches
    # Its streams were closed while it was stopped: by keepalive (a stopped process
    # answers no ping) or the idle limit, whichever came first; it reconnected.
    actor_log = (run_dir / "actor-0.log").read_text(errors="replace")
    assert "learner unreachable" in actor_log
    closed_by = "idle limit" if "(idle)" in (tmp_path / "learner.log").read_text(
        errors="replace") else "keepalive"
    counters = check_logs_cover_checkpoint(run_dir)
    mean = check_learns_catch(run_dir)
    report("actor SIGSTOP 30s", env_steps_while_stopped=during,
           actor1_episodes_while_stopped=actor1_during,
           actor0_episodes_again_after_s=f"{resumed:.1f}", streams_closed_by=closed_by,
           lost="actor 0's half-built unrolls (its streams closed, new run id)",
           frames=counters["env_steps"], last100=f"{mean:.2f}")


# -- the learner -----------------------------------------------------------------------------

def test_learner_sigkill_then_resume_with_external_actors_over_tcp(tmp_path):
    run_dir = tmp_path / "run"
    server = f"127.0.0.1:{free_port()}"
    first = spawn(["learner", *CATCH, "--frames", str(FRAMES), "--logdir", str(run_dir),
                   "--server", server], tmp_path / "learner-1.log")
    actors = [spawn(["actor", "--server", server, "--task", str(i), "--connect-timeout",
                     "300"], tmp_path / f"actor-{i}.log") for i in range(2)]
    second = None
    try:
        from seed.runtime.checkpoint import load
        wait_until(lambda: (run_dir / "checkpoint.npz").exists() and env_steps(run_dir)
                   >= 15_000, 600, "a checkpoint and 15k env steps")
        time.sleep(3)  # some work past the checkpoint, to be lost
        first.send_signal(signal.SIGKILL)
        first.wait(30)
        _, at_kill = load(run_dir)
        logged = env_steps(run_dir)
        rows_at_kill = len(rows(run_dir / "metrics.csv"))
        time.sleep(5)  # the actors find the learner gone and back off
        assert all(a.poll() is None for a in actors), "an actor gave up"
        t0 = time.monotonic()
        second = spawn(["learner", "--resume", str(run_dir), "--server", server,
                        "--no-progress"], tmp_path / "learner-2.log")
        wait_until(lambda: len(rows(run_dir / "metrics.csv")) > rows_at_kill and
                   env_steps(run_dir) > at_kill["env_steps"] + 1000, 300,
                   "the resumed learner stepping")
        recovered = time.monotonic() - t0
        finish(second)
    finally:
        for p in [first, second, *actors]:
            if p is not None and p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in actors:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
    counters = check_logs_cover_checkpoint(run_dir)
    mean = check_learns_catch(run_dir)
    report("learner SIGKILL + --resume (external actors, TCP)",
           resumed_learner_stepping_after_s=f"{recovered:.1f}",
           checkpoint_env_steps=at_kill["env_steps"], logged_env_steps_at_kill=logged,
           lost_env_steps=logged - at_kill["env_steps"],
           frames=counters["env_steps"], last100=f"{mean:.2f}")


# -- hostile peers ---------------------------------------------------------------------------

def test_stray_silent_half_open_oversize_and_unauthenticated_peers_change_nothing(tmp_path):
    import grpc

    from seed.transport.channel import connect
    from seed.transport.proto import pb2
    from seed.transport.security import ClientSecurity
    from tests.support.stream_peers import FreezingProxy, HeldStream

    token = uuid.uuid4().hex
    token_path = tmp_path / "token"
    token_path.write_text(token)
    token_path.chmod(0o600)
    run_dir = tmp_path / "run"
    port = free_port()
    server = f"127.0.0.1:{port}"
    proc = spawn(["train", *CATCH, "--frames", str(FRAMES), "--logdir", str(run_dir),
                  "--server", server, "--auth-token-file", str(token_path),
                  "--set", "stream_idle_timeout_s=20"], tmp_path / "learner.log")
    held, channels, outcome = [], [], {}
    try:
        wait_until(lambda: env_steps(run_dir) >= 10_000, 600, "10k env steps")
        start_steps = env_steps(run_dir)
        # 1. No token, a wrong token: UNAUTHENTICATED, on unary calls and streams.
        for name, security in (("missing", None), ("wrong", ClientSecurity(token="x" * 32))):
            channel, stub = connect(server, security=security)
            channels.append(channel)
            try:
                stub.GetSpec(pb2.SpecRequest(actor_id=0), timeout=10)
            except grpc.RpcError as e:
                outcome[f"{name}_token_getspec"] = e.code().name
            s = HeldStream(stub)
            held.append(s)
            outcome[f"{name}_token_stream"] = s.ended_with().name
        # 2. Many silent streams with the token (a stray client): more than the threads.
        good = ClientSecurity(token=token)
        channel, stub = connect(server, security=good)
        channels.append(channel)
        strays = [HeldStream(stub, timeout=300) for _ in range(60)]
        held += strays
        # 3. A half-open connection: a silent stream behind a proxy that stops forwarding.
        proxy = FreezingProxy(port)
        pchannel, pstub = connect(f"127.0.0.1:{proxy.port}", security=good)
        channels.append(pchannel)
        held.append(HeldStream(pstub, timeout=300))
        time.sleep(1)
        proxy.frozen.set()
        # 4. Oversize: a 1 MB spec request.
        raw = grpc.insecure_channel(server, options=[("grpc.max_send_message_length", -1)])
        channels.append(raw)
        try:
            raw.unary_unary("/seedrl.Learner/GetSpec")(
                b"\x00" * (1 << 20), timeout=10,
                metadata=[("authorization", f"Bearer {token}")])
        except grpc.RpcError as e:
            outcome["oversize_getspec"] = e.code().name
        # Meanwhile the real actors keep stepping, and the learner keeps answering.
        t0 = time.monotonic()
        spec = stub.GetSpec(pb2.SpecRequest(actor_id=0), timeout=10)
        outcome["getspec_with_token_during_attack"] = spec.arch
        wait_until(lambda: env_steps(run_dir) > start_steps + 2000, 120,
                   "the real actors stepping during the attack")
        outcome["real_actors_stepping_after_s"] = f"{time.monotonic() - t0:.1f}"
        ended = [s.ended_with().name for s in strays]
        outcome["silent_streams"] = {c: ended.count(c) for c in set(ended)}
        outcome["half_open_stream_client_side"] = held[-1].ended_with().name
        finish(proc)
    finally:
        for s in held:
            s.close()
        for c in channels:
            c.close()
        if proc.poll() is None:
            proc.kill()
    assert outcome["missing_token_getspec"] == outcome["wrong_token_getspec"] == \
        "UNAUTHENTICATED"
    assert outcome["missing_token_stream"] == outcome["wrong_token_stream"] == \
        "UNAUTHENTICATED"
    assert outcome["oversize_getspec"] == "RESOURCE_EXHAUSTED"
    assert set(outcome["silent_streams"]) <= {"CANCELLED", "RESOURCE_EXHAUSTED"}
    learner_log = (tmp_path / "learner.log").read_text(errors="replace")
    assert token not in learner_log
    assert "refused a call" in learner_log
    counters = check_logs_cover_checkpoint(run_dir)
    mean = check_learns_catch(run_dir)
    report("hostile peers (no/wrong token, 60 silent streams, half-open, 1 MB request)",
           frames=counters["env_steps"], last100=f"{mean:.2f}",
           **{k: v for k, v in outcome.items()})
