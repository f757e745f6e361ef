"""Every implementation holds to its written interface: launchers, envs, agents."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

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
