"""Assembly of per-env unrolls from the steps an env's policy takes.

Both architectures build unrolls with it: the SEED learner from the batches its
central inference serves, an IMPALA actor from its own local inference.

An unroll holds ``T + 1`` consecutive steps of one env; when one completes,
the next starts with its last ``overlap`` steps. The default, one step, lets
the last step bootstrap (V-trace). R2D2 overlaps by ``burn_in + 1``: the
first ``burn_in`` steps of a sequence only warm up the recurrent state, so
without that overlap their transitions would never get a loss (upstream SEED's
R2D2 overlaps its sequences by the burn-in the same way). ``reset(env_id)``
drops a half-built unroll, so an env whose actor reconnected never mixes steps
of two runs.
"""

from __future__ import annotations

import numpy as np

from seed.types import EnvOutput, Unroll


class UnrollBuilder:
    def __init__(self, num_envs: int, unroll_length: int, overlap: int = 1):
        self.length = unroll_length + 1  # T + 1 steps per unroll
        if not 1 <= overlap <= unroll_length:
            raise ValueError(f"unroll overlap must be in [1, {unroll_length}], got {overlap}")
        self.overlap = int(overlap)
        self._steps: list[list] = [[] for _ in range(num_envs)]
        self._first_state: list = [None] * num_envs  # core state before the first step

    def reset(self, env_id: int) -> None:
        self._steps[env_id] = []
        self._first_state[env_id] = None

    def pending(self, env_id: int) -> int:
        return len(self._steps[env_id])

    def append(self, env_id: int, core_state: tuple, prev_action, reward, done, observation,
               agent_output: dict) -> Unroll | None:
        """Add one step (with the core state *before* it); return the unroll it completes."""
        steps = self._steps[env_id]
        if not steps:
            self._first_state[env_id] = tuple(np.array(s) for s in core_state)
        steps.append((prev_action, reward, done, observation, agent_output, core_state))
        if len(steps) < self.length:
            return None
        unroll = Unroll(
            core_state=self._first_state[env_id],
            prev_action=np.asarray([s[0] for s in steps], np.int32),
            env_output=EnvOutput(
                reward=np.asarray([s[1] for s in steps], np.float32),
                done=np.asarray([s[2] for s in steps], bool),
                observation=np.stack([s[3] for s in steps]),
            ),
            agent_output={k: np.stack([s[4][k] for s in steps]) for k in steps[0][4]},
        )
        kept = steps[-self.overlap:]
        self._steps[env_id] = kept
        self._first_state[env_id] = tuple(np.array(s) for s in kept[0][5])
        return unroll

    def append_batch(self, env_rows, core_state: tuple, prev_action, env_output: EnvOutput,
                     agent_output: dict, action, skip=None) -> list[tuple[int, Unroll]]:
        """Add one step of every row of a batch; return ``(env, unroll)`` for each completed unroll.

        Row ``i`` is a step of env ``env_rows[i]``, the env's index in this builder (the
        SEED learner's global env ids, an IMPALA actor's ``0..k-1``); ``core_state`` is the
        batch's state *before* the step, ``action`` the action taken. ``agent_output`` gets
        ``'action'`` where it has none, so every unroll carries the action taken. Rows of envs
        for which ``skip(env)`` is true (evaluation envs) are left out. Unrolls come in row order.
        """
        agent_output = dict(agent_output)
        agent_output.setdefault("action", action)
        completed = []
        for i, env in enumerate(np.asarray(env_rows).tolist()):
            if skip is not None and skip(env):
                continue
            unroll = self.append(env, tuple(leaf[i] for leaf in core_state), prev_action[i],
                                 env_output.reward[i], env_output.done[i],
                                 env_output.observation[i],
                                 {key: v[i] for key, v in agent_output.items()})
            if unroll is not None:
                completed.append((env, unroll))
        return completed
