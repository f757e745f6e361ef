import pytest

from seed.config import ConfigError, make_config
from seed.runtime.architectures import architecture, validate
from seed.runtime.seed_arch import transport as seed_transport


@pytest.mark.parametrize("actors,envs,splits,batch", [
    (2, 16, 2, 16),   # one half-actor group from each actor
    (2, 16, 1, 32),   # no splitting: every env
    (2, 5, 2, 6),     # uneven halves: the larger group (3) per actor
    (1, 1, 4, 1),     # more splits than envs: one env per group
])
def test_default_inference_batch_is_one_group_per_actor(actors, envs, splits, batch):
    c = make_config(actors=actors, envs_per_actor=envs, actor_splits=splits)
    validate(c)
    assert seed_transport.inference_batch_size(c) == batch


def test_impala_actors_never_split_and_explicit_batch_wins():
    impala = make_config(arch="impala", actors=2, envs_per_actor=8, actor_splits=4)
    assert architecture("impala").max_streams(impala) == 0  # unary calls only
    assert architecture("impala").grpc_workers(impala) == 2 + 8
    assert seed_transport.inference_batch_size(make_config(actors=2, envs_per_actor=8,
                                                           inference_batch_size=12)) == 12


def test_grpc_workers_cover_every_stream():
    c = make_config(actors=3, envs_per_actor=8, actor_splits=2)
    assert architecture("seed").grpc_workers(c) >= 3 * 2 + 3


@pytest.mark.parametrize("overrides,message", [
    ({"actor_splits": 0}, "actor_splits must be >= 1"),
    ({"envs_per_actor": 8, "actor_splits": 2, "inference_batch_size": 3},
     "smaller than one actor request"),
    ({"agent": "r2d2", "replay_ratio": -1.0}, "replay_ratio must be >= 0"),
    ({"agent": "r2d2", "replay_min_size": 0}, r"replay_min_size must be in \[1, replay_capacity"),
    ({"agent": "r2d2", "replay_min_size": 11, "replay_capacity": 10}, "got 11"),
])
def test_bad_split_and_replay_settings_fail_with_one_line(overrides, message):
    with pytest.raises(ConfigError, match=message):
        validate(make_config(**overrides))


@pytest.mark.parametrize("overrides,message", [
    ({"learning_rate": -1e-4}, "learning_rate must be >= 0"),
    ({"learning_rate": float("nan")}, "learning_rate must be >= 0"),
    ({"optimizer": "adam", "adam_epsilon": 0.0}, "adam_epsilon must be positive"),
    ({"optimizer": "rmsprop", "rms_epsilon": -0.01}, "rms_epsilon must be positive"),
    ({"optimizer": "sgd"}, "optimizer must be adam or rmsprop"),
    ({"loss_reduction": "median"}, "loss_reduction must be mean or sum"),
    ({"loss_reduction": "sum", "agent": "r2d2"}, "belongs to the vtrace agent"),
    ({"adam_beta1": 1.0}, "adam_beta1 must be in"),
    ({"rms_decay": 1.5}, "rms_decay must be in"),
    ({"grad_clip_norm": -1.0}, "grad_clip_norm must be >= 0"),
])
def test_optimizer_settings_that_cannot_be_right_name_the_field(overrides, message):
    with pytest.raises(ConfigError, match=message) as e:
        make_config(**overrides).validate()
    assert "\n" not in str(e.value)


def test_an_epsilon_the_optimizer_does_not_use_is_not_checked():
    make_config(optimizer="adam", rms_epsilon=0.0).validate()
