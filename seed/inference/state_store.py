"""Per-environment recurrent state kept by the learner (SEED central inference).

Rows are indexed by global env id. Each env's row holds its network core state
and previous action, and the id of the actor run that owns the env: when a
request arrives with a different run id (the actor restarted or reconnected),
the env's row goes back to the initial state before the step is processed.
Episode ends within a run are handled by the network itself (``done`` resets
its state), as upstream SEED does.

Only the inference thread touches a store, so it needs no lock.
"""

from __future__ import annotations

import numpy as np


class RecurrentStateStore:
    def __init__(self, num_envs: int, initial_state_fn):
        """``initial_state_fn(batch_size) -> tuple of arrays [batch, ...]``."""
        self.num_envs = num_envs
        self._initial_row = tuple(np.asarray(x)[0] for x in initial_state_fn(1))
        self.state = tuple(np.repeat(row[None], num_envs, axis=0) for row in self._initial_row)
        self.prev_action = np.zeros(num_envs, np.int32)
        self.run_ids: list[str | None] = [None] * num_envs

    def begin(self, env_ids: np.ndarray, run_id: str) -> np.ndarray:
        """Claim ``env_ids`` for ``run_id``; reset envs that belonged to another run.

        Returns the env ids that were reset (a fresh run for them).
        """
        fresh = [e for e in env_ids.tolist() if self.run_ids[e] != run_id]
        for e in fresh:
            self.run_ids[e] = run_id
            for leaf, row in zip(self.state, self._initial_row):
                leaf[e] = row
            self.prev_action[e] = 0
        return np.asarray(fresh, np.int64)

    def gather(self, env_ids: np.ndarray) -> tuple[tuple, np.ndarray]:
        return tuple(leaf[env_ids] for leaf in self.state), self.prev_action[env_ids]

    def scatter(self, env_ids: np.ndarray, new_state, actions: np.ndarray) -> None:
        for leaf, new in zip(self.state, new_state):
            leaf[env_ids] = new
        self.prev_action[env_ids] = actions
