"""Local actors that die: restarted with the cause named, then the run stops in one line (as\none a full disk stops)."""

import subprocess
import sys
import time

import pytest

from seed.launch.base import ActorLost, exit_status
from seed.launch.local import LocalLauncher
from seed.runtime.disk import DiskFull


def test_an_exit_status_names_the_signal_that_ended_the_process():
    assert exit_status(1) == "code 1"
    assert exit_status(-11) == "code -11 (SIGSEGV)"
    assert exit_status(-9) == "code -9 (SIGKILL)"
    assert exit_status(-200) == "code -200"  # no such signal


def test_an_actor_that_keeps_crashing_is_restarted_then_lost(tmp_path, monkeypatch, caplog):
    """Each life of actor 0 dies of SIGSEGV, as an engine's native crash ends its process."""
    launcher = LocalLauncher(tmp_path, max_restarts=1)
    crash = "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"

    def spawn(task):
        launcher._logs[task] = open(tmp_path / f"actor-{task}.log", "ab")
        launcher._procs[task] = subprocess.Popen([sys.executable, "-c", crash])

    monkeypatch.setattr(launcher, "_spawn", spawn)
    launcher.start("unix:/nowhere", 1)
    with pytest.raises(ActorLost) as e:
        for _ in range(200):
            launcher.check()
            time.sleep(0.05)
    assert str(e.value) == (f"actor 0 exited 2 times, last with code -11 (SIGSEGV); see "
                            f"{tmp_path / 'actor-0.log'}")
    assert "actor 0 exited with code -11 (SIGSEGV); restarting (1/1)" in caplog.text
    launcher.stop()


@pytest.mark.parametrize("error", [
    ActorLost("actor 0 exited 4 times, last with code -11 (SIGSEGV); see x.log"),
    DiskFull("run/metrics.csv: No space left on device; the run stopped, its last intact "
             "checkpoint holds 4,000 frames: free space, then resume with "
             "`seed train --resume run`")])
def test_the_command_line_ends_a_run_that_stopped_so_in_one_line(monkeypatch, capsys, error):
    from seed import cli

    def train(args):
        raise error

    monkeypatch.setattr(cli, "cmd_train", train)
    assert cli.main(["train", "--env", "toy:catch", "--frames", "10"]) == 1
    assert capsys.readouterr().err == f"seed: error: {error}\n"
