"""One checkpoint implementation for every agent (seed.agents.contract.NamedVariables): variables
by name, refusals that name what does not fit, and a resume that carries the optimizer state."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from seed.agents import make_agent
from seed.agents.contract import CheckpointMismatch
from seed.config import Config, make_config
from seed.networks import REGISTRY
from seed.runtime import checkpoint

AGENTS = ("vtrace", "r2d2")
PARAMETERS = {"vtrace": "network", "r2d2": "online"}  # where each agent's parameters live
OBS = spaces.Box(0.0, 1.0, (3,), np.float32)


def small_agent(name: str, hidden: int = 8, **fields):
    if name == "r2d2":
        fields.setdefault("burn_in", 1)
    config = make_config(agent=name, network="mlp",
                         network_kwargs={"hidden_sizes": (hidden,), "lstm_size": 4}, actors=1,
                         envs_per_actor=2, unroll_length=4, batch_size=2, **fields)
    return make_agent(config, OBS, spaces.Discrete(3))


def scramble(agent, seed: int) -> None:
    """Every checkpointed variable to its own random values (a mid-run agent, optimizer
    moments and step count included, without running one)."""
    rng = np.random.default_rng(seed)
    for v in agent._checkpointed.variables.values():
        dtype = v.numpy().dtype
        value = (rng.integers(1, 1000, v.shape) if np.issubdtype(dtype, np.integer)
                 else rng.normal(size=v.shape))
        v.assign(np.asarray(value, dtype))


@pytest.mark.parametrize("name", AGENTS)
def test_the_state_is_keyed_by_variable_name(name):
    agent = small_agent(name)
    state = agent.checkpoint_state()
    prefix = PARAMETERS[name]
    assert f"{prefix}/_torso/0/w" in state and f"{prefix}/_core/w" in state
    assert f"optimizer/{prefix}/_torso/0/w/momentum" in state
    assert f"optimizer/{prefix}/_torso/0/w/velocity" in state
    assert "optimizer/iteration" in state and "optimizer/learning_rate" in state
    # Each parameter appears once, and each has its Adam moments.
    parameters = [k for k in state if k.startswith(prefix + "/")]
    assert len(parameters) == len(agent.network.variables)
    for k in parameters:
        assert state[f"optimizer/{k}/momentum"].shape == state[k].shape
    if name == "r2d2":
        assert sorted(k.replace("target/", "online/", 1) for k in state
                      if k.startswith("target/")) == sorted(parameters)
    assert len(state) == len(agent._checkpointed.variables)


@pytest.mark.parametrize("name", AGENTS)
def test_round_trip_through_the_checkpoint_file_restores_the_optimizer(name, tmp_path):
    saved_agent = small_agent(name, seed=1)
    scramble(saved_agent, seed=2)
    counters = {"env_steps": 123, "learner_steps": 4}
    checkpoint.save(tmp_path, saved_agent.checkpoint_state(), counters)

    resumed = small_agent(name, seed=7)
    state, got_counters = checkpoint.load(tmp_path)
    resumed.restore_state(state)
    assert got_counters == counters
    want, got = saved_agent.checkpoint_state(), resumed.checkpoint_state()
    assert got.keys() == want.keys()
    for k in want:
        np.testing.assert_array_equal(got[k], want[k], err_msg=k)
    # Checked apart from the names: Keras's own list of optimizer variables, in its order.
    assert len(resumed.optimizer.variables) == len(saved_agent.optimizer.variables)
    for a, b in zip(saved_agent.optimizer.variables, resumed.optimizer.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=a.name)
    assert int(resumed.optimizer.iterations.numpy()) == int(
        saved_agent.optimizer.iterations.numpy()) > 0
    for a, b in zip(saved_agent.parameters(), resumed.parameters()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("name", AGENTS)
def test_a_state_that_does_not_fit_is_refused_naming_what_and_nothing_is_assigned(name):
    agent = small_agent(name)
    before = agent.checkpoint_state()
    prefix = PARAMETERS[name]

    wider = small_agent(name, hidden=16).checkpoint_state()
    with pytest.raises(CheckpointMismatch, match=rf"mis-shaped .*{prefix}/_torso/0/w \(3, 16\) "
                                                 r"\(this agent: \(3, 8\)\)") as refused:
        agent.restore_state(wider)
    assert "\n" not in str(refused.value)

    missing = dict(before)
    del missing[f"optimizer/{prefix}/_core/b/velocity"]
    with pytest.raises(CheckpointMismatch,
                       match=rf"missing optimizer/{prefix}/_core/b/velocity$"):
        agent.restore_state(missing)

    extra = dict(before, **{"network/_gone/w": np.zeros(2, np.float32)})
    with pytest.raises(CheckpointMismatch, match="unexpected network/_gone/w$"):
        agent.restore_state(extra)

    after = agent.checkpoint_state()
    for k in before:
        np.testing.assert_array_equal(after[k], before[k], err_msg=k)


def test_a_long_list_of_misfits_stays_one_line():
    agent = small_agent("vtrace")
    other = small_agent("r2d2").checkpoint_state()
    with pytest.raises(CheckpointMismatch) as refused:
        agent.restore_state(other)
    message = str(refused.value)
    assert "\n" not in message and " more" in message and len(message) < 600


NETWORKS = {  # an observation space each network takes
    "mlp": OBS,
    "nature_cnn": spaces.Box(0, 255, (84, 84, 1), np.uint8),
    "impala_resnet": spaces.Box(0, 255, (84, 84, 1), np.uint8),
    "football": spaces.Box(0, 255, (72, 96, 2), np.uint8),
    "dmlab": spaces.Box(0, 255, (72, 96, 3), np.uint8),
}


@pytest.mark.parametrize("optimizer", ["adam", "rmsprop"])
def test_every_network_names_each_optimizer_slot_after_its_own_parameter(optimizer):
    """Layers may share a ``tf.Variable`` name (the Nature CNN's two heads are both
    ``dense``); the slots still go to the right parameter, under distinct names."""
    assert set(NETWORKS) == set(REGISTRY)
    for network, obs in NETWORKS.items():
        config = make_config(agent="vtrace", network=network, optimizer=optimizer,
                             rms_momentum=0.5, actors=1, envs_per_actor=1)
        agent = make_agent(config, obs, spaces.Discrete(3))
        state = agent.checkpoint_state()
        parameters = [k for k in state if k.startswith("network/")]
        kinds = ("momentum", "velocity")
        for k in parameters:
            for kind in kinds:
                assert state[f"optimizer/{k}/{kind}"].shape == state[k].shape, (network, k)
        assert len(state) == len(parameters) * 3 + 2, network  # + iteration, learning_rate


def test_resuming_from_a_checkpoint_of_another_network_is_one_line(tmp_path):
    import json

    from seed.runtime.run import train
    config = make_config(env="toy:catch", network_kwargs={"hidden_sizes": (8,)}, actors=1,
                         envs_per_actor=2, progress=False)
    (tmp_path / "config.json").write_text(json.dumps({"config": config.to_json()}))
    other = make_agent(make_config(network_kwargs={"hidden_sizes": (5,)}),
                       spaces.Box(0.0, 1.0, (10, 5), np.float32), spaces.Discrete(3))
    checkpoint.save(tmp_path, other.checkpoint_state(), {"env_steps": 0})
    with pytest.raises(checkpoint.CheckpointError,
                       match=r"is not from the agent and network its config.json names "
                             r"\(checkpoint does not fit this agent: mis-shaped") as refused:
        train(Config(), resume_dir=str(tmp_path))
    assert "\n" not in str(refused.value)
