"""The per-row unroll builder as it was before the buffers of seed/unrolls.py (2026-12-06,
commit eeab7f5): the slow reference the buffered builder is checked against, bit for bit."""

from __future__ import annotations

import numpy as np

from seed.types import EnvOutput, Unroll


class RowUnrollBuilder:
    """Steps in, unrolls out. A step is added with the env's core state before it where
    :meth:`wants_state` says so: at the first step of an unroll and at every step that
    can start a later unroll's overlap (the agent keeps the state, and reading it back
    costs a call, so the runtimes read it only there, as upstream SEED keeps only the
    ``first_agent_states``)."""

    def __init__(self, num_envs: int, unroll_length: int, overlap: int = 1):
        self.length = unroll_length + 1  # T + 1 steps per unroll
        if not 1 <= overlap <= unroll_length:
            raise ValueError(f"unroll overlap must be in [1, {unroll_length}], got {overlap}")
        self.overlap = int(overlap)
        # An unroll starts this many steps after the previous one: the steps at a multiple
        # of it within an unroll are the ones a later unroll can start at.
        self._stride = self.length - self.overlap
        self._steps: list[list] = [[] for _ in range(num_envs)]

    def reset(self, env_id: int) -> None:
        self._steps[env_id] = []

    def pending(self, env_id: int) -> int:
        return len(self._steps[env_id])

    def wants_state(self, env_id: int) -> bool:
        """Whether the env's next step needs its core state (an unroll can start at it)."""
        return len(self._steps[env_id]) % self._stride == 0

    def rows_wanting_state(self, env_rows, skip=None) -> np.ndarray:
        """Bool mask over a batch's rows (distinct envs): the rows whose step needs its core
        state; rows that ``skip(env)`` leaves out never do."""
        return np.asarray([(skip is None or not skip(env)) and self.wants_state(env)
                           for env in np.asarray(env_rows).tolist()], bool)

    def append(self, env_id: int, core_state: tuple | None, prev_action, reward, done,
               observation, agent_output: dict) -> Unroll | None:
        """Add one step (with the core state *before* it, or None where :meth:`wants_state`
        is false); return the unroll it completes."""
        steps = self._steps[env_id]
        if len(steps) % self._stride:
            core_state = None  # no unroll starts here: not kept
        elif core_state is None:
            raise ValueError(f"env {env_id}: an unroll can start at this step, and it came "
                             "without its core state")
        else:
            core_state = tuple(np.array(s) for s in core_state)
        steps.append((prev_action, reward, done, observation, agent_output, core_state))
        if len(steps) < self.length:
            return None
        unroll = Unroll(
            core_state=steps[0][5],
            prev_action=np.asarray([s[0] for s in steps], np.int32),
            env_output=EnvOutput(
                reward=np.asarray([s[1] for s in steps], np.float32),
                done=np.asarray([s[2] for s in steps], bool),
                observation=np.stack([s[3] for s in steps]),
            ),
            agent_output={k: np.stack([s[4][k] for s in steps]) for k in steps[0][4]},
        )
        self._steps[env_id] = steps[-self.overlap:]
        return unroll

    def append_batch(self, env_rows, core_state: tuple, prev_action, env_output: EnvOutput,
                     agent_output: dict, action, skip=None) -> list[tuple[int, Unroll]]:
        """Add one step of every row of a batch; return ``(env, unroll)`` for each completed unroll.

        Row ``i`` is a step of env ``env_rows[i]``, the env's index in this builder (the
        SEED learner's global env ids, an IMPALA actor's ``0..k-1``); ``action`` is the
        action taken. ``core_state`` holds the state *before* the step of the rows
        :meth:`rows_wanting_state` picked (with the same ``skip``) just before, one row
        each in row order. ``agent_output`` gets ``'action'`` where it has none, so every
        unroll carries the action taken. Rows of envs for which ``skip(env)`` is true
        (evaluation envs) are left out. Unrolls come in row order.
        """
        agent_output = dict(agent_output)
        agent_output.setdefault("action", action)
        completed, taken = [], 0
        for i, env in enumerate(np.asarray(env_rows).tolist()):
            if skip is not None and skip(env):
                continue
            state = None
            if self.wants_state(env):
                state = tuple(leaf[taken] for leaf in core_state)
                taken += 1
            unroll = self.append(env, state, prev_action[i], env_output.reward[i],
                                 env_output.done[i], env_output.observation[i],
                                 {key: v[i] for key, v in agent_output.items()})
            if unroll is not None:
                completed.append((env, unroll))
        if any(len(leaf) != taken for leaf in core_state):
            raise ValueError(f"{taken} rows of this batch needed their core state; it came "
                             f"with {[len(leaf) for leaf in core_state]} rows")
        return completed
