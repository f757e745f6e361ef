import pytest

from seed.config import ConfigError, make_config
from seed.runtime.architectures import architecture, validate
from seed.runtime.seed_arch import sizing


@pytest.mark.parametrize("actors,envs,splits,batch", [
    (2, 16, 2, 16),   # one half-actor group from each actor
    (2, 16, 1, 32),   # no splitting: every env
    (2, 5, 2, 6),     # uneven halves: the larger group (3) per actor
    (1, 1, 4, 1),     # more splits than envs: one env per group
])
def test_default_inference_batch_is_one_group_per_actor(actors, envs, splits, batch):
    c = make_config(actors=actors, envs_per_actor=envs, actor_splits=splits)
    validate(c)
    assert sizing.inference_batch_size(c) == batch


def test_impala_actors_never_split_and_explicit_batch_wins():
    impala = make_config(arch="impala", actors=2, envs_per_actor=8, actor_splits=4)
    assert architecture("impala").max_streams(impala) == 0  # unary calls only
    assert architecture("impala").grpc_workers(impala) == 2 + 8
    assert sizing.inference_batch_size(make_config(actors=2, envs_per_actor=8,
                                                           inference_batch_size=12)) == 12


def test_grpc_workers_cover_every_stream():
    c = make_config(actors=3, envs_per_actor=8, actor_splits=2)
    assert architecture("seed").grpc_workers(c) >= 3 * 2 + 3


@pytest.mark.parametrize("overrides,message", [
    ({"envs_per_actor": 8, "actor_splits": 2, "inference_batch_size": 3},
     "smaller than one actor request"),
    ({"agent": "r2d2", "replay_min_size": 11, "replay_capacity": 10},
     r"replay_min_size must be in \[1, replay_capacity \(10\)\], got 11"),
    ({"loss_reduction": "sum", "agent": "r2d2"}, "belongs to the vtrace agent"),
])
def test_bad_split_and_replay_settings_fail_with_one_line(overrides, message):
    with pytest.raises(ConfigError, match=message) as e:
        validate(make_config(**overrides))
    assert "\n" not in str(e.value)
