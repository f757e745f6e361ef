"""Small built-in envs for tests and quick runs: ``toy:catch``, ``toy:cartpole``, ``toy:memory``.

``catch`` follows bsuite's Catch: a ball falls from a random column of the top
row, one row per step; the agent moves a paddle along the bottom row (actions
0 = left, 1 = stay, 2 = right) and gets +1 if it is under the ball when the
ball reaches the bottom row, else -1. Episodes last ``rows - 1`` steps.

``cartpole`` is Gymnasium's CartPole-v1 (truncated at 500 steps) with float32
observations.

``memory`` asks for memory and nothing else (as bsuite's memory_chain): a cue,
one of ``cues``, is shown at the first step only; ``delay`` blank steps follow;
then a step flagged "choose now" where the action naming the cue earns +1 and
any other -1, and the episode ends. An agent that sees only the current
observation is right by chance (an expected return of ``2 / cues - 1``, 0 with
two cues); one with a working recurrent core can reach +1.
"""

from __future__ import annotations

import difflib

import gymnasium
import numpy as np
from gymnasium import spaces

from envs import UnknownEnvError


class Catch:
    """bsuite-style Catch on a ``rows`` x ``columns`` grid."""

    frames_per_step = 1

    def __init__(self, rows: int = 10, columns: int = 5):
        if rows < 2 or columns < 1:
            raise ValueError(f"catch needs rows >= 2 and columns >= 1, got {rows}x{columns}")
        self.rows = rows
        self.columns = columns
        self.observation_space = spaces.Box(0.0, 1.0, (rows, columns), np.float32)
        self.action_space = spaces.Discrete(3)
        self._rng = np.random.default_rng()
        self._ball_x = 0
        self._ball_y = 0
        self._paddle_x = columns // 2
        self._done = True

    def _observation(self) -> np.ndarray:
        obs = np.zeros((self.rows, self.columns), np.float32)
        obs[self._ball_y, self._ball_x] = 1.0
        obs[self.rows - 1, self._paddle_x] = 1.0
        return obs

    def reset(self, seed: int | None = None, options=None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._ball_x = int(self._rng.integers(self.columns))
        self._ball_y = 0
        self._paddle_x = self.columns // 2
        self._done = False
        return self._observation(), {"raw_reward": 0.0}

    def step(self, action):
        if self._done:
            raise RuntimeError("Catch.step called on a finished episode; call reset() first")
        action = int(action)
        if not 0 <= action < 3:
            raise ValueError(f"Catch action must be 0, 1 or 2, got {action}")
        self._paddle_x = min(max(self._paddle_x + action - 1, 0), self.columns - 1)
        self._ball_y += 1
        reward = 0.0
        if self._ball_y == self.rows - 1:
            reward = 1.0 if self._ball_x == self._paddle_x else -1.0
            self._done = True
        return self._observation(), reward, self._done, False, {"raw_reward": reward}

    def close(self):
        pass


class CartPole:
    """Gymnasium's CartPole-v1 with float32 observations and ``info['raw_reward']``."""

    frames_per_step = 1

    def __init__(self, **kwargs):
        self._env = gymnasium.make("CartPole-v1", **kwargs)
        inner = self._env.observation_space
        self.observation_space = spaces.Box(inner.low.astype(np.float32),
                                            inner.high.astype(np.float32),
                                            inner.shape, np.float32)
        self.action_space = self._env.action_space

    def reset(self, seed: int | None = None, options=None):
        obs, info = self._env.reset(seed=seed, options=options)
        info = dict(info, raw_reward=0.0)
        return np.asarray(obs, np.float32), info

    def step(self, action):
        obs, reward, terminated, truncated, info = self._env.step(int(action))
        info = dict(info, raw_reward=float(reward))
        return np.asarray(obs, np.float32), float(reward), bool(terminated), bool(truncated), info

    def close(self):
        self._env.close()


class Memory:
    """A cue at the first step, ``delay`` blank steps, then a rewarded choice of the cue."""

    frames_per_step = 1

    def __init__(self, cues: int = 2, delay: int = 4):
        if cues < 2 or delay < 0:
            raise ValueError(f"memory needs cues >= 2 and delay >= 0, got {cues}, {delay}")
        self.cues, self.delay = int(cues), int(delay)
        # One-hot cue, then the "choose now" flag.
        self.observation_space = spaces.Box(0.0, 1.0, (self.cues + 1,), np.float32)
        self.action_space = spaces.Discrete(self.cues)
        self._rng = np.random.default_rng()
        self._cue = 0
        self._t = 0
        self._done = True

    def _observation(self) -> np.ndarray:
        obs = np.zeros(self.cues + 1, np.float32)
        if self._t == 0:
            obs[self._cue] = 1.0
        if self._t == self.delay + 1:
            obs[self.cues] = 1.0
        return obs

    def reset(self, seed: int | None = None, options=None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._cue = int(self._rng.integers(self.cues))
        self._t = 0
        self._done = False
        return self._observation(), {"raw_reward": 0.0}

    def step(self, action):
        if self._done:
            raise RuntimeError("Memory.step called on a finished episode; call reset() first")
        action = int(action)
        if not 0 <= action < self.cues:
            raise ValueError(f"Memory action must be in [0, {self.cues}), got {action}")
        reward = 0.0
        if self._t == self.delay + 1:
            reward = 1.0 if action == self._cue else -1.0
            self._done = True
        else:
            self._t += 1
        return self._observation(), reward, self._done, False, {"raw_reward": reward}

    def close(self):
        pass


_ENVS = {"catch": Catch, "cartpole": CartPole, "memory": Memory}


def observation_kind(name: str, **kwargs) -> str:
    """What its envs observe (``envs.OBSERVATION_KINDS``)."""
    del name, kwargs
    return "features"


def make(name: str, **kwargs):
    """Build the toy env ``name`` (``catch``, ``cartpole`` or ``memory``)."""
    if name not in _ENVS:
        close = difflib.get_close_matches(name, list(_ENVS), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise UnknownEnvError(f"unknown toy env {name!r}{hint}; toy envs: {', '.join(_ENVS)}")
    return _ENVS[name](**kwargs)
