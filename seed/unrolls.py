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
    """Steps in, unrolls out, over buffers allocated once. A step is added with the env's
    core state before it where :meth:`wants_state` says so: at the first step of an unroll
    and at every step that can start a later unroll's overlap (the agent keeps the state,
    and reading it back costs a call, so the runtimes read it only there, as upstream SEED
    keeps only the ``first_agent_states``).

    As upstream SEED's ``UnrollStore``: every leaf of a step (previous action, reward, done,
    observation, each agent output) has one buffer ``[num_envs, T + 1, ...]``, and the core
    state one ``[num_envs, starts, ...]`` per leaf (a slot per step an unroll can start at),
    shaped from the first batch. A batch is written with one fancy-indexed write per leaf;
    the unrolls it completes are copied out with one read per leaf, and their overlap moved
    to the front the same way.
    """

    def __init__(self, num_envs: int, unroll_length: int, overlap: int = 1):
        self.length = unroll_length + 1  # T + 1 steps per unroll
        if not 1 <= overlap <= unroll_length:
            raise ValueError(f"unroll overlap must be in [1, {unroll_length}], got {overlap}")
        self.overlap = int(overlap)
        self.num_envs = int(num_envs)
        # An unroll starts this many steps after the previous one: the steps at a multiple
        # of it within an unroll are the ones a later unroll can start at.
        self._stride = self.length - self.overlap
        self._starts = (self.length - 1) // self._stride + 1  # state slots per env
        self._fill = np.zeros(self.num_envs, np.int64)  # steps held per env
        self._steps: dict[str, np.ndarray] | None = None  # leaf -> [num_envs, T + 1, ...]
        self._states: tuple[np.ndarray, ...] | None = None  # [num_envs, starts, ...] a leaf

    def reset(self, env_id: int) -> None:
        self._fill[env_id] = 0

    def pending(self, env_id: int) -> int:
        return int(self._fill[env_id])

    def wants_state(self, env_id: int) -> bool:
        """Whether the env's next step needs its core state (an unroll can start at it)."""
        return bool(self._fill[env_id] % self._stride == 0)

    def rows_wanting_state(self, env_rows, skip=None) -> np.ndarray:
        """Bool mask over a batch's rows (distinct envs): the rows whose step needs its core
        state; rows that ``skip(env)`` leaves out never do."""
        rows = np.asarray(env_rows, np.int64)
        return (self._fill[rows] % self._stride == 0) & _kept(rows, skip)

    def append(self, env_id: int, core_state: tuple | None, prev_action, reward, done,
               observation, agent_output: dict) -> Unroll | None:
        """Add one step (with the core state *before* it, or None where :meth:`wants_state`
        is false); return the unroll it completes."""
        if not self.wants_state(env_id):
            core_state = tuple(s[:0, 0] for s in self._states)  # no unroll starts here
        elif core_state is None:
            raise ValueError(f"env {env_id}: an unroll can start at this step, and it came "
                             "without its core state")
        else:
            core_state = tuple(np.asarray(s)[None] for s in core_state)
        output = {k: np.asarray(v)[None] for k, v in agent_output.items()}
        completed = self.append_batch(
            [env_id], core_state, np.asarray([prev_action]),
            EnvOutput(np.asarray([reward]), np.asarray([done]), np.asarray(observation)[None]),
            output, output.get("action"))
        return completed[0][1] if completed else None

    def append_batch(self, env_rows, core_state: tuple, prev_action, env_output: EnvOutput,
                     agent_output: dict, action, skip=None) -> list[tuple[int, Unroll]]:
        """Add one step of every row of a batch; return ``(env, unroll)`` for each completed unroll.

        Row ``i`` is a step of env ``env_rows[i]``, the env's index in this builder (the
        SEED learner's global env ids, an IMPALA actor's ``0..k-1``); the envs of a batch are
        distinct. ``action`` is the action taken. ``core_state`` holds the state *before* the
        step of the rows :meth:`rows_wanting_state` picked (with the same ``skip``) just
        before, one row each in row order. ``agent_output`` gets ``'action'`` where it has
        none, so every unroll carries the action taken. Rows of envs for which ``skip(env)``
        is true (evaluation envs) are left out. Unrolls come in row order.
        """
        rows = np.asarray(env_rows, np.int64)
        kept = _kept(rows, skip)
        wanted = (self._fill[rows] % self._stride == 0) & kept
        taken = int(wanted.sum())
        if any(len(leaf) != taken for leaf in core_state):
            raise ValueError(f"{taken} rows of this batch needed their core state; it came "
                             f"with {[len(leaf) for leaf in core_state]} rows")
        envs = rows[kept]
        if not len(envs):
            return []
        if len(np.unique(envs)) != len(envs):
            raise ValueError(f"a batch's envs must be distinct: {envs.tolist()}")
        agent_output = dict(agent_output)
        if action is not None:
            agent_output.setdefault("action", action)
        step = {"prev_action": prev_action, "reward": env_output.reward,
                "done": env_output.done, "observation": env_output.observation,
                **{"agent/" + k: v for k, v in agent_output.items()}}
        if self._steps is None:
            self._allocate(step, core_state)
        position = self._fill[envs]
        for name, buffer in self._steps.items():
            buffer[envs, position] = np.asarray(step[name])[kept]
        if taken:
            starting = rows[wanted]
            slot = self._fill[starting] // self._stride
            for buffer, leaf in zip(self._states, core_state):
                buffer[starting, slot] = leaf
        self._fill[envs] += 1
        done = envs[self._fill[envs] == self.length]
        return list(zip(done.tolist(), self._take(done))) if len(done) else []

    def _allocate(self, step: dict, core_state: tuple) -> None:
        """The buffers, shaped and typed from a batch's rows: the spec of one step."""
        dtypes = {"prev_action": np.int32, "reward": np.float32, "done": np.bool_}
        self._steps = {}
        for name, values in step.items():
            values = np.asarray(values)
            self._steps[name] = np.zeros((self.num_envs, self.length) + values.shape[1:],
                                         dtypes.get(name, values.dtype))
        self._states = tuple(
            np.zeros((self.num_envs, self._starts) + np.shape(leaf)[1:], np.asarray(leaf).dtype)
            for leaf in core_state)

    def _take(self, envs: np.ndarray) -> list[Unroll]:
        """Copy out the full unrolls of ``envs``, then keep each one's last ``overlap`` steps
        (and their state slots) at the front as the start of its next unroll."""
        out = {name: buffer[envs] for name, buffer in self._steps.items()}
        states = tuple(buffer[envs, 0] for buffer in self._states)
        for buffer in self._steps.values():
            buffer[envs, :self.overlap] = buffer[envs, self._stride:]
        for buffer in self._states:
            buffer[envs, :-1] = buffer[envs, 1:]
        self._fill[envs] = self.overlap
        agent_keys = [n for n in out if n.startswith("agent/")]
        return [Unroll(
            core_state=tuple(s[i] for s in states),
            prev_action=out["prev_action"][i],
            env_output=EnvOutput(reward=out["reward"][i], done=out["done"][i],
                                 observation=out["observation"][i]),
            agent_output={n[len("agent/"):]: out[n][i] for n in agent_keys},
        ) for i in range(len(envs))]


def _kept(rows: np.ndarray, skip) -> np.ndarray:
    """Bool mask: the rows whose env ``skip`` does not leave out."""
    if skip is None:
        return np.ones(len(rows), bool)
    return np.asarray([not skip(env) for env in rows.tolist()], bool)
