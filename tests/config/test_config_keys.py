"""seed.config's components: keys in three spellings, refusals that name the key, saved
configs of both forms (nested, and the flat one every earlier run wrote)."""

import json
from pathlib import Path

import pytest

from seed import config as config_lib
from seed.config import Config, ConfigError, R2D2Config, TransportConfig, VTraceConfig

REPO = Path(__file__).resolve().parents[2]


def test_plain_dotted_and_nested_keys_set_the_same_fields(tmp_path):
    plain = config_lib.make_config(entropy_cost=0.02, server="unix:/s", frames=10)
    dotted = config_lib.make_config(**{"vtrace.entropy_cost": 0.02, "transport.server": "unix:/s",
                                "frames": 10})
    path = tmp_path / "exp.yaml"
    path.write_text("frames: 10\ntransport:\n  server: unix:/s\nvtrace:\n  entropy_cost: 0.02\n")
    nested = config_lib.load(str(path), {"benchmark": ""})
    assert plain == dotted == nested
    assert plain.agent_config.entropy_cost == 0.02 and plain.transport.server == "unix:/s"
    assert type(plain.agent_config) is VTraceConfig


def test_a_run_holds_only_its_agents_settings():
    c = config_lib.make_config(agent="r2d2", burn_in=2, discounting=0.9)
    assert isinstance(c.agent_config, R2D2Config)
    assert (c.agent_config.burn_in, c.agent_config.discounting) == (2, 0.9)
    saved = c.to_json()
    assert "vtrace" not in saved and "agent_config" not in saved
    assert saved["r2d2"]["burn_in"] == 2
    with pytest.raises(ConfigError, match="takes a R2D2Config, not a VTraceConfig"):
        Config(agent="r2d2", agent_config=VTraceConfig())


@pytest.mark.parametrize("values,message", [
    ({"burn_in": 2}, "config key burn_in belongs to the r2d2 agent, but this run's agent is "
                     "vtrace"),
    ({"r2d2.burn_in": 2}, "config key r2d2.burn_in belongs to the r2d2 agent"),
    ({"agent": "r2d2", "loss_reduction": "sum"}, "loss_reduction belongs to the vtrace agent"),
    ({"bogus": 1}, "unknown config key bogus: no component has it "
                   r"\(run, transport, vtrace, r2d2\)"),
    ({"vtrace.server": "x"}, "vtrace has no field server .* server is in transport"),
    ({"radio.server": "x"}, "radio has no field server"),
    ({"agent": "dqn"}, r"bad value for agent: 'dqn' \(allowed: one of vtrace, r2d2\)"),
])
def test_a_key_no_component_of_the_run_has_is_refused_in_one_line(values, message):
    with pytest.raises(ConfigError, match=message) as e:
        config_lib.make_config(**values)
    assert "\n" not in str(e.value)


def test_flags_and_set_override_a_file_and_may_name_the_agent(tmp_path):
    path = tmp_path / "exp.yaml"
    path.write_text("agent: r2d2\nburn_in: 2\nunroll_length: 10\n")
    c = config_lib.load(str(path), {"burn_in": 3, "transport.server": "unix:/t", "seed": None})
    assert (c.agent, c.agent_config.burn_in, c.transport.server, c.benchmark) == (
        "r2d2", 3, "unix:/t", "exp")
    # The file's R2D2 keys are refused once a flag makes the run a V-trace one.
    with pytest.raises(ConfigError, match="burn_in belongs to the r2d2 agent"):
        config_lib.load(str(path), {"agent": "vtrace"})


def test_given_values_are_by_path():
    given = config_lib.given_values(None, {"entropy_cost": 0.1, "server": "s", "frames": 5,
                                           "actors": None})
    assert given == {"vtrace.entropy_cost": 0.1, "transport.server": "s", "frames": 5}


def test_saved_nested_config_reads_back_equal():
    c = config_lib.make_config(agent="r2d2", burn_in=2, unroll_length=10, inference_batch_size=4,
                        env_kwargs={"a": [1, 2]})
    saved = json.loads(json.dumps(c.to_json()))
    assert config_lib.from_saved(saved) == c


def _flat_saved(**changes):
    """A config.json "config" as every run before components wrote it: all fields flat."""
    values = {"env": "toy:catch", "arch": "seed", "agent": "vtrace", "frames": 1000,
              "server": "", "inference_batch_size": 0, "learning_rate": 1e-3,
              "entropy_cost": 0.01, "loss_reduction": "mean", "queue_capacity": 0,
              "burn_in": 0, "replay_capacity": 10_000, "eval_envs": 0, "discounting": 0.99}
    values.update(changes)
    return values


def test_an_old_flat_config_goes_to_its_parts_and_drops_the_unused_agents_fields():
    c = config_lib.from_saved(_flat_saved(entropy_cost=0.02, inference_batch_size=8,
                                          burn_in=7))
    assert c.agent_config.entropy_cost == 0.02 and c.transport.inference_batch_size == 8
    assert not hasattr(c.agent_config, "burn_in")  # burn_in=7 never applied to V-trace
    r = config_lib.from_saved(_flat_saved(agent="r2d2", burn_in=3, unroll_length=10,
                                          discounting=0.9, loss_reduction="sum"))
    assert (r.agent_config.burn_in, r.agent_config.discounting) == (3, 0.9)


def test_a_saved_field_this_version_does_not_know_is_refused_by_name():
    with pytest.raises(ConfigError, match="does not know: warp_drive"):
        config_lib.from_saved(_flat_saved(warp_drive=True))
    with pytest.raises(ConfigError, match="does not know: warp_drive"):
        config_lib.from_saved({**config_lib.make_config().to_json(), "warp_drive": True})


def test_every_committed_experiment_and_run_config_loads():
    for path in sorted((REPO / "experiments").glob("*.yaml")):
        config_lib.load(str(path)).validate()
    saved = sorted((REPO / "results").rglob("config.json"))
    assert saved, "no committed run directory found"
    for path in saved:
        data = json.loads(path.read_text())
        if "config" in data:
            config_lib.from_saved(data["config"])


def test_replaced_sets_any_spelling_and_changing_agent_resets_the_agent_part():
    c = config_lib.make_config(entropy_cost=0.5, server="s")
    d = config_lib.replaced(c, frames=7, **{"transport.server": "t"})
    assert (d.frames, d.transport.server, d.agent_config.entropy_cost) == (7, "t", 0.5)
    e = config_lib.replaced(c, agent="r2d2", burn_in=1)
    assert (type(e.agent_config), e.agent_config.burn_in, e.transport.server) == (
        R2D2Config, 1, "s")


def test_component_checks_run_from_validate():
    with pytest.raises(ConfigError, match="TLS needs both"):
        Config(transport=TransportConfig(tls_cert_file="c")).validate()
    with pytest.raises(ConfigError, match="burn_in .5. must be in .0, unroll_length .5.."):
        config_lib.make_config(agent="r2d2", burn_in=5, unroll_length=5).validate()
    with pytest.raises(ConfigError, match="eval_envs 8 must be in"):
        config_lib.make_config(agent="r2d2", eval_envs=8, actors=2, envs_per_actor=4).validate()


def test_a_seed_actor_reads_a_config_whose_agent_only_the_learner_knows():
    """An agent registered in the learner's process only: its settings are unknown here, and
    a SEED actor, which never builds the agent, reads the rest."""
    saved = config_lib.make_config(env="toy:catch", server="unix:/s", actors=3).to_json()
    saved["agent"] = "pg"
    saved["pg"] = saved.pop("vtrace")
    with pytest.raises(ConfigError, match="names an agent this process does not know: 'pg'"):
        config_lib.from_saved(saved)
    c = config_lib.from_saved(saved, unknown_agent_ok=True)
    assert (c.agent, c.agent_config, c.transport.server, c.actors) == ("pg", None, "unix:/s", 3)
