"""Every config field's declared type and bounds refuse bad values in one line.

The bad values are derived from each field's declaration, for every field of every
component, so a field added tomorrow is covered by these tests the day it is added.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from seed import cli, networks
from seed.config import (AGENT_CONFIGS, Config, ConfigError, TransportConfig, from_saved, load,
                         make_config)
from seed.config import fields, reference
from seed.runtime.architectures import validate

ROOT = Path(__file__).resolve().parents[2]


def _components():
    """(component, class, how its keys are spelled, the agent a run needs for it)."""
    yield "run", Config, "{}", "vtrace"
    yield "transport", TransportConfig, "transport.{}", "vtrace"
    for agent, cls in AGENT_CONFIGS.items():
        yield agent, cls, agent + ".{}", agent


FIELDS = [(component, cls, spelling.format(name), name, hint, agent)
          for component, cls, spelling, agent in _components()
          for name, hint in fields.declared(cls).items()]


def _bad_values(hint) -> list:
    """Values the declaration must refuse, derived from it alone."""
    kind = fields.type_name(hint)
    if kind in ("integer", "number"):
        out = ["two", [1, 2], float("nan"), float("inf"), True, None]
        if kind == "integer":
            out.append(1.5)
        low, high = fields.bounds(hint)
        if low:
            value, inclusive = low
            out.append(value - 1 if inclusive else value)
            if value > 0:
                out.append(-1)
        if high:
            value, inclusive = high
            out.append(value + 1 if inclusive else value)
        return out
    if kind == "boolean":
        return ["maybe", 3, 0.5, [True], None]
    if kind == "name":
        return ["no-such-name", 1, ["a"], None]
    if kind == "text":
        return [["a"], {"a": 1}, True, None]
    assert kind == "mapping", kind
    return ["x", [1, 2], 3, None]


def _good_values(hint) -> list:
    """Values at the declared bounds (inclusive ones), which must be taken as they are."""
    return [b[0] for b in fields.bounds(hint) if b and b[1]]


def _shown(value) -> str:
    return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else (
        repr(value))


def test_every_number_is_bounded_and_every_field_has_a_type_the_checks_know():
    assert {c for c, *_ in FIELDS} >= {"run", "transport", "vtrace", "r2d2"}
    for component, _, key, _, hint, _ in FIELDS:
        kind = fields.type_name(hint)
        assert kind in ("integer", "number", "boolean", "name", "text", "mapping"), (key, kind)
        if kind in ("integer", "number"):
            assert fields.bounds(hint)[0] is not None, f"{key}: a number with no lower bound"


@pytest.mark.parametrize("component,cls,key,name,hint,agent",
                         FIELDS, ids=[f[2] for f in FIELDS])
def test_bad_values_derived_from_the_declaration_are_refused_in_one_line(
        component, cls, key, name, hint, agent):
    bad = _bad_values(hint)
    assert len(bad) >= 4
    for value in bad:
        with pytest.raises(ConfigError) as e:
            make_config(**{"agent": agent, key: value})
        message = str(e.value)
        assert message == (f"bad value for {key}: {_shown(value)} "
                           f"(allowed: {fields.allowed(hint)})"), (value, message)
        assert "\n" not in message
    for value in _good_values(hint):  # the bounds themselves, where inclusive, are taken
        config = make_config(**{"agent": agent, key: value})
        part = {"run": config, "transport": config.transport}.get(component,
                                                                  config.agent_config)
        assert getattr(part, name) == value


def test_allowed_is_written_from_the_bounds():
    assert fields.allowed(fields.Count) == "an integer >= 1"
    assert fields.allowed(fields.UnitInterval) == "a number in [0, 1]"
    assert fields.allowed(fields.BelowOne) == "a number in [0, 1)"
    assert fields.allowed(fields.Positive) == "a number > 0"
    assert fields.allowed(bool) == "true or false"
    assert fields.allowed(typing.Literal["adam", "rmsprop"]) == "one of adam, rmsprop"
    assert fields.allowed(fields.declared(Config)["seed"]) == "an integer in [0, 2^63)"


@pytest.mark.parametrize("value,read", [
    ("1e-3", 0.001),  # YAML 1.1 reads 1e-3 as a string
    (2, 2.0),
])
def test_values_are_read_as_declared(value, read):
    assert make_config(learning_rate=value).agent_config.learning_rate == read


def test_counts_given_as_whole_floats_become_integers_and_ports_text():
    config = make_config(frames=2e6, server=50051, jit_inference="true")
    assert (config.frames, config.transport.server, config.jit_inference) == (
        2_000_000, "50051", True)
    assert type(config.frames) is int


def test_a_bad_value_in_a_yaml_file_or_a_saved_config_is_refused(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("env: toy:catch\njit_inference: maybe\n")
    with pytest.raises(ConfigError, match="^bad value for jit_inference: 'maybe'"):
        load(str(path))
    saved = make_config().to_json()
    saved["vtrace"]["discounting"] = 2
    with pytest.raises(ConfigError, match=r"^bad value for vtrace.discounting: 2 \("):
        from_saved(saved)
    flat = {k: v for k, v in saved.items() if k not in ("transport", "vtrace")}
    with pytest.raises(ConfigError, match="^bad value for seed: -1"):
        from_saved({**flat, "seed": -1})


def test_a_flag_reads_its_value_as_the_field_declares_it():
    parser = cli.build_parser()
    args = parser.parse_args(["train", "--actors", "3", "--learning-rate", "1e-3",
                              "--server", "50051"])
    assert (args.actors, args.learning_rate, args.server) == (3, 0.001, "50051")


def _train(tmp_path, capsys, *args) -> tuple[int, str]:
    """``seed train`` in this process; (exit code, stderr)."""
    argv = ["train", "--env", "toy:catch", "--frames", "2000", "--logdir",
            str(tmp_path / "run"), "--no-progress", *args]
    try:
        code = cli.main(argv)
    except SystemExit as e:  # argparse
        code = e.code
    return code, capsys.readouterr().err


@pytest.mark.parametrize("setting,message", [
    ("actors=two", "bad value for actors: 'two' (allowed: an integer >= 1)"),
    ("network=foo", "bad value for network: 'foo' (allowed: one of "),
    ("max_abs_reward=nan", "bad value for vtrace.max_abs_reward: 'nan' (allowed: a number >= 0)"),
    ("entropy_cost=[1,2]", "bad value for vtrace.entropy_cost: [1, 2] (allowed: a number >= 0)"),
    ("discounting=2", "bad value for vtrace.discounting: 2 (allowed: a number in [0, 1])"),
    ("batch_size=1.5", "bad value for batch_size: 1.5 (allowed: an integer >= 1)"),
    ("jit_inference=maybe", "bad value for jit_inference: 'maybe' (allowed: true or false)"),
    ("lr_decay_to_zero=3", "bad value for vtrace.lr_decay_to_zero: 3 (allowed: true or false)"),
    ("transport.inference_timeout_ms=-1",
     "bad value for transport.inference_timeout_ms: -1 (allowed: a number > 0)"),
    ("seed=-1", "bad value for seed: -1 (allowed: an integer in [0, 2^63))"),
    ("seconds=-1", "bad value for seconds: -1 (allowed: a number >= 0)"),
    ("unroll_length=0", "bad value for unroll_length: 0 (allowed: an integer >= 1)"),
    ("envs_per_actor=-1", "bad value for envs_per_actor: -1 (allowed: an integer >= 1)"),
])
def test_the_issues_cases_are_refused_by_seed_train_in_one_line(tmp_path, capsys, setting,
                                                                 message):
    code, err = _train(tmp_path, capsys, "--set", setting)
    assert code == 2
    assert err.startswith(f"seed: error: {message}")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "run").exists()


def test_a_bad_flag_is_one_line_too(tmp_path, capsys):
    code, err = _train(tmp_path, capsys, "--actors", "two")
    assert code == 2
    assert err == ("seed train: error: argument --actors: bad value for actors: 'two' "
                   "(allowed: an integer >= 1)\n")
    code, err = _train(tmp_path, capsys, "--agent", "r2d2", "--learning-rate", "-1")
    assert code == 2  # every agent's field: named plainly, whichever agent runs
    assert err == ("seed train: error: argument --learning-rate: bad value for learning_rate: "
                   "'-1' (allowed: a number >= 0)\n")
    assert not (tmp_path / "run").exists()


def _cli_sample() -> list[tuple[str, list[str], object]]:
    """The last numeric field of each component, with its first derived bad value:
    (key, agent flags, value)."""
    out = []
    for component, cls, spelling, agent in _components():
        name, hint = [(n, h) for n, h in fields.declared(cls).items()
                      if fields.type_name(h) in ("integer", "number")][-1]
        out.append((spelling.format(name), ["--agent", agent], _bad_values(hint)[0]))
    return out


@pytest.mark.parametrize("key,agent_flags,value", _cli_sample(),
                         ids=[k for k, _, _ in _cli_sample()])
def test_a_bad_value_of_each_component_is_refused_by_the_command_line(tmp_path, key,
                                                                      agent_flags, value):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "seed.cli", "train", "--env", "toy:catch", "--frames", "2000",
         *agent_flags, "--set", f"{key}={value}", "--no-progress"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.startswith(f"seed: error: bad value for {key}: ")
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert list(tmp_path.iterdir()) == []  # no results/ run directory, nothing written


# -- rules between fields ------------------------------------------------------------------

@pytest.mark.parametrize("values,message", [
    ({"queue_capacity": 2, "batch_size": 8},
     "queue_capacity 2 is smaller than batch_size 8"),
    ({"network": "dmlab"}, "network dmlab reads frames, but toy:catch gives features"),
    ({"env": "atari:Pong", "network": "mlp"},
     "network mlp reads features, but atari:Pong gives frames ([H, W, C] images): use "
     "network nature_cnn, impala_resnet, dmlab"),
    ({"env": "football:academy_empty_goal_close", "network": "nature_cnn"},
     "but football:academy_empty_goal_close gives planes"),
    ({"inference_batch_size": 9}, "larger than the 8 envs"),
    ({"agent": "r2d2", "arch": "impala"}, "the r2d2 agent runs under --arch seed only"),
    ({"frames": 0}, "give a budget"),
])
def test_rules_between_fields_refuse_in_one_line_before_the_run_starts(tmp_path, capsys,
                                                                       values, message):
    with pytest.raises(ConfigError) as e:
        validate(make_config(**values))
    assert message in str(e.value) and "\n" not in str(e.value)
    args = [a for k, v in values.items() for a in ("--set", f"{k}={v}")]
    code, err = _train(tmp_path, capsys, *args)
    assert (code, err.count("\n")) == (2, 1) and message in err, err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("env,network", [
    ("toy:catch", "mlp"), ("toy:cartpole", "mlp"), ("atari:Pong", "nature_cnn"),
    ("atari:Pong", "impala_resnet"), ("dmlab:rooms_watermaze", "dmlab"),
    ("dmlab:rooms_watermaze", "impala_resnet"), ("football:academy_empty_goal_close", "football"),
])
def test_networks_run_on_the_observations_they_are_made_for(env, network):
    make_config(env=env, network=network).validate()


def test_a_football_state_vector_goes_to_the_mlp():
    values = {"env": "football:academy_empty_goal_close",
              "env_kwargs": {"representation": "simple115v2"}}
    make_config(network="mlp", **values).validate()
    with pytest.raises(ConfigError, match="use network mlp"):
        make_config(network="football", **values).validate()


def test_every_network_says_what_it_reads():
    import envs
    assert set(networks.OBSERVATIONS) == set(networks.REGISTRY)
    assert set(networks.OBSERVATIONS.values()) <= set(envs.OBSERVATION_KINDS)


def test_queue_capacity_zero_means_twice_the_batch_and_passes():
    make_config(queue_capacity=0, batch_size=8).validate()
    make_config(queue_capacity=8, batch_size=8).validate()


def test_a_resumed_run_whose_saved_config_has_a_bad_value_is_refused(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    saved = make_config().to_json()
    saved["transport"]["actor_splits"] = 0
    (run / "config.json").write_text(json.dumps({"config": saved}))
    before = sorted(p.name for p in run.iterdir())
    try:
        code = cli.main(["train", "--resume", str(run), "--no-progress"])
    except SystemExit as e:
        code = e.code
    err = capsys.readouterr().err
    assert code == 2 and err == ("seed: error: bad value for transport.actor_splits: 0 "
                                 "(allowed: an integer >= 1)\n")
    assert sorted(p.name for p in run.iterdir()) == before  # nothing written


# -- the reference in --help and docs/design.md ---------------------------------------------

def test_train_help_lists_every_field_with_its_bounds_and_default(capsys):
    with pytest.raises(SystemExit):
        cli.main(["train", "--help"])
    out = capsys.readouterr().out
    assert reference.help_text() in out
    keys = out[out.index("config keys ("):]
    for _, _, key, name, hint, _ in FIELDS:
        line = next(line for line in keys.splitlines() if line.split()[:1] == [name])
        assert fields.allowed(hint) in line and "; default " in line, line
    assert "--actors ACTORS       actor processes (an integer >= 1)" in out


def test_the_config_reference_in_the_design_doc_is_the_generated_one():
    doc = (ROOT / "docs" / "design.md").read_text()
    assert reference.docs_with_table(doc) == doc, (
        "docs/design.md's config reference is stale: python -m seed.config.reference "
        "docs/design.md")
    table = doc[doc.index(reference.BEGIN):doc.index(reference.END)]
    for _, _, key, name, hint, _ in FIELDS:
        assert f"| `{name}` |" in table
    assert "| `discounting` | vtrace | number | in [0, 1] | `0.99` |" in table
