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

from seed.types import ArraySpec, EnvOutput, Unroll
from seed.unroll_spec import UnrollSpec


class UnrollBuilder:
    """Steps in, unrolls out, over buffers allocated once. A step is added with the env's
    core state before it where :meth:`wants_state` says so: at the first step of an unroll
    and at every step that can start a later unroll's overlap (the agent keeps the state,
    and reading it back costs a call, so the runtimes read it only there, as upstream SEED
    keeps only the ``first_agent_states``).

    As upstream SEED's ``UnrollStore``: the run's :class:`UnrollSpec` gives every leaf of a
    step (previous action, reward, done, observation, each agent output) one buffer
    ``[num_envs, T + 1, ...]`` of its dtype, and every core state leaf one
    ``[num_envs, starts, ...]`` (a slot per step an unroll can start at), all allocated
    here. A batch is written with one fancy-indexed write per leaf, after every leaf was
    checked against the spec; the unrolls it completes are copied out with one read per
    leaf, and their overlap moved to the front the same way.
    """

    def __init__(self, spec: UnrollSpec, num_envs: int, overlap: int = 1):
        self.spec = spec
        self.length = spec.steps  # T + 1 steps per unroll
        if not 1 <= overlap < self.length:
            raise ValueError(f"unroll overlap must be in [1, {self.length - 1}], got {overlap}")
        self.overlap = int(overlap)
        self.num_envs = int(num_envs)
        # An unroll starts this many steps after the previous one: the steps at a multiple
        # of it within an unroll are the ones a later unroll can start at.
        self._stride = self.length - self.overlap
        starts = (self.length - 1) // self._stride + 1  # state slots per env
        self._fill = np.zeros(self.num_envs, np.int64)  # steps held per env
        self._steps = {name: _buffer((self.num_envs, self.length), leaf)
                       for name, leaf in spec.step.items()}
        self._states = tuple(_buffer((self.num_envs, starts), leaf) for leaf in spec.core_state)

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
            core_state = ()  # no unroll starts here
        elif core_state is None:
            raise ValueError(f"env {env_id}: an unroll can start at this step, and it came "
                             "without its core state")
        else:
            core_state = tuple(np.asarray(s)[None] for s in core_state)
        completed = self.append_batch(
            [env_id], core_state, np.asarray([prev_action]),
            EnvOutput(np.asarray([reward]), np.asarray([done]), np.asarray(observation)[None]),
            {k: np.asarray(v)[None] for k, v in agent_output.items()}, None)
        return completed[0][1] if completed else None

    def append_batch(self, env_rows, core_state: tuple, prev_action, env_output: EnvOutput,
                     agent_output: dict, action, skip=None) -> list[tuple[int, Unroll]]:
        """Add one step of every row of a batch; return ``(env, unroll)`` for each completed unroll.

        Row ``i`` is a step of env ``env_rows[i]``, the env's index in this builder (the
        SEED learner's global env ids, an IMPALA actor's ``0..k-1``); the envs of a batch are
        distinct. ``action`` is the action taken. ``core_state`` holds the state *before* the
        step of the rows :meth:`rows_wanting_state` picked (with the same ``skip``) just
        before, one row each in row order (``()`` where it picked none). ``agent_output``
        gets ``'action'`` where it has none, so every unroll carries the action taken. Rows
        of envs for which ``skip(env)`` is true (evaluation envs) are left out. Unrolls come
        in row order.

        Every leaf must hold the batch's rows, each shaped as the spec's leaf and of its
        dtype's kind (bool, integer, float: it is stored as the spec's dtype), and the agent
        outputs must be the spec's; otherwise ValueError naming the leaf, and nothing is kept.
        """
        rows = np.asarray(env_rows, np.int64)
        kept = _kept(rows, skip)
        wanted = (self._fill[rows] % self._stride == 0) & kept
        taken = int(wanted.sum())
        if any(len(leaf) != taken for leaf in core_state):
            raise ValueError(f"{taken} rows of this batch needed their core state; it came "
                             f"with {[len(leaf) for leaf in core_state]} rows")
        if taken and len(core_state) != len(self.spec.core_state):
            raise ValueError(f"core_state: expected {len(self.spec.core_state)} leaves, got "
                             f"{len(core_state)}")
        core_state = tuple(_checked(f"core_state[{i}]", values, leaf, taken)
                           for i, (values, leaf) in enumerate(zip(core_state,
                                                                  self.spec.core_state)))
        agent_output = dict(agent_output)
        if action is not None:
            agent_output.setdefault("action", action)
        given = self.spec.leaves(prev_action, env_output.reward, env_output.done,
                                 env_output.observation, agent_output)
        step = {name: _checked(name, given[name], leaf, len(rows))
                for name, leaf in self.spec.step.items()}
        envs = rows[kept]
        if not len(envs):
            return []
        if len(np.unique(envs)) != len(envs):
            raise ValueError(f"a batch's envs must be distinct: {envs.tolist()}")
        position = self._fill[envs]
        for name, buffer in self._steps.items():
            buffer[envs, position] = step[name][kept]
        if taken:
            starting = rows[wanted]
            slot = self._fill[starting] // self._stride
            for buffer, leaf in zip(self._states, core_state):
                buffer[starting, slot] = leaf
        self._fill[envs] += 1
        done = envs[self._fill[envs] == self.length]
        return list(zip(done.tolist(), self._take(done))) if len(done) else []

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
        return [self.spec.unroll(tuple(s[i] for s in states),
                                 {name: leaves[i] for name, leaves in out.items()})
                for i in range(len(envs))]


def _buffer(lead: tuple, leaf: ArraySpec) -> np.ndarray:
    return np.zeros(lead + tuple(leaf.shape), np.dtype(leaf.dtype))


def _checked(name: str, values, leaf: ArraySpec, rows: int) -> np.ndarray:
    """``values`` as ``rows`` rows of ``leaf``: ValueError naming the leaf unless they are
    shaped so and of its dtype's kind."""
    a = np.asarray(values)
    if a.shape != (rows,) + tuple(leaf.shape) or a.dtype.kind != np.dtype(leaf.dtype).kind:
        raise ValueError(f"{name}: expected {rows} rows of {leaf.dtype} {tuple(leaf.shape)}, "
                         f"got {a.dtype.name} {a.shape}")
    return a


def _kept(rows: np.ndarray, skip) -> np.ndarray:
    """Bool mask: the rows whose env ``skip`` does not leave out."""
    if skip is None:
        return np.ones(len(rows), bool)
    return np.asarray([not skip(env) for env in rows.tolist()], bool)
