"""Actors as local subprocesses of the learner's process.

Each actor is ``python -m seed.cli actor --server ADDR --task I``, its output
in ``actor-I.log`` of the run directory. Actors exit when the launcher asks
(SIGTERM), and on their own when the launching process dies, so a killed run
leaves no orphans. A crashed actor (an exception, or a native crash in its env's
engine, which lives in the actor's process) is restarted (a fresh run id: its envs
start new episodes; the learner drops their half-built unrolls), up to
``max_restarts`` times each; then the run stops with :class:`ActorLost`.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from seed.launch.base import ActorLost, Launcher, exit_status

log = logging.getLogger(__name__)


class LocalLauncher(Launcher):
    def __init__(self, run_dir: str | Path, max_restarts: int = 3,
                 actor_args: list[str] | None = None):
        self.run_dir = Path(run_dir)
        self.actor_args = list(actor_args or [])  # e.g. --auth-token-file PATH (never a token)
        self.max_restarts = max_restarts
        self._procs: dict[int, subprocess.Popen] = {}
        self._restarts: dict[int, int] = {}
        self._address = ""
        self._logs: dict[int, object] = {}

    def _spawn(self, task: int) -> None:
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="",
                   PYTHONUNBUFFERED="1")
        cmd = [sys.executable, "-m", "seed.cli", "actor", "--server", self._address,
               "--task", str(task), "--parent-pid", str(os.getpid())] + self.actor_args
        logf = open(self.run_dir / f"actor-{task}.log", "ab")
        self._logs[task] = logf
        self._procs[task] = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL, env=env)

    def start(self, address: str, num_actors: int) -> None:
        self._address = address
        for task in range(num_actors):
            self._restarts[task] = 0
            self._spawn(task)

    def check(self) -> None:
        """Restart crashed actors; raise when one keeps crashing."""
        for task, proc in list(self._procs.items()):
            code = proc.poll()
            if code is None:
                continue
            self._logs[task].close()
            if self._restarts[task] >= self.max_restarts:
                raise ActorLost(
                    f"actor {task} exited {self._restarts[task] + 1} times, last with "
                    f"{exit_status(code)}; see {self.run_dir / f'actor-{task}.log'}")
            self._restarts[task] += 1
            log.warning("actor %d exited with %s; restarting (%d/%d)", task, exit_status(code),
                        self._restarts[task], self.max_restarts)
            self._spawn(task)

    def stop(self, timeout: float = 10.0) -> None:
        for proc in self._procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for proc in self._procs.values():
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for f in self._logs.values():
            f.close()
        self._procs.clear()

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self._procs.values()]
