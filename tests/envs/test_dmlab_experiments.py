"""The DMLab experiment configs load, validate, and name a level and network that exist."""

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from envs import dmlab
from seed import config as seed_config
from seed.networks import make_network

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"
CONFIGS = ["dmlab_explore_goal_locations_small", "dmlab_rooms_watermaze"]


@pytest.mark.parametrize("name", CONFIGS)
def test_config_loads_and_fits(name):
    config = seed_config.load(str(EXPERIMENTS / f"{name}.yaml"))
    config.validate()
    assert config.benchmark == name
    kind, _, level = config.env.partition(":")
    assert kind == "dmlab" and name == f"dmlab_{level}"
    assert dmlab.level_path(level) == "contributed/dmlab30/" + level
    # Upstream SEED's DMLab optimizer (Adam, beta_1 0) on the mean loss: the IMPALA paper's
    # RMSprop (epsilon 0.1) assumed summed losses (seed/agents/vtrace.py).
    settings = config.agent_config
    assert (config.agent, config.network, settings.optimizer) == ("vtrace", "dmlab", "adam")
    assert (settings.adam_beta1, settings.loss_reduction) == (0.0, "mean")
    cache = {"level_cache_dir": "~/.cache/seed_rl/dmlab_levels"} if "explore" in name else {}
    assert config.env_kwargs == {"width": 96, "height": 72, "action_repeat": 4, **cache}
    assert config.unroll_length == 100 and settings.max_abs_reward == 1.0
    assert config.num_envs <= 8  # sized for a 2-core machine


@pytest.mark.parametrize("name", CONFIGS[:1])
def test_network_kwargs_build_the_network(name):
    config = seed_config.load(str(EXPERIMENTS / f"{name}.yaml"))
    space = gym.spaces.Box(0, 255, (config.env_kwargs["height"], config.env_kwargs["width"], 3),
                           np.uint8)
    net = make_network(config.network, len(dmlab.ACTION_SET), space, **config.network_kwargs)
    assert net.lstm_size == 256 and net.num_actions == 9


def test_explore_caches_its_mazes_under_the_users_home_for_its_budget(tmp_path, monkeypatch):
    """Each reset of explore_goal_locations_small compiles a new maze unless the level cache
    holds it: the config turns the cache on, in the user's cache folder (no run directory),
    and its learning rate decays to zero over the 5M frames of issue 32's run."""
    config = seed_config.load(str(EXPERIMENTS / "dmlab_explore_goal_locations_small.yaml"))
    monkeypatch.setenv("HOME", str(tmp_path))
    cache = dmlab.LevelCache(config.env_kwargs["level_cache_dir"])
    assert cache.cache_dir == str(tmp_path / ".cache" / "seed_rl" / "dmlab_levels")
    # DMLab's level_cache API: write(key, pk3_path) after compiling, fetch(key, pk3_path)
    # before: the file comes back from the cache folder in the home
    compiled = tmp_path / "maze.pk3"
    compiled.write_bytes(b"PK\x03\x04 a compiled maze")
    cache.write("maze key", str(compiled))
    assert cache.path("maze key").startswith(cache.cache_dir)
    fetched = tmp_path / "fetched.pk3"
    assert cache.fetch("maze key", str(fetched)) and fetched.read_bytes() == compiled.read_bytes()
    assert not cache.fetch("another maze", str(tmp_path / "none.pk3"))
    assert config.frames == 5_000_000 and config.agent_config.lr_decay_to_zero
