"""The contract between an agent and the runtimes (SEED learner, IMPALA actor/learner).

An agent owns a network (:mod:`seed.networks.base`) and its optimizer, and is
an :class:`Agent`; its ``new_buffer()`` returns a :class:`Buffer`.
:class:`seed.agents.agent_base.AgentBase` is the scaffolding every agent here
shares; the runtimes know the Protocol alone.

``infer`` is one batched policy step (SEED runs it on the learner for a batch
of envs from many actors; IMPALA runs it on each actor for its own envs). The
agent keeps every env's recurrent core state itself, on the TensorFlow side
(:mod:`seed.agents.core_state_table`), so a step moves only observations and
actions between NumPy and TensorFlow; the runtimes read an env's state where an
unroll starts and reset it when the env's actor starts a new run. Its
``agent_output`` is stored in the unroll next to the env outputs, so the loss
can see what the behaviour policy did. ``env_ids`` let an agent vary
behaviour per env (R2D2's per-env epsilon) without the runtime knowing.

``train_step`` takes what it needs from the buffer (a FIFO batch for V-trace,
a prioritized sample for R2D2), applies one optimizer step and returns
metrics, among them ``env_steps_trained`` (T x batch). It returns None when
the buffer was closed: once closed, every buffer's puts and takes raise
:class:`seed.buffers.unroll_queue.QueueClosed`.
"""

from __future__ import annotations

import collections
import re
from typing import Protocol, runtime_checkable

import numpy as np
import tensorflow as tf

from seed.types import ArraySpec


@runtime_checkable
class Buffer(Protocol):
    """Where the runtime puts complete unrolls and ``train_step`` takes them from."""

    capacity: int

    def put(self, unroll, timeout: float | None = None) -> bool:
        """Add an unroll, blocking up to ``timeout`` while full; False if it timed out."""

    def close(self) -> None:
        """Wake every waiter; later puts and takes raise QueueClosed, and ``train_step``
        returns None."""

    @property
    def closed(self) -> bool: ...

    def __len__(self) -> int: ...


@runtime_checkable
class Agent(Protocol):
    """What the runtimes ask of an agent. A Protocol rather than a base class: the runtimes
    need only this shape (:class:`seed.agents.agent_base.AgentBase` gives most of it)."""

    unroll_length: int  # T: an unroll holds T + 1 steps
    # Steps an unroll shares with the next one: 1, or R2D2's burn_in + 1, so every
    # transition gets a loss.
    unroll_overlap: int
    relu_columns: list[str]  # the dead_relu_* diagnostics its train_step reports

    def initial_state(self, batch_size: int) -> tuple[np.ndarray, ...]:
        """The network's core state for ``batch_size`` envs at the start of a run."""

    def infer(self, env_ids: np.ndarray, prev_action: np.ndarray, env_output,
              ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """``(action int32 [B], agent_output {name: [B, ...]})`` for the distinct envs
        ``env_ids`` (in ``[0, config.num_envs)``); their core states, which the agent keeps,
        advance by this step."""

    def output_spec(self) -> dict[str, ArraySpec]:
        """What ``infer``'s ``agent_output`` holds for one env, ``'action'`` among it: name ->
        dtype and shape. An unroll carries each at every step (IMPALA sends it whole)."""

    def read_core_state(self, env_ids: np.ndarray) -> tuple[np.ndarray, ...]:
        """The core state the envs' next ``infer`` starts from (an unroll's first state)."""

    def reset_core_state(self, env_ids: np.ndarray) -> None:
        """Put the envs' core states back to ``initial_state`` (a new run of their actor)."""

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
        """The acting network's variables: what an IMPALA actor pulls to act as the learner
        does (no target network, optimizer state or core state)."""

    def checkpoint_state(self) -> dict[str, np.ndarray]:
        """Every variable a resume needs (network, optimizer), by name."""

    def restore_state(self, state: dict[str, np.ndarray]) -> None:
        """Assign a ``checkpoint_state()``; refuse one that does not fit this agent."""


class CheckpointMismatch(ValueError):
    """A checkpoint state that does not fit the agent; the message is one line."""


class NamedVariables:
    """An agent's checkpointed variables, each under a name that says what it is.

    :func:`module_variables` and :func:`optimizer_variables` give the names.
    ``state()`` is what ``checkpoint_state()`` returns; ``restore(state)`` refuses,
    before assigning anything, a state with a variable missing, extra or of another
    shape, naming them.
    """

    def __init__(self, variables: dict[str, tf.Variable]):
        self.variables = variables

    def state(self) -> dict[str, np.ndarray]:
        return {name: np.array(v.numpy()) for name, v in self.variables.items()}

    def restore(self, state: dict[str, np.ndarray]) -> None:
        missing = sorted(set(self.variables) - set(state))
        extra = sorted(set(state) - set(self.variables))
        misshaped = sorted(f"{name} {tuple(np.shape(state[name]))} (this agent: "
                           f"{tuple(v.shape)})" for name, v in self.variables.items()
                           if name in state and tuple(np.shape(state[name])) != tuple(v.shape))
        problems = [f"{what} {_first_few(names)}" for what, names in
                    (("missing", missing), ("unexpected", extra), ("mis-shaped", misshaped))
                    if names]
        if problems:
            raise CheckpointMismatch("checkpoint does not fit this agent: " + "; ".join(problems))
        for name, v in self.variables.items():
            v.assign(state[name])


def _first_few(names: list[str], n: int = 3) -> str:
    more = f" and {len(names) - n} more" if len(names) > n else ""
    return ", ".join(names[:n]) + more


def module_variables(prefix: str, module: tf.Module) -> dict[str, tf.Variable]:
    """``module``'s variables named ``prefix/<attribute path>``, e.g. ``network/_torso/0/w``:
    unique (unlike ``tf.Variable.name``: two layers may share a name) and the same in
    every process that builds the network from the same code and config."""
    paths = module._flatten(predicate=lambda x: isinstance(x, tf.Variable), with_path=True)
    return {"/".join([prefix, *map(str, path)]): v for path, v in paths}


def optimizer_variables(optimizer, parameters: dict[str, tf.Variable]) -> dict[str, tf.Variable]:
    """The optimizer's variables: a slot named after its parameter and its kind
    (``optimizer/network/_torso/0/w/momentum``), any other by its own name
    (``optimizer/iteration``).

    ``parameters`` are the named variables the optimizer was built on, in the order
    it was given them. Keras names the slot of kind ``k`` of a parameter
    ``<parameter name, '/' and ':' as '_'>_<k>`` and builds each kind for the
    parameters in order, which tells apart parameters that share a name.
    """
    owners: dict[str, list[str]] = {}  # slot name prefix -> parameters, in order
    for name, v in parameters.items():
        if v.trainable:
            owners.setdefault(re.sub("[/:]", "_", v.name), []).append(name)
    taken: collections.Counter = collections.Counter()
    out = {}
    for v in optimizer.variables:
        prefix = max((p for p in owners if v.name.startswith(p + "_")), key=len, default=None)
        if prefix is None:
            out[f"optimizer/{v.name}"] = v
            continue
        kind = v.name[len(prefix) + 1:]
        owner = owners[prefix][taken[prefix, kind]]
        taken[prefix, kind] += 1
        if tuple(v.shape) != tuple(parameters[owner].shape):
            raise RuntimeError(f"optimizer variable {v.name} is not shaped like {owner}, the "
                               "parameter its name points to: Keras's slot naming changed")
        out[f"optimizer/{owner}/{kind}"] = v
    return out


def traced_once(fn, input_signature):
    """``fn`` traced once for ``input_signature``; call it with the same nest of arrays.

    Calls go straight to the one concrete function, each leaf converted to a
    tensor of its spec's dtype first. ``tf.function``'s own dispatch on nested
    NumPy arguments costs about 0.5 ms a call on a 2-core CPU, more than the
    whole forward pass of a small network: on the inference path, where SEED
    makes one call per batch and IMPALA one per actor step, that is pure
    overhead. The train steps go through it too: ~1 ms a step of Pong's batch.
    """
    traced = tf.function(fn, input_signature=input_signature)
    specs = tf.nest.flatten(input_signature)
    concrete = []  # traced at the first call: a process that never calls it never traces

    def call(*args):
        leaves = tf.nest.flatten(args)
        if len(leaves) != len(specs):
            raise ValueError(f"expected {len(specs)} input arrays, got {len(leaves)}")
        tensors = [tf.convert_to_tensor(np.asarray(x, spec.dtype.as_numpy_dtype))
                   for x, spec in zip(leaves, specs)]
        if not concrete:
            concrete.append(traced.get_concrete_function())
        return concrete[0](*tf.nest.pack_sequence_as(args, tensors))

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
