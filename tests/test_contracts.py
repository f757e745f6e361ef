"""Every implementation holds to its written interface: launchers, envs, agents."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil

import numpy as np
import pytest

from tests.support import dmlab_engine
import envs
import seed.launch
from seed.agents import make_agent
from seed.agents.contract import Agent, Buffer
from seed.config import make_config
from seed.launch.base import Launcher
from seed.launch.external import ExternalActors
from seed.launch.local import LocalLauncher
from seed.launch.ray_launcher import RayLauncher


def _parameter_names(fn) -> list[str]:
    return [p for p in inspect.signature(fn).parameters if p != "self"]


def _takes_what_the_interface_names(obj, interface) -> None:
    """Every method of ``interface`` has, on ``obj``, parameters of the same names."""
    for name, member in inspect.getmembers(interface, inspect.isfunction):
        if not name.startswith("_"):
            assert _parameter_names(getattr(type(obj), name)) == _parameter_names(member), \
                f"{type(obj).__name__}.{name}"


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
        launcher = make_launcher(make_config(launcher=name), tmp_path)
        assert type(launcher) is cls and isinstance(launcher, Launcher)
        _takes_what_the_interface_names(launcher, Launcher)
    assert issubclass(RayLauncher, Launcher)  # building one joins a cluster: tests/test_ray_*


def test_a_launcher_lets_the_learner_listen_where_server_says(tmp_path):
    for launcher in (LocalLauncher(tmp_path), ExternalActors()):
        assert launcher.learner_address("unix:/tmp/x.sock") == "unix:/tmp/x.sock"
        assert launcher.learner_address("") == ""


# -- learner services ---------------------------------------------------------------------

def _service_classes():
    """Every gRPC learner servicer class in seed/runtime."""
    import seed.runtime
    from seed.transport.proto import pb2_grpc
    found = {}
    for info in pkgutil.walk_packages(seed.runtime.__path__, "seed.runtime."):
        for _, cls in inspect.getmembers(importlib.import_module(info.name), inspect.isclass):
            if issubclass(cls, pb2_grpc.LearnerServicer) and cls.__module__ == info.name:
                found[cls.__qualname__] = cls
    return found


def test_every_learner_service_is_a_learner_service_of_one_architecture():
    from seed.runtime.architectures import ARCHITECTURES
    from seed.runtime.service import LearnerService
    classes = {name: cls for name, cls in _service_classes().items() if cls is not LearnerService}
    assert set(classes) == {"SeedLearnerService", "ImpalaLearnerService"}
    assert sorted(a.service.__qualname__ for a in ARCHITECTURES.values()) == sorted(classes)
    for cls in classes.values():
        assert issubclass(cls, LearnerService) and not inspect.isabstract(cls), cls


@pytest.mark.parametrize("arch", ["seed", "impala"])
def test_a_learner_service_changes_its_core_only_through_the_cores_hooks(arch):
    from seed.runtime.architectures import architecture
    from seed.runtime.learner_core import EnvSpec, LearnerCore
    from seed.runtime.service import LearnerService
    config = make_config(env="toy:catch", arch=arch, actors=1, envs_per_actor=2, unroll_length=3,
                         train=False, progress=False)
    core = LearnerCore(config, EnvSpec.probe(config.env, config.env_kwargs))
    before = dict(vars(core))
    service = architecture(arch).service(core)
    try:
        assert isinstance(service, LearnerService) and service.core is core
        _takes_what_the_interface_names(service, LearnerService)
        assert vars(core).keys() == before.keys()
        assert all(vars(core)[k] is v for k, v in before.items())
        assert service.spec.max_request_bytes == service.limits.max_request
        assert service.spec.max_response_bytes == service.limits.response
        assert service.spec.arch == arch and service.take_batch_stats() is None
    finally:
        service.close()
        core.stop()


# -- envs ---------------------------------------------------------------------------------

# One env of every adapter (each toy env: they are separate classes); the keyword arguments
# keep an episode short.
ENVS = {
    "toy:catch": {}, "toy:cartpole": {}, "toy:memory": {},
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


@pytest.mark.parametrize("name", sorted(ENVS))
def test_every_env_is_an_env(name):
    if name.startswith("football:") and importlib.util.find_spec("gfootball") is None:
        pytest.skip("gfootball is not installed (scripts/install_football.sh .venv)")
    if name.startswith("dmlab:") and not (dmlab_engine.BUILT or dmlab_engine.REQUIRED):
        pytest.skip("DeepMind Lab is not built here (make dmlab-setup)")
    env = envs.make(name, **ENVS[name])
    try:
        assert isinstance(env, envs.Env)
        _takes_what_the_interface_names(env, envs.Env)
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


# -- agents -------------------------------------------------------------------------------

AGENTS = ("vtrace", "r2d2")  # every name seed.agents.make_agent builds


def _agent_classes():
    """Every class in seed/agents with an ``infer`` and a ``train_step``, but for the abstract
    AgentBase."""
    import seed.agents
    found = set()
    for info in pkgutil.iter_modules(seed.agents.__path__, "seed.agents."):
        for _, cls in inspect.getmembers(importlib.import_module(info.name), inspect.isclass):
            if cls is not Agent and not inspect.isabstract(cls) and \
                    callable(getattr(cls, "infer", None)) and \
                    callable(getattr(cls, "train_step", None)):
                found.add(cls.__qualname__)
    return found


def small_agent(name: str, **fields):
    from gymnasium import spaces
    if name == "r2d2":
        fields = dict(eval_envs=1, burn_in=1, replay_min_size=2, **fields)
    config = make_config(agent=name, network="mlp",
                         network_kwargs={"hidden_sizes": (8,), "lstm_size": 4}, actors=1,
                         envs_per_actor=3, unroll_length=4, batch_size=2, seed=1, **fields)
    return make_agent(config, spaces.Box(0.0, 1.0, (3,), np.float32), spaces.Discrete(3))


def test_every_agent_class_is_built_by_make_agent():
    assert _agent_classes() == {type(small_agent(name)).__qualname__ for name in AGENTS}


@pytest.mark.parametrize("name", AGENTS)
def test_every_agent_is_an_agent(name):
    agent = small_agent(name)
    assert isinstance(agent, Agent)
    _takes_what_the_interface_names(agent, Agent)
    assert isinstance(agent.new_buffer(), Buffer)
    assert agent.unroll_length == 4 and 1 <= agent.unroll_overlap <= agent.unroll_length
    assert all(c.startswith("dead_relu_") for c in agent.relu_columns)
    state = agent.initial_state(2)
    from seed.types import EnvOutput
    agent.reset_core_state(np.arange(2))
    action, output = agent.infer(
        np.arange(2), np.zeros(2, np.int32),
        EnvOutput(np.zeros(2, np.float32), np.ones(2, bool), np.zeros((2, 3), np.float32)))
    assert action.dtype == np.int32 and action.shape == (2,)
    assert all(v.shape[0] == 2 for v in output.values())
    new_state = agent.read_core_state(np.arange(2))
    assert [s.shape for s in new_state] == [s.shape for s in state]
    agent.set_progress(0.5)
    assert agent.parameters() and isinstance(agent.is_eval_env(0), bool)
