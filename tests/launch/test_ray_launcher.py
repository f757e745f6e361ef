"""Actors on Ray without a cluster: the launcher, the learner's address and placement.

Runs on a Ray cluster are in ``tests/e2e/test_ray_local.py`` (one node) and
``tests/e2e/test_ray_cluster.py`` (several).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.optional_ray import HAVE_RAY

from seed.config import ConfigError, make_config
from seed.runtime.seed_arch.actor import run_actor

ROOT = Path(__file__).resolve().parents[2]


# -- without Ray ------------------------------------------------------------------

def test_local_launcher_does_not_import_ray(tmp_path):
    code = ("import sys; from seed.config import make_config; "
            "from seed.runtime.run import make_launcher; "
            f"l = make_launcher(make_config(launcher='local'), {str(tmp_path)!r}); "
            "assert type(l).__name__ == 'LocalLauncher'; "
            "assert 'ray' not in sys.modules, 'local launcher imported ray'")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_ray_launcher_without_ray_says_how_to_install(monkeypatch, tmp_path):
    from seed.launch import ray_launcher
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(ConfigError, match=r"pip install 'ray\[default\]"):
        ray_launcher.RayLauncher(make_config(launcher="ray"), tmp_path, run_actor)


def test_cli_launcher_ray_without_ray_is_one_clear_line(tmp_path):
    # Hide ray from a child interpreter (whether or not it is installed here).
    blocker = tmp_path / "noray"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\n"
        "class _NoRay:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'ray' or name.startswith('ray.'):\n"
        "            raise ImportError('No module named ray (hidden by the test)')\n"
        "sys.meta_path.insert(0, _NoRay())\n")
    env = dict(os.environ, PYTHONPATH=f"{blocker}{os.pathsep}{ROOT}")
    r = subprocess.run([sys.executable, "-m", "seed.cli", "train", "--env", "toy:catch",
                        "--launcher", "ray", "--frames", "1000", "--logdir",
                        str(tmp_path / "run"), "--set", "progress=false"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert r.returncode == 2, r.stderr[-2000:]
    errors = [l for l in r.stderr.splitlines() if l.startswith("seed: error:")]
    assert len(errors) == 1, r.stderr[-2000:]
    assert "pip install" in errors[0] and "ray" in errors[0]
    assert "Traceback" not in r.stderr


class _FakeRay:
    def __init__(self, hosts, gpu_hosts=()):
        self.hosts, self.gpu_hosts = hosts, set(gpu_hosts)

    def nodes(self):
        return [{"NodeManagerAddress": h, "Alive": True,
                 "Resources": {"CPU": 8.0, **({"GPU": 1.0} if h in self.gpu_hosts else {})}}
                for h in self.hosts] + \
            [{"NodeManagerAddress": "10.9.9.9", "Alive": False, "Resources": {"GPU": 8.0}}]

    def cluster_resources(self):
        return {"CPU": 8.0 * len(self.hosts), "GPU": float(len(self.gpu_hosts))}


def _bare_launcher(hosts):
    from seed.launch.ray_launcher import RayLauncher
    launcher = RayLauncher.__new__(RayLauncher)  # no cluster: only the address logic
    launcher.ray = _FakeRay(hosts)
    return launcher


def test_learner_address_on_a_loopback_cluster_is_loopback_tcp():
    launcher = _bare_launcher(["127.0.0.1"])
    assert launcher.learner_address("") == "127.0.0.1:0"
    assert launcher.learner_address("unix:/tmp/x.sock") == "127.0.0.1:0"


def test_learner_address_given_by_the_user_is_kept():
    launcher = _bare_launcher(["10.0.0.5", "10.0.0.6"])
    assert launcher.learner_address("10.0.0.5:29500") == "10.0.0.5:29500"
    assert _bare_launcher(["127.0.0.1"]).learner_address(":29500") == ":29500"


def test_learner_address_on_loopback_is_refused_for_other_nodes():
    launcher = _bare_launcher(["10.0.0.5", "10.0.0.6"])
    for server in (":29500", "29500", "127.0.0.1:29500", "localhost:29500"):
        with pytest.raises(ConfigError, match="loopback"):
            launcher.learner_address(server)


def test_learner_address_on_a_real_cluster_must_be_given():
    launcher = _bare_launcher(["10.0.0.5", "10.0.0.6"])
    with pytest.raises(ConfigError, match=r"--server NODE_IP:PORT"):
        launcher.learner_address("")
    with pytest.raises(ConfigError, match=r"10\.0\.0\.5, 10\.0\.0\.6"):
        launcher.learner_address("unix:/tmp/x.sock")


def test_ray_actors_cannot_use_a_unix_socket():
    launcher = _bare_launcher(["127.0.0.1"])
    with pytest.raises(ConfigError, match="TCP"):
        launcher.start("unix:/tmp/x.sock", 2)


def test_learner_placement_pins_the_gpu_node_of_server():
    from seed.launch.ray_launcher import learner_placement
    fake = _FakeRay(["10.0.0.5", "10.0.0.6"], gpu_hosts=["10.0.0.6"])
    opts = learner_placement(fake, make_config(launcher="ray", server="10.0.0.6:29500"))
    assert opts == {"num_gpus": 1, "num_cpus": 1, "resources": {"node:10.0.0.6": 0.001}}
    with pytest.raises(ConfigError, match=r"not the address of a GPU node.*10\.0\.0\.6"):
        learner_placement(fake, make_config(launcher="ray", server="10.0.0.5:29500"))
    with pytest.raises(ConfigError, match="GPU_NODE_IP:PORT"):
        learner_placement(fake, make_config(launcher="ray"))


def test_learner_placement_needs_a_gpu_in_the_cluster():
    from seed.launch.ray_launcher import learner_placement
    with pytest.raises(ConfigError, match="no node of the Ray cluster has a GPU"):
        learner_placement(_FakeRay(["127.0.0.1"]), make_config(launcher="ray"))
    # One machine on loopback with a GPU: no pin needed.
    assert learner_placement(_FakeRay(["127.0.0.1"], gpu_hosts=["127.0.0.1"]),
                             make_config(launcher="ray")) == {"num_gpus": 1, "num_cpus": 1}


def test_learner_on_gpu_node_needs_the_ray_launcher(tmp_path):
    from seed.runtime.run import train
    with pytest.raises(ConfigError, match="needs --launcher ray"):
        train(make_config(launcher="local", learner_on_gpu_node=True, logdir=str(tmp_path)))


def test_learner_on_gpu_node_sends_train_here_to_the_gpu_node(monkeypatch, tmp_path):
    from seed.cli import launch_training
    from seed.launch import ray_launcher
    from seed.runtime import run
    calls = []
    monkeypatch.setattr(ray_launcher, "train_on_gpu_node",
                        lambda *args: calls.append(args) or {"stopped_by": "budget"})
    config = make_config(launcher="ray", learner_on_gpu_node=True, logdir=str(tmp_path / "run"))
    assert launch_training(config) == {"stopped_by": "budget"}
    [(sent, resume, given, train_here, run_dir)] = calls
    assert sent is config and resume is None and given is None
    assert run_dir == str(tmp_path / "run")
    assert train_here is run.train_here  # the run in that process, not train() again
    if HAVE_RAY:  # it travels by reference: Ray's worker imports seed.runtime.run itself
        from ray import cloudpickle
        assert len(cloudpickle.dumps(train_here)) < 100
