"""The contract between an agent and the runtimes (SEED learner, IMPALA actor/learner).

An agent owns a network (:mod:`seed.networks.base`) and its optimizer, and is
an :class:`Agent`; its ``new_buffer()`` returns a :class:`Buffer`.

``infer`` is one batched policy step (SEED runs it on the learner for a batch
of envs from many actors; IMPALA runs it on each actor for its own envs). Its
``agent_output`` is stored in the unroll next to the env outputs, so the loss
can see what the behaviour policy did. ``env_ids`` let an agent vary
behaviour per env (R2D2's per-env epsilon) without the runtime knowing.

``train_step`` takes what it needs from the buffer (a FIFO batch for V-trace,
a prioritized sample for R2D2), applies one optimizer step and returns
metrics, among them ``env_steps_trained`` (T x batch). It returns None when
the buffer was closed.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
import tensorflow as tf


@runtime_checkable
class Buffer(Protocol):
    """Where the runtime puts complete unrolls and ``train_step`` takes them from."""

    capacity: int

    def put(self, unroll, timeout: float | None = None) -> bool:
        """Add an unroll, blocking up to ``timeout`` while full; False if it timed out."""

    def close(self) -> None:
        """Wake every waiter; a closed buffer makes ``train_step`` return None."""

    @property
    def closed(self) -> bool: ...

    def __len__(self) -> int: ...


@runtime_checkable
class Agent(Protocol):
    """What the runtimes ask of an agent. A Protocol rather than a base class: each agent
    builds its own networks, buffer and steps, and the runtimes need only this shape."""

    unroll_length: int  # T: an unroll holds T + 1 steps
    # Steps an unroll shares with the next one: 1, or R2D2's burn_in + 1, so every
    # transition gets a loss.
    unroll_overlap: int
    relu_columns: list[str]  # the dead_relu_* diagnostics its train_step reports

    def initial_state(self, batch_size: int) -> tuple[np.ndarray, ...]:
        """The network's core state for ``batch_size`` envs at the start of a run."""

    def infer(self, env_ids: np.ndarray, prev_action: np.ndarray, env_output,
              core_state: tuple[np.ndarray, ...],
              ) -> tuple[np.ndarray, dict[str, np.ndarray], tuple[np.ndarray, ...]]:
        """``(action int32 [B], agent_output {name: [B, ...]}, new_core_state)``."""

    def is_eval_env(self, env_id: int) -> bool:
        """An env that only evaluates: its episodes are logged apart and its steps never
        reach an unroll."""

    def new_buffer(self) -> Buffer:
        """The buffer its ``train_step`` learns from."""

    def train_step(self, buffer: Buffer) -> dict[str, float] | None:
        """One optimizer step; its metrics, or None once ``buffer`` is closed."""

    def set_progress(self, fraction: float) -> None:
        """The share of the frame budget spent (``frames / config.frames``), for a learning
        rate that decays with it; an agent without decay ignores it."""

    def parameters(self) -> list[tf.Variable]:
        """What IMPALA actors pull."""

    def checkpoint_state(self) -> dict[str, np.ndarray]:
        """Every variable a resume needs (network, optimizer), by name."""

    def restore_state(self, state: dict[str, np.ndarray]) -> None:
        """Assign a ``checkpoint_state()``; refuse one that does not fit this agent."""


def traced_once(fn, input_signature):
    """``fn`` traced once for ``input_signature``; call it with the same nest of arrays.

    Calls go straight to the one concrete function, each leaf converted to a
    tensor of its spec's dtype first. ``tf.function``'s own dispatch on nested
    NumPy arguments costs about 0.5 ms a call on a 2-core CPU, more than the
    whole forward pass of a small network: on the inference path, where SEED
    makes one call per batch and IMPALA one per actor step, that is pure
    overhead.
    """
    traced = tf.function(fn, input_signature=input_signature)
    concrete = traced.get_concrete_function()
    specs = tf.nest.flatten(input_signature)

    def call(*args):
        leaves = tf.nest.flatten(args)
        if len(leaves) != len(specs):
            raise ValueError(f"expected {len(specs)} input arrays, got {len(leaves)}")
        tensors = [tf.convert_to_tensor(np.asarray(x, spec.dtype.as_numpy_dtype))
                   for x, spec in zip(leaves, specs)]
        return concrete(*tf.nest.pack_sequence_as(args, tensors))

    call.tracing_count = traced.experimental_get_tracing_count
    return call


def _next_power_of_two(n):
    """Smallest power of two >= n (n >= 1), as an int32 tensor."""
    bits = tf.math.ceil(tf.math.log(tf.cast(n, tf.float64)) / np.log(2.0) - 1e-9)
    return tf.bitwise.left_shift(1, tf.cast(tf.maximum(bits, 0.0), tf.int32))


def xla_batch_buckets(fn):
    """``fn`` compiled with XLA, its inputs' batch axis padded to the next power of two.

    For use inside a traced function. XLA compiles once per input shape, and
    dynamic batching makes every size from 1 to the maximum batch occur; padding
    to powers of two bounds the compilations at log2(max batch) + 1, at the
    price of at most twice the rows on a partial batch. Padded rows are zeros
    and are cut from every output, so they never reach the caller. ``fn`` must
    treat rows independently (no statistics across the batch).
    """
    compiled = tf.function(fn, jit_compile=True)

    def call(*args):
        leaves = tf.nest.flatten(args)
        n = tf.shape(leaves[0])[0]
        extra = _next_power_of_two(n) - n

        def pad(x):
            return tf.pad(x, [[0, extra]] + [[0, 0]] * (x.shape.rank - 1))

        out = compiled(*tf.nest.map_structure(pad, args))
        return tf.nest.map_structure(lambda y: y[:n], out)

    return call
