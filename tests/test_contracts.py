"""Every implementation holds to its written interface: launchers, envs, agents."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
import sys
from pathlib import Path

import numpy as np
import pytest

import envs
import seed.launch
from seed.config import Config
from seed.launch.base import Launcher
from seed.launch.external import ExternalActors
from seed.launch.local import LocalLauncher
from seed.launch.ray_launcher import RayLauncher


# -- launchers ----------------------------------------------------------------------------

def _launcher_classes():
    """Every class in seed/launch that starts, checks and stops actors."""
    found = {}
    for info in pkgutil.iter_modules(seed.launch.__path__, "seed.launch."):
        for _, cls in inspect.getmembers(importlib.import_module(info.name), inspect.isclass):
            if cls is not Launcher and all(callable(getattr(cls, m, None))
                                           for m in ("start", "check", "stop")):
                found[cls.__qualname__] = cls
    return found


def test_every_launcher_is_a_launcher():
    classes = _launcher_classes()
    assert set(classes) == {"LocalLauncher", "ExternalActors", "RayLauncher"}
    for cls in classes.values():
        assert issubclass(cls, Launcher) and not inspect.isabstract(cls), cls


def test_make_launcher_builds_a_launcher_for_each_name(tmp_path):
    from seed.runtime.run import make_launcher
    for name, cls in (("local", LocalLauncher), ("none", ExternalActors)):
        launcher = make_launcher(Config(launcher=name), tmp_path)
        assert type(launcher) is cls and isinstance(launcher, Launcher)
    assert issubclass(RayLauncher, Launcher)  # building one joins a cluster: tests/test_ray_*


def test_a_launcher_lets_the_learner_listen_where_server_says(tmp_path):
    for launcher in (LocalLauncher(tmp_path), ExternalActors()):
        assert launcher.learner_address("unix:/tmp/x.sock") == "unix:/tmp/x.sock"
        assert launcher.learner_address("") == ""


# -- envs ---------------------------------------------------------------------------------

FAKE_DEEPMIND_LAB = Path(__file__).resolve().parent / "fake_deepmind_lab"

# One env of every adapter (each toy env: they are separate classes); the keyword arguments
# keep an episode short.
ENVS = {
    "toy:catch": {}, "toy:cartpole": {},
    "atari:Pong": {"noop_max": 1},
    "football:academy_empty_goal_close": {},
    "dmlab:rooms_watermaze": {"config": {"episodeLengthSeconds": 1, "fps": 8}},
}


def test_every_adapter_and_toy_env_is_covered():
    from envs import toy
    assert {name.split(":")[0] for name in ENVS} == set(envs._KINDS)
    assert {name.split(":")[1] for name in ENVS if name.startswith("toy:")} == set(toy._ENVS)


def test_a_class_missing_a_member_is_no_env():
    members = {"observation_space": None, "action_space": None, "frames_per_step": 1,
               "reset": lambda self, *, seed=None, options=None: None,
               "step": lambda self, action: None, "close": lambda self: None}
    assert isinstance(type("Complete", (), members)(), envs.Env)
    for missing in ("frames_per_step", "close"):
        partial = {k: v for k, v in members.items() if k != missing}
        assert not isinstance(type("Partial", (), partial)(), envs.Env), missing


@pytest.fixture
def engines(monkeypatch):
    """DeepMind Lab's fake where the real one is missing (tests/fake_deepmind_lab)."""
    if importlib.util.find_spec("deepmind_lab") is None:
        monkeypatch.syspath_prepend(str(FAKE_DEEPMIND_LAB))
        monkeypatch.delitem(sys.modules, "deepmind_lab", raising=False)
    yield
    if getattr(sys.modules.get("deepmind_lab"), "FAKE", False):
        del sys.modules["deepmind_lab"]


@pytest.mark.parametrize("name", sorted(ENVS))
def test_every_env_is_an_env(name, engines):
    if name.startswith("football:") and importlib.util.find_spec("gfootball") is None:
        pytest.skip("gfootball is not installed (scripts/install_football.sh .venv)")
    env = envs.make(name, **ENVS[name])
    try:
        assert isinstance(env, envs.Env)
        assert type(env.frames_per_step) is int and env.frames_per_step >= 1
        assert env.action_space.n >= 2
        obs, info = env.reset(seed=3)
        assert isinstance(info, dict) and env.observation_space.contains(obs)
        for step in range(10_000):
            obs, reward, terminated, truncated, info = env.step(step % env.action_space.n)
            assert env.observation_space.contains(obs)
            assert np.isfinite(reward) and isinstance(info["raw_reward"], float)
            assert isinstance(terminated, bool) and isinstance(truncated, bool)
            if terminated or truncated:
                break
        else:
            raise AssertionError(f"{name}: no episode end in 10,000 steps")
        env.reset()  # a new episode, unseeded
    finally:
        env.close()
