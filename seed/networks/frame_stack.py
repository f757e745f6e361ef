"""Frame stacking as part of a network's core state (pure TensorFlow functions).

Atari frames cross the wire one at a time; the network keeps, per env, the last
``stack_size`` frames in its core state as one tensor ``[B, H, W, stack_size * C]``
(oldest frame first, newest last, in the observation's own dtype, uint8 for
Atari). Pushing a frame drops the oldest one and appends the new one. Where
``done`` marks the frame as the first of an episode the stack is first cleared
to zeros, so the stacked observation is ``[0, ..., 0, frame]``: a stack never
holds frames of two episodes (upstream SEED's ``stack_frames`` does the same).
"""

from __future__ import annotations

import tensorflow as tf


def initial_frame_stack(batch_size, frame_shape, stack_size: int, dtype=tf.uint8):
    """Zeros ``[batch_size, H, W, stack_size * C]`` for frames of shape ``(H, W, C)``."""
    height, width, channels = (int(d) for d in frame_shape)
    return tf.zeros([batch_size, height, width, stack_size * channels], dtype)


def push_frame(stack, frame, done):
    """One step: ``stack`` [B, H, W, S*C], ``frame`` [B, H, W, C], ``done`` [B] -> new stack.

    The new stack is also the stacked observation of this step.
    """
    frame = tf.cast(frame, stack.dtype)
    channels = frame.shape[-1]
    mask = tf.reshape(tf.cast(done, tf.bool), [-1, 1, 1, 1])
    kept = tf.where(mask, tf.zeros_like(stack[..., channels:]), stack[..., channels:])
    return tf.concat([kept, frame], axis=-1)


def stack_frames(frames, stack, done):
    """Time-major: ``frames`` [T, B, H, W, C], ``stack`` [B, ...], ``done`` [T, B].

    Returns (stacked observations ``[T, B, H, W, S*C]``, the stack after the last step):
    what ``T`` calls of :func:`push_frame` give, computed for all steps at once. Slot ``l``
    steps back from step ``t`` holds frame ``t - l`` (from ``stack`` where ``t - l < 0``),
    zeroed where an episode started after it (``done`` at any of ``t - l + 1 .. t``).

    Over an unroll (``T > 1``) the ops are XLA-compiled into one kernel. Interleaving
    one-channel frames into the last axis is many small element-wise ops for TensorFlow's
    executor: on Pong's train step (batch 4, T = 21) on a 2-core CPU a loop of
    :func:`push_frame` took ~10 ms, these ops uncompiled ~4.6 ms, compiled ~2 ms (feeding
    frames already stacked costs ~1.3 ms of casting). Integer copies and masks only, so the
    result is bit-identical either way; the shapes of a train step are fixed, so it
    compiles once.
    """
    if frames.shape[0] is None:
        raise ValueError("stack_frames needs a static time dimension")
    if frames.shape[0] == 1:  # an inference step: one push is fewer ops
        stack = push_frame(stack, frames[0], done[0])
        return stack[None], stack
    return _stack_unroll(frames, stack, done)


@tf.function(jit_compile=True)
def _stack_unroll(frames, stack, done):
    """:func:`stack_frames` for ``T > 1``, as whole-unroll slices and masks."""
    steps = frames.shape[0]
    frames = tf.cast(frames, stack.dtype)
    channels = int(frames.shape[-1])
    size = int(stack.shape[-1]) // channels
    done = tf.cast(done, tf.bool)
    # The stack's frames, oldest first, then this unroll's: frame t sits at index size + t.
    history = tf.concat(
        [tf.stack(tf.split(stack, size, axis=-1), 0), frames], axis=0)
    not_done = tf.logical_not(done)
    slots = []
    kept = tf.ones_like(done)  # frame t - l survives: no episode start in t - l + 1 .. t
    for lag in range(size):  # slot `lag` steps back; the newest (lag 0) goes last
        if lag > 0:  # frame t - lag also needs no episode start at t - lag + 1
            kept = tf.logical_and(kept, _shift_in_true(not_done, lag - 1))
        frame = history[size - lag:size - lag + steps]
        mask = tf.reshape(kept, [steps, -1, 1, 1, 1])
        slots.append(frame * tf.cast(mask, frame.dtype))
    stacked = tf.concat(slots[::-1], axis=-1)
    return stacked, stacked[-1]


def _shift_in_true(x, shift: int):
    """``x`` [T, B] moved ``shift`` steps later in time, the first ``shift`` rows True
    (steps before the unroll: their episode starts are already in the stack)."""
    if shift == 0:
        return x
    steps = x.shape[0]
    return tf.concat([tf.ones([shift, tf.shape(x)[1]], tf.bool), x], axis=0)[:steps]
