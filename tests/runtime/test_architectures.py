"""The architecture registry: one entry per --arch, looked up by name, checked by config."""

import pytest

from seed.config import ConfigError, make_config
from seed.runtime.architectures import ARCHITECTURES, architecture, validate
from seed.runtime.impala_arch import actor as impala_actor
from seed.runtime.impala_arch.learner import ImpalaLearnerService
from seed.runtime.seed_arch import actor as seed_actor
from seed.runtime.seed_arch.learner import SeedLearnerService


def test_each_architecture_names_its_service_and_actor_loop():
    assert list(ARCHITECTURES) == ["seed", "impala"]
    seed, impala = architecture("seed"), architecture("impala")
    assert (seed.service, seed.run_actor) == (SeedLearnerService, seed_actor.run_actor)
    assert (impala.service, impala.run_actor) == (ImpalaLearnerService, impala_actor.run_actor)
    assert seed.agents is None and impala.agents == ("vtrace",)  # SEED: any the learner knows


@pytest.mark.parametrize("name,what,message", [
    ("a3c", "--arch", "--arch must be seed or impala, not 'a3c'"),
    ("", "the learner's architecture", "the learner's architecture must be seed or impala, "
                                       "not ''"),
])
def test_an_unknown_architecture_is_refused_naming_the_choices(name, what, message):
    with pytest.raises(ConfigError) as e:
        architecture(name, what=what)
    assert str(e.value) == message


def test_validate_checks_the_config_then_the_architectures_own_rules():
    with pytest.raises(ConfigError, match="give a budget"):
        validate(make_config(arch="impala", frames=0))
    with pytest.raises(ConfigError, match="the r2d2 agent runs under --arch seed only"):
        validate(make_config(arch="impala", agent="r2d2"))
    split = dict(envs_per_actor=8, actor_splits=2, inference_batch_size=3)
    with pytest.raises(ConfigError, match="smaller than one actor request"):
        validate(make_config(arch="seed", **split))
    assert validate(make_config(arch="impala", **split)) is architecture("impala")  # no batches
    assert validate(make_config(arch="seed", agent="r2d2")) is architecture("seed")


@pytest.mark.parametrize("actors,envs,splits,seed_workers", [
    (2, 4, 1, 2 * 2 + 4 + 2 + 8),
    (3, 8, 2, 2 * 3 * 2 + 4 + 3 + 8),
    (1, 1, 4, 2 * 1 * 1 + 4 + 1 + 8),  # more splits than envs: one env per group
])
def test_transport_defaults(actors, envs, splits, seed_workers):
    """SEED holds twice every actor's streams and a few more, with a gRPC thread each plus
    room for unary calls; IMPALA holds no stream."""
    config = make_config(actors=actors, envs_per_actor=envs, actor_splits=splits)
    assert architecture("seed").grpc_workers(config) == seed_workers
    assert architecture("impala").max_streams(config) == 0
    assert architecture("impala").grpc_workers(config) == actors + 8

