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
