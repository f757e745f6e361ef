"""Per-environment run ids and previous actions, kept by the SEED learner.

Rows are indexed by global env id. Each row holds the env's previous action (the
network's input, and the unroll's) and the id of the actor run that owns the env:
when a request arrives with a different run id (the actor restarted or reconnected),
:meth:`EnvRuns.begin` reports the env as fresh and its previous action goes back to 0;
the learner then resets the env's core state, which the agent keeps
(:mod:`seed.agents.core_state_table`), and drops its half-built unroll. Episode ends
within a run are handled by the network itself (``done`` resets its state), as
upstream SEED does.

Only the inference thread touches it, so it needs no lock.
"""

from __future__ import annotations

import numpy as np


class EnvRuns:
    def __init__(self, num_envs: int):
        self.num_envs = num_envs
        self.prev_action = np.zeros(num_envs, np.int32)
        self.run_ids: list[str | None] = [None] * num_envs

    def begin(self, env_ids: np.ndarray, run_id: str) -> np.ndarray:
        """Claim ``env_ids`` for ``run_id``; envs that belonged to another run start over
        (previous action 0). Returns the env ids that did (a fresh run for them)."""
        fresh = [e for e in env_ids.tolist() if self.run_ids[e] != run_id]
        for e in fresh:
            self.run_ids[e] = run_id
            self.prev_action[e] = 0
        return np.asarray(fresh, np.int64)
