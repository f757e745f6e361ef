"""The architectures a run can be (``--arch``): one entry each, the one place that says what
an architecture is made of.

An :class:`Architecture` holds its learner service class (a
:class:`~seed.runtime.service.LearnerService`), its actor loop, the agents it runs and its
transport defaults: how many streams its learner holds open, the gRPC threads that
follow, and the config rules of its own. ``seed train`` builds the learner from it,
``seed actor`` and the Ray launcher run its actor loop; :func:`architecture` looks one up
and :func:`validate` checks a config against it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from seed.config import Config, ConfigError
from seed.runtime.impala_arch import actor as impala_actor
from seed.runtime.impala_arch.learner import ImpalaLearnerService
from seed.runtime.seed_arch import actor as seed_actor
from seed.runtime.seed_arch import sizing
from seed.runtime.seed_arch.learner import SeedLearnerService
from seed.runtime.service import LearnerService


@dataclasses.dataclass(frozen=True)
class Architecture:
    """One architecture: what ``seed train``, ``seed actor`` and the Ray launcher need of it."""

    name: str  # as --arch and the Spec name it
    service: type[LearnerService]  # built as service(core) on the run's LearnerCore
    # run_actor(address, task, max_steps=0, log_interval_s=30.0, security=None) -> exit
    # code: one actor process's life, reconnecting until stopped
    run_actor: Callable[..., int]
    # The agents (config.agent) it runs; None: every one the learner's process knows (SEED
    # builds its agent there only, so an agent registered there runs too).
    agents: tuple[str, ...] | None
    max_streams: Callable[[Config], int]  # StreamSteps streams its learner holds open
    check_config: Callable[[Config], None]  # its own rules: ConfigError, one line

    def grpc_workers(self, config: Config) -> int:
        """Server threads (and concurrent calls): one per stream the learner holds, plus
        room for spec, unroll and parameter calls; beyond that, RESOURCE_EXHAUSTED."""
        return self.max_streams(config) + config.actors + 8


def _no_streams(config: Config) -> int:
    """IMPALA's actors make unary calls only: unrolls up, parameters down."""
    del config
    return 0


def _no_rules(config: Config) -> None:
    del config


ARCHITECTURES = {a.name: a for a in (
    Architecture("seed", SeedLearnerService, seed_actor.run_actor, agents=None,
                 max_streams=sizing.max_streams, check_config=sizing.check),
    Architecture("impala", ImpalaLearnerService, impala_actor.run_actor, agents=("vtrace",),
                 max_streams=_no_streams, check_config=_no_rules),
)}


def architecture(name: str, what: str = "--arch") -> Architecture:
    """The entry named ``name``; a ConfigError naming the choices for any other
    (``what``: where the name came from)."""
    try:
        return ARCHITECTURES[name]
    except KeyError:
        raise ConfigError(f"{what} must be {' or '.join(ARCHITECTURES)}, not {name!r}") from None


def validate(config: Config) -> Architecture:
    """Fail early, with one clear line, on a config that cannot work: the architecture's
    name, the checks every architecture shares (:meth:`Config.validate`), then the
    architecture's own. Returns the architecture."""
    arch = architecture(config.arch)
    config.validate()
    if arch.agents is not None and config.agent not in arch.agents:
        runs_it = [a.name for a in ARCHITECTURES.values()
                   if a.agents is None or config.agent in a.agents]
        raise ConfigError(f"the {config.agent} agent runs under --arch "
                          f"{' or '.join(runs_it)} only")
    arch.check_config(config)
    return arch
