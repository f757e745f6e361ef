"""The contract between an agent and the runtimes (SEED learner, IMPALA actor/learner).

An agent owns a network (:mod:`seed.networks.base`) and its optimizer, and offers::

    initial_state(batch_size) -> tuple of np.ndarray      # network core state
    infer(env_ids, prev_action, env_output, core_state)
        -> (action int32 [B], agent_output dict[str, np.ndarray [B, ...]], new_core_state)
    new_buffer() -> a buffer with put(unroll, timeout=None) -> bool, __len__, capacity
    train_step(buffer) -> dict[str, float] | None
    parameters() -> list[tf.Variable]    # what IMPALA actors pull, what checkpoints save
    checkpoint_state() -> dict[str, np.ndarray];  restore_state(dict)
    unroll_length: int          # T: an unroll holds T + 1 steps

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

import numpy as np
import tensorflow as tf

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
