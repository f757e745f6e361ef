"""A resumed run's config: the saved one, with exactly the fields the user gave."""

import json

import pytest

from seed.config import ConfigError, VTraceConfig, from_saved, make_config
from seed.runtime.run import resumed_config


def _saved_run(tmp_path, **fields):
    config = make_config(env="toy:catch", **fields)
    (tmp_path / "config.json").write_text(json.dumps({"config": config.to_json()}))
    return config


def test_a_field_given_explicitly_wins_even_when_it_is_the_default(tmp_path):
    default_lr = VTraceConfig().learning_rate
    _saved_run(tmp_path, learning_rate=default_lr * 3, frames=1000)
    config, changed = resumed_config(tmp_path, {"learning_rate": default_lr, "frames": 5000})
    # The old rule ignored a flag at its default value.
    assert config.agent_config.learning_rate == default_lr
    assert config.frames == 5000
    assert changed == {"vtrace.learning_rate": (default_lr * 3, default_lr),
                       "frames": (1000, 5000)}


def test_a_given_key_of_any_spelling_and_a_key_of_another_agent(tmp_path):
    _saved_run(tmp_path, inference_batch_size=4)
    config, changed = resumed_config(tmp_path, {"transport.inference_batch_size": 8})
    assert config.transport.inference_batch_size == 8
    assert changed == {"transport.inference_batch_size": (4, 8)}
    with pytest.raises(ConfigError, match="burn_in belongs to the r2d2 agent"):
        resumed_config(tmp_path, {"burn_in": 2})


def test_fields_not_given_keep_the_saved_values(tmp_path):
    saved = _saved_run(tmp_path, learning_rate=0.123, seed=7, unroll_length=9)
    config, changed = resumed_config(tmp_path, {"progress": saved.progress})
    assert changed == {}
    assert config.to_json() == {**saved.to_json(), "logdir": str(tmp_path)}


def test_the_run_directory_is_the_logdir_whatever_was_given(tmp_path):
    _saved_run(tmp_path, logdir="/somewhere/else")
    config, changed = resumed_config(tmp_path, {"logdir": "/yet/another"})
    assert config.logdir == str(tmp_path) and changed == {}


def test_an_unknown_given_field_is_refused_by_name(tmp_path):
    _saved_run(tmp_path)
    with pytest.raises(ConfigError, match="unknown config key unroll_lenght"):
        resumed_config(tmp_path, {"unroll_lenght": 5})


def test_a_saved_field_this_version_does_not_know_is_refused_not_dropped():
    values = {**make_config().to_json(), "retired_knob": 3}
    with pytest.raises(ConfigError, match="does not know: retired_knob"):
        from_saved(values)
    values = make_config().to_json()
    values["transport"]["retired_knob"] = 3
    with pytest.raises(ConfigError, match="does not know: transport.retired_knob"):
        from_saved(values)
    assert from_saved(make_config(seed=4).to_json()).seed == 4


def test_a_missing_or_damaged_config_json_is_one_line(tmp_path):
    with pytest.raises(ConfigError) as e:
        resumed_config(tmp_path, {})
    assert str(e.value) == (f"cannot resume {tmp_path}: {tmp_path}/config.json: missing (not a "
                            "run directory, or the run never started)")
    (tmp_path / "config.json").write_text('{"config": ')
    with pytest.raises(ConfigError, match=r"config.json: not valid JSON"):
        resumed_config(tmp_path, {})
    (tmp_path / "config.json").write_text('{"env": "toy:catch"}')
    with pytest.raises(ConfigError, match=r"config.json: has no 'config' mapping"):
        resumed_config(tmp_path, {})


@pytest.mark.parametrize("given,message", [
    ({"env": "dmlab:explore_goal_locations_small"},
     "under env 'dmlab:explore_goal_locations_small': it was trained with env "
     "'dmlab:seekavoid_arena_01'"),
    ({"network": "mlp"}, "under network 'mlp': it was trained with network 'dmlab'"),
    ({"network_kwargs": {"lstm_size": 128}}, "it was trained with network_kwargs {'lstm_size': 256"),
    ({"env_kwargs": {"width": 48, "height": 36}}, "under env_kwargs"),
])
def test_a_resume_under_another_level_or_network_is_refused_naming_both(tmp_path, given,
                                                                         message):
    _saved_run_with(tmp_path, env="dmlab:seekavoid_arena_01", network="dmlab",
                    network_kwargs={"lstm_size": 256, "fc_size": 256},
                    env_kwargs={"width": 96, "height": 72})
    with pytest.raises(ConfigError, match=message.replace("{", r"\{").replace("[", r"\[")):
        resumed_config(tmp_path, given)
    # The same values as saved are no change, and resume as before.
    config, changed = resumed_config(tmp_path, {"network": "dmlab", "frames": 10})
    assert changed == {"frames": (100000, 10)} and config.network == "dmlab"


def _saved_run_with(tmp_path, **fields):
    config = make_config(frames=100000, **fields)
    (tmp_path / "config.json").write_text(json.dumps({"config": config.to_json()}))
    return config
