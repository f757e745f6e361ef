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

    Returns (stacked observations ``[T, B, H, W, S*C]``, the stack after the last step).
    """
    steps = frames.shape[0]
    if steps is None:
        raise ValueError("stack_frames needs a static time dimension")
    stacked = []
    for t in range(steps):
        stack = push_frame(stack, frames[t], done[t])
        stacked.append(stack)
    return tf.stack(stacked, 0), stack
