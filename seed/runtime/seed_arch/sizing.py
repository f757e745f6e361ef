"""SEED's data path sized from a run's config: an actor's env groups (each its own stream),
the inference batch, and the streams the learner holds open. (The settings themselves are
``config.transport``; the wire is :mod:`seed.transport`.)

The SEED entry of :mod:`seed.runtime.architectures` holds them; the SEED learner service
and actor read them here, as do the benchmarks that size SEED's side of a comparison.
"""

from __future__ import annotations

from seed.config import Config, ConfigError


def actor_splits(config: Config) -> int:
    """Env groups per actor, each with its own StreamSteps call and a request in flight."""
    return max(1, min(config.transport.actor_splits, config.envs_per_actor))


def inference_batch_size(config: Config) -> int:
    """Rows per inference batch: by default one request from every actor stream in flight.

    With ``actor_splits`` groups per actor, half (or a third...) of every actor's envs
    wait on the learner at any time, so a batch of all envs would never fill.
    """
    if config.transport.inference_batch_size:
        return config.transport.inference_batch_size
    return config.actors * -(-config.envs_per_actor // actor_splits(config))


def serve_runs_in_lockstep(config: Config) -> bool:
    """One stream per actor and one inference batch of every env: SEED's inference,
    simulation and data path then take turns, which ``seed roofline`` bounds
    (``seed_lockstep_serve``, seed/bench/roofline.py)."""
    return actor_splits(config) == 1 and inference_batch_size(config) == config.num_envs


def max_streams(config: Config) -> int:
    """Streams the learner holds open at once: every actor's, as many again for actors
    that reconnect while their old streams linger, and a few more."""
    return 2 * config.actors * actor_splits(config) + 4


def check(config: Config) -> None:
    """ConfigError (one line) for an inference batch that one actor request overfills."""
    group = -(-config.envs_per_actor // actor_splits(config))
    batch = config.transport.inference_batch_size
    if 0 < batch < group:
        raise ConfigError(
            f"inference batch size {batch} is smaller than one actor "
            f"request ({group} envs: {config.envs_per_actor} envs in "
            f"{actor_splits(config)} splits)")
