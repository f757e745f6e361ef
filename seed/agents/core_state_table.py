"""Every env's recurrent core state, kept in TensorFlow variables, one row per env id.

An agent's ``infer`` reads the rows of its batch's envs, runs the network and writes the
new state back, all inside one traced call: the state never crosses into NumPy on the
inference path, only observations and actions do (upstream SEED keeps its agent states
the same way, in an ``Aggregator`` indexed by env id). A Pong env's frame stack is 28 KB;
at batch 32 the old path copied ~0.9 MB into TensorFlow and back on every call, and the
learner gathered and scattered it in NumPy around it.

The state is not a parameter and not checkpointed: an actor that reconnects (after a
resume too) starts a new run, and ``reset`` puts its envs back to the initial state.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from seed.agents.contract import traced_once


class CoreStateTable:
    """``num_envs`` rows of ``initial_state(1)``'s nest, as non-trainable variables."""

    def __init__(self, num_envs: int, initial_state):
        if num_envs < 1:
            raise ValueError(f"a core state table needs at least one env, got {num_envs}")
        self.num_envs = int(num_envs)
        self._initial_rows = tuple(tf.convert_to_tensor(s)[0] for s in initial_state(1))
        self.variables = tuple(
            tf.Variable(tf.repeat(row[None], self.num_envs, axis=0), trainable=False,
                        name=f"core_state_{i}")
            for i, row in enumerate(self._initial_rows))
        ids = [tf.TensorSpec([None], tf.int32)]
        self._host_read = traced_once(self.read, ids)
        self._host_reset = traced_once(self.reset, ids)

    def read(self, env_ids):
        """The rows of ``env_ids`` [B]: a tuple of ``[B, ...]`` tensors."""
        return tuple(tf.gather(v, env_ids) for v in self.variables)

    def write(self, env_ids, rows) -> None:
        """Replace the rows of ``env_ids`` (distinct) by ``rows``, a nest of ``[B, ...]``."""
        for v, new in zip(self.variables, tf.nest.flatten(rows)):
            v.scatter_update(tf.IndexedSlices(tf.cast(new, v.dtype), env_ids))

    def reset(self, env_ids) -> None:
        """Put the rows of ``env_ids`` back to the initial state."""
        n = tf.shape(env_ids)[0]
        self.write(env_ids, tuple(
            tf.repeat(row[None], n, axis=0) for row in self._initial_rows))

    # -- from the host, outside a traced step ---------------------------------------------

    def host_read(self, env_ids) -> tuple[np.ndarray, ...]:
        """The rows of ``env_ids`` as NumPy arrays (for an unroll's first state)."""
        return tuple(t.numpy() for t in self._host_read(env_ids))

    def host_reset(self, env_ids) -> None:
        """:meth:`reset`, called from the host (an actor's new run)."""
        self._host_reset(env_ids)
