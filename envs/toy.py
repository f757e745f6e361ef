"""Small built-in envs for tests and quick runs: ``toy:catch`` and ``toy:cartpole``.

``catch`` follows bsuite's Catch: a ball falls from a random column of the top
row, one row per step; the agent moves a paddle along the bottom row (actions
0 = left, 1 = stay, 2 = right) and gets +1 if it is under the ball when the
ball reaches the bottom row, else -1. Episodes last ``rows - 1`` steps.

``cartpole`` is Gymnasium's CartPole-v1 (truncated at 500 steps) with float32
observations.
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


_ENVS = {"catch": Catch, "cartpole": CartPole}


def make(name: str, **kwargs):
    """Build the toy env ``name`` (``catch`` or ``cartpole``)."""
    if name not in _ENVS:
        close = difflib.get_close_matches(name, list(_ENVS), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise UnknownEnvError(f"unknown toy env {name!r}{hint}; toy envs: {', '.join(_ENVS)}")
    return _ENVS[name](**kwargs)
