"""The envs one actor steps, as a batch: the same code under both architectures.

Tracks each env's episode return (raw game score, from ``info['raw_reward']``)
and length, and resets an env the moment its episode ends, so the next
observation it reports starts a new episode (``done=True``).
"""

from __future__ import annotations

import numpy as np


class ActorEnvs:
    def __init__(self, env_name: str, env_kwargs: dict, env_ids: list[int], seed: int = 0):
        import envs

        self.env_ids = list(env_ids)
        self.envs = [envs.make(env_name, **env_kwargs) for _ in self.env_ids]
        self.frames_per_step = self.envs[0].frames_per_step
        self._seed = seed
        self._returns = np.zeros(len(self.envs), np.float64)
        self._lengths = np.zeros(len(self.envs), np.int64)
        self._resets = 0

    def __len__(self) -> int:
        return len(self.envs)

    def reset_all(self):
        """Fresh episodes everywhere: (reward 0, done True, observations)."""
        self._resets += 1
        obs = []
        for i, env in enumerate(self.envs):
            # A distinct, reproducible seed per env and per (re)start of the actor.
            seed = int(np.random.SeedSequence([self._seed, self.env_ids[i], self._resets])
                       .generate_state(1)[0])
            o, _ = env.reset(seed=seed)
            obs.append(o)
        self._returns[:] = 0
        self._lengths[:] = 0
        n = len(self.envs)
        return np.zeros(n, np.float32), np.ones(n, bool), np.stack(obs)

    def step(self, actions, indices=None):
        """Step the envs at ``indices`` (default: all) with ``actions``, one per env.

        Returns (reward, done, observation, finished episodes) for those envs, in
        that order; finished episodes are ``(env_id, return, length)`` tuples.
        """
        if indices is None:
            indices = range(len(self.envs))
        n = len(indices)
        if len(actions) != n:
            raise ValueError(f"{len(actions)} actions for {n} envs")
        rewards = np.zeros(n, np.float32)
        dones = np.zeros(n, bool)
        obs, finished = [], []
        for j, (i, a) in enumerate(zip(indices, actions)):
            env = self.envs[i]
            o, r, terminated, truncated, info = env.step(int(a))
            rewards[j] = r
            self._returns[i] += info.get("raw_reward", r)
            self._lengths[i] += 1
            if terminated or truncated:
                finished.append((self.env_ids[i], float(self._returns[i]), int(self._lengths[i])))
                self._returns[i] = 0
                self._lengths[i] = 0
                o, _ = env.reset()
                dones[j] = True
            obs.append(o)
        return rewards, dones, np.stack(obs), finished

    def close(self) -> None:
        for env in self.envs:
            env.close()
