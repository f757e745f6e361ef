"""The optimizer a config names, shared by every agent."""

from __future__ import annotations

import keras
import tensorflow as tf


def make_optimizer(config):
    """The Keras optimizer ``config.optimizer`` names, with its hyper-parameters; ``config``
    is an agent's settings (:class:`seed.config.agents.OptimizerSettings`)."""
    if config.optimizer == "adam":
        return keras.optimizers.Adam(learning_rate=float(config.learning_rate),
                                     beta_1=config.adam_beta1, epsilon=config.adam_epsilon)
    if config.optimizer == "rmsprop":
        return keras.optimizers.RMSprop(learning_rate=float(config.learning_rate), rho=config.rms_decay,
                                        momentum=config.rms_momentum,
                                        epsilon=config.rms_epsilon)
    raise ValueError(f"unknown optimizer {config.optimizer!r}: choose adam or rmsprop")


def clipped_gradients(grads, clip_norm: float):
    """``(grads, norm)``: ``grads`` scaled to a global norm of at most ``clip_norm`` (0: as
    they are), and their global norm before clipping."""
    norm = tf.linalg.global_norm(grads)
    if clip_norm > 0:
        grads, _ = tf.clip_by_global_norm(grads, clip_norm, use_norm=norm)
    return grads, norm
