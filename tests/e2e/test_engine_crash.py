"""A native crash in an env's engine, under both architectures: the engine lives in the actor's
process (SEED's actors step their envs there; an IMPALA actor also infers there), so a crash
of it is that process dying of SIGSEGV mid-episode. The run loses that actor's in-flight
step and half-built unrolls only: the launcher restarts it (one line in the learner's log,
naming the signal), the learner trains on, and every episode the run counts is one whole
episode in episodes.csv.

Catch (an actor sent SIGSEGV) and DeepMind Lab (the process holding the real engine sent
SIGSEGV) are both slow: each is two real runs of a learner and two actors.
"""

import json
import resource
import signal
import time
from pathlib import Path

import psutil
import pytest

from tests.e2e.test_faults import ENV, actor_process, rows, spawn, wait_until
from tests.support.dmlab_engine import needs_dmlab

pytestmark = pytest.mark.slow


def crash_an_actor_mid_run(tmp_path: Path, args: list[str], episode_length: int,
                           engine: str = "") -> dict:
    """Run ``seed train args`` until actor 0 has finished episodes, kill it with SIGSEGV,
    wait for its replacement's episodes, then stop the run with SIGTERM; check what the
    module docstring says and return what was seen. ``engine``: a shared library the killed
    process must have loaded (the engine lives there)."""
    run_dir = tmp_path / "run"
    log_path = tmp_path / "learner.log"
    # No core file from the crash (the learner and its actors inherit this limit).
    resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    proc = spawn(["train", *args, "--frames", "100000000", "--logdir", str(run_dir),
                  "--no-progress", "--set", "log_interval_s=1"], log_path, env=ENV)
    try:
        by_actor0 = lambda: [r for r in rows(run_dir / "episodes.csv") if r["actor"] == "0"]
        wait_until(lambda: len(by_actor0()) >= 4, 600, "episodes from actor 0")
        victim = actor_process(proc.pid, 0)
        assert victim is not None and psutil.Process(victim.pid).is_running()
        assert not engine or any(engine in m.path for m in victim.memory_maps()), \
            f"{engine} is not in the actor's process"
        time.sleep(0.3)  # its envs well into their episodes
        victim.send_signal(signal.SIGSEGV)
        killed_at = time.monotonic()
        victim.wait(30)
        metrics_at_kill = rows(run_dir / "metrics.csv")
        # Once the interval of the kill is logged, any later episode of actor 0 is the new one's.
        wait_until(lambda: len(rows(run_dir / "metrics.csv")) >= len(metrics_at_kill) + 2, 60,
                   "the interval of the kill logged")
        before = len(by_actor0())
        wait_until(lambda: len(by_actor0()) > before, 300, "episodes from the new actor 0")
        replaced_after = time.monotonic() - killed_at
        actors = [p for p in psutil.Process(proc.pid).children(recursive=True)]
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(120)
    finally:
        if proc.poll() is None:
            proc.kill()
    log = log_path.read_text(errors="replace")
    assert code == 0, log[-3000:]
    assert "actor 0 exited with code -11 (SIGSEGV); restarting (1/3)" in log
    assert "Traceback" not in log
    time.sleep(0.5)
    assert not [p for p in actors if p.is_running() and p.status() != psutil.STATUS_ZOMBIE], \
        "a process outlived the run"
    metrics = rows(run_dir / "metrics.csv")
    episodes = rows(run_dir / "episodes.csv")
    summary = json.loads((run_dir / "summary.json").read_text())
    from seed.runtime.checkpoint import load
    _, counters = load(run_dir)
    # The learner trained on after the crash.
    assert int(metrics[-1]["learner_steps"]) > int(metrics_at_kill[-1]["learner_steps"])
    # Every episode counted is one whole episode in episodes.csv, in the metrics rows, and
    # in the final checkpoint: the crashed actor's unfinished episodes are in none of them.
    logged = sum(int(r["episodes"]) + int(r["eval_episodes"] or 0) for r in metrics)
    assert len(episodes) == logged == summary["episodes"] == counters["episodes_total"]
    assert {int(e["episode_length"]) for e in episodes} == {episode_length}
    return {"replaced_after_s": replaced_after, "episodes": len(episodes),
            "learner_steps_after_kill": int(metrics[-1]["learner_steps"])
            - int(metrics_at_kill[-1]["learner_steps"])}


@pytest.mark.parametrize("arch", ["seed", "impala"])
def test_catch_actor_killed_by_sigsegv_is_replaced_and_nothing_is_miscounted(tmp_path, arch):
    seen = crash_an_actor_mid_run(
        tmp_path, ["--env", "toy:catch", "--arch", arch, "--actors", "2",
                   "--envs-per-actor", "2"], episode_length=9)
    print(f"\nFAULT actor SIGSEGV ({arch}, Catch): " + json.dumps(seen), flush=True)


@needs_dmlab
@pytest.mark.parametrize("arch", ["seed", "impala"])
def test_dmlab_engine_killed_by_sigsegv_mid_episode_costs_only_its_actors_unroll(tmp_path,
                                                                                 arch):
    """2-second episodes: 30 steps of 4 frames each, so every episode has 30 steps."""
    seen = crash_an_actor_mid_run(
        tmp_path, ["--env", "dmlab:seekavoid_arena_01", "--network", "dmlab", "--arch", arch,
                   "--actors", "2", "--envs-per-actor", "1", "--unroll-length", "10",
                   "--batch-size", "2",
                   "--set", 'network_kwargs={"lstm_size": 16, "channels": [4, 8, 8], '
                            '"fc_size": 32}',
                   "--set", 'env_kwargs={"config": {"episodeLengthSeconds": 2}}'],
        episode_length=30, engine="deepmind_lab.so")
    print(f"\nFAULT DMLab engine SIGSEGV ({arch}): " + json.dumps(seen), flush=True)
