"""The optimizer a config names, shared by every agent."""

from __future__ import annotations

import keras


def make_optimizer(config):
    """The Keras optimizer ``config.optimizer`` names, with the config's hyper-parameters."""
    if config.optimizer == "adam":
        return keras.optimizers.Adam(learning_rate=config.learning_rate,
                                     beta_1=config.adam_beta1, epsilon=config.adam_epsilon)
    if config.optimizer == "rmsprop":
        return keras.optimizers.RMSprop(learning_rate=config.learning_rate, rho=config.rms_decay,
                                        momentum=config.rms_momentum,
                                        epsilon=config.rms_epsilon)
    raise ValueError(f"unknown optimizer {config.optimizer!r}: choose adam or rmsprop")
