"""A resumed run's config: the saved one, with exactly the fields the user gave."""

import json

import pytest

from seed.config import Config, ConfigError, from_saved
from seed.runtime.run import resumed_config


def _saved_run(tmp_path, **fields):
    config = Config(env="toy:catch", **fields)
    (tmp_path / "config.json").write_text(json.dumps({"config": config.to_json()}))
    return config


def test_a_field_given_explicitly_wins_even_when_it_is_the_default(tmp_path):
    default_lr = Config().learning_rate
    _saved_run(tmp_path, learning_rate=default_lr * 3, frames=1000)
    config, changed = resumed_config(tmp_path, {"learning_rate": default_lr, "frames": 5000})
    assert config.learning_rate == default_lr  # the old rule ignored a default-valued flag
    assert config.frames == 5000
    assert changed == {"learning_rate": (default_lr * 3, default_lr), "frames": (1000, 5000)}


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
    with pytest.raises(ConfigError, match="unknown config field.*unroll_lenght"):
        resumed_config(tmp_path, {"unroll_lenght": 5})


def test_a_saved_field_this_version_does_not_know_is_refused_not_dropped():
    values = {**Config().to_json(), "retired_knob": 3}
    with pytest.raises(ConfigError, match="does not know: retired_knob"):
        from_saved(values)
    assert from_saved(Config(seed=4).to_json()).seed == 4


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
