"""Google Research Football (gfootball) behind the Gymnasium-style API of :mod:`envs`.

``make('academy_empty_goal_close')`` (``envs.make('football:academy_empty_goal_close')``)
builds the scenario with ``gfootball.env.create_environment``, as upstream SEED
does: the Super Mini Map (``representation='extracted'``), 4 frames stacked
(16 binary planes of 72 x 96), rewards ``'scoring,checkpoints'``, no rendering.
With ``packed=True`` (the default, what crosses the wire) the 16 planes are
bit-packed into ``[72, 96, 2]`` uint8 (:mod:`envs.football_packing`); the
network unpacks them.

gfootball speaks the old Gym API (``reset() -> obs``, ``step -> (obs, reward,
done, info)``); this adapter turns it into ``reset(seed=None) -> (obs, info)``
and ``step(a) -> (obs, reward, terminated, truncated, info)``. A football
episode ends when the scenario's game ends (a goal or lost ball in academy
scenarios, full time in a match), so ``done`` maps to ``terminated``.
``info['raw_reward']`` is the scoring reward alone (goals for minus against),
so episode returns count goals, not shaped checkpoint reward.

Install gfootball with ``scripts/install_football.sh VENV_DIR``.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib.util
import io
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np

from envs import UnknownEnvError
from envs.football_packing import pack_planes, packed_depth

INSTALL_HINT = "install it with: scripts/install_football.sh .venv"
# Representations whose values are binary planes (0/255), the only ones packing fits.
_PLANE_REPRESENTATIONS = ("extracted",)


class FootballNotInstalledError(ImportError):
    """gfootball is not importable."""


def _gfootball():
    try:
        # gym 0.25 prints an "unmaintained" notice to stderr on import; gfootball
        # needs that gym, and every actor process would repeat the notice.
        with contextlib.redirect_stderr(io.StringIO()):
            import gfootball.env as football_env
    except ImportError as e:
        raise FootballNotInstalledError(
            f"Google Research Football (gfootball) is not importable ({e}); {INSTALL_HINT}") from e
    return football_env


def scenarios() -> list[str]:
    """Names of the scenarios the installed gfootball ships (its ``scenarios`` folder)."""
    spec = importlib.util.find_spec("gfootball")
    if spec is None or not spec.submodule_search_locations:
        raise FootballNotInstalledError(
            f"Google Research Football (gfootball) is not installed; {INSTALL_HINT}")
    folder = Path(list(spec.submodule_search_locations)[0]) / "scenarios"
    return sorted(p.stem for p in folder.glob("*.py") if not p.stem.startswith("_"))


class FootballEnv(gym.Env):
    """One gfootball scenario, single agent controlling the left team's active player."""

    metadata = {"render_modes": []}
    frames_per_step = 1  # gfootball steps one engine frame per action (SEED: action repeat 1)

    def __init__(self, scenario: str, representation: str = "extracted", stacked: bool = True,
                 rewards: str = "scoring,checkpoints", packed: bool = True, **kwargs):
        known = scenarios()
        if scenario not in known:
            close = difflib.get_close_matches(scenario, known, n=5, cutoff=0.5)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise UnknownEnvError(
                f"unknown football scenario {scenario!r}{hint}; gfootball ships: "
                f"{', '.join(known)}")
        if packed and representation not in _PLANE_REPRESENTATIONS:
            raise ValueError(
                f"packed=True packs binary SMM planes and needs representation='extracted', "
                f"not {representation!r}; pass packed=False")
        if kwargs.get("render"):
            raise ValueError("the football adapter runs headless; render=True is not supported")
        kwargs.pop("render", None)
        self.scenario = scenario
        self.packed = packed
        football_env = _gfootball()
        with warnings.catch_warnings():
            # gym 0.25's wrappers warn that they use the old step API; we adapt it here.
            warnings.filterwarnings("ignore", message=".*old step API", category=DeprecationWarning)
            self._env = football_env.create_environment(
                env_name=scenario, representation=representation, stacked=stacked,
                rewards=rewards, render=False, **kwargs)
        inner = self._env.observation_space
        self.action_space = gym.spaces.Discrete(int(self._env.action_space.n))
        if packed:
            self.num_planes = int(inner.shape[-1])
            shape = tuple(inner.shape[:-1]) + (packed_depth(self.num_planes),)
            self.observation_space = gym.spaces.Box(0, 255, shape, np.uint8)
        else:
            self.num_planes = int(inner.shape[-1]) if representation == "extracted" else 0
            self.observation_space = gym.spaces.Box(
                np.asarray(inner.low), np.asarray(inner.high), tuple(inner.shape),
                np.dtype(inner.dtype))
        self._needs_reset = True

    def _observation(self, obs):
        obs = np.asarray(obs)
        return pack_planes(obs) if self.packed else obs.astype(self.observation_space.dtype,
                                                                copy=False)

    def reset(self, *, seed: int | None = None, options=None):
        super().reset(seed=seed)
        # The engine seeds each episode from this config value. gfootball would
        # otherwise draw it from Python's global `random`; drawing it from this
        # env's generator makes a seeded env's episodes reproducible and varied.
        engine_seed = int(self.np_random.integers(0, 2_000_000_000))
        self._env.unwrapped._config.update({"game_engine_random_seed": engine_seed})
        obs = self._env.reset()
        self._needs_reset = False
        return self._observation(obs), {}

    def step(self, action):
        if self._needs_reset:
            raise RuntimeError("call reset() before step() and after an episode ends")
        obs, reward, done, info = self._env.step(int(action))
        info = dict(info)
        info["raw_reward"] = float(info.get("score_reward", 0.0))
        if done:
            self._needs_reset = True
        return self._observation(obs), float(reward), bool(done), False, info

    def close(self):
        if self._env is not None:
            self._env.close()
            self._env = None


def observation_kind(scenario: str, representation: str = "extracted", **kwargs) -> str:
    """What ``make(scenario, representation=...)`` observes (``envs.OBSERVATION_KINDS``):
    minimap planes, rendered frames or a state vector."""
    del scenario, kwargs
    if representation in _PLANE_REPRESENTATIONS:
        return "planes"
    return "frames" if representation.startswith("pixels") else "features"


def make(scenario: str, representation: str = "extracted", stacked: bool = True,
         rewards: str = "scoring,checkpoints", packed: bool = True, **kwargs) -> FootballEnv:
    """The gfootball ``scenario`` (e.g. ``11_vs_11_easy_stochastic``, ``academy_empty_goal_close``).

    Extra ``kwargs`` go to ``gfootball.env.create_environment`` (e.g.
    ``channel_dimensions``, ``other_config_options``).
    """
    return FootballEnv(scenario, representation=representation, stacked=stacked,
                       rewards=rewards, packed=packed, **kwargs)
