import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from seed.agents import diagnostics, make_agent
from seed.agents.vtrace_agent import VTraceAgent
from seed.config import make_config
from seed.types import EnvOutput, Unroll

from tests.support.bandit import run_bandit

OBS = gym.spaces.Box(0, 255, (3, 2), np.uint8)
ACT = gym.spaces.Discrete(4)


def _config(**kw):
    base = dict(agent="vtrace", network="mlp", network_kwargs={"hidden_sizes": (16,)},
                unroll_length=5, batch_size=3, learning_rate=1e-2)
    base.update(kw)
    return make_config(**base)


def _synthetic_unroll(agent, rng, T):
    """One env's unroll of T + 1 steps produced by the agent's own infer."""
    steps = []
    agent.reset_core_state(np.array([0]))
    core_state = tuple(s[0] for s in agent.read_core_state(np.array([0])))
    prev_action = np.zeros(1, np.int32)
    for t in range(T + 1):
        env_output = EnvOutput(rng.normal(size=1).astype(np.float32),
                               np.array([t == 0 or rng.random() < 0.2]),
                               rng.integers(0, 256, (1,) + OBS.shape).astype(np.uint8))
        action, agent_output = agent.infer(np.array([0]), prev_action, env_output)
        steps.append((prev_action[0], env_output, agent_output))
        prev_action = action
    return Unroll(
        core_state=core_state,
        prev_action=np.array([s[0] for s in steps], np.int32),
        env_output=EnvOutput(*(np.stack([s[1][i][0] for s in steps]) for i in range(3))),
        agent_output={k: np.stack([s[2][k][0] for s in steps]) for k in steps[0][2]})


@pytest.mark.parametrize("lstm_size", [0, 8])
def test_infer_shapes_and_dtypes(lstm_size):
    agent = VTraceAgent(_config(network_kwargs={"hidden_sizes": (16,), "lstm_size": lstm_size}),
                        OBS, ACT)
    rng = np.random.default_rng(0)
    for B in (1, 5):  # different batch sizes, same function
        state = agent.initial_state(B)
        assert all(isinstance(s, np.ndarray) for s in state)
        env_output = EnvOutput(np.zeros(B, np.float32), np.ones(B, bool),
                               rng.integers(0, 256, (B,) + OBS.shape).astype(np.uint8))
        action, out = agent.infer(np.arange(B), np.zeros(B, np.int32), env_output)
        new_state = agent.read_core_state(np.arange(B))
        assert action.dtype == np.int32 and action.shape == (B,)
        assert np.all((action >= 0) & (action < ACT.n))
        np.testing.assert_array_equal(out["action"], action)
        assert out["policy_logits"].shape == (B, ACT.n)
        assert out["policy_logits"].dtype == np.float32
        assert out["baseline"].shape == (B,) and out["baseline"].dtype == np.float32
        assert isinstance(new_state, tuple) and len(new_state) == (2 if lstm_size else 0)
        assert all(isinstance(s, np.ndarray) and s.shape == (B, lstm_size) for s in new_state)
    assert agent._infer_fn.tracing_count() == 1


def test_infer_samples_from_the_policy():
    agent = VTraceAgent(_config(actors=1, envs_per_actor=64), OBS, ACT)
    # Make the policy deterministic-ish: huge bias on action 2.
    policy = agent.network._policy
    policy.b.assign(np.array([0.0, 0.0, 30.0, 0.0], np.float32))
    B = 64
    env_output = EnvOutput(np.zeros(B, np.float32), np.zeros(B, bool),
                           np.zeros((B,) + OBS.shape, np.uint8))
    action, _ = agent.infer(np.arange(B), np.zeros(B, np.int32), env_output)
    assert np.all(action == 2)
    policy.b.assign(np.zeros(4, np.float32))
    policy.w.assign(np.zeros_like(policy.w.numpy()))
    action, _ = agent.infer(np.arange(B), np.zeros(B, np.int32), env_output)
    assert len(set(action.tolist())) > 1  # uniform policy: not always the same action


@pytest.mark.parametrize("lstm_size", [0, 8])
def test_train_step_changes_parameters_and_reports_metrics(lstm_size):
    config = _config(network_kwargs={"hidden_sizes": (16,), "lstm_size": lstm_size})
    agent = make_agent(config, OBS, ACT)
    assert isinstance(agent, VTraceAgent)
    buffer = agent.new_buffer()
    assert buffer.capacity == 2 * config.batch_size  # queue_capacity 0: 2 x batch_size
    rng = np.random.default_rng(1)
    for _ in range(2 * config.batch_size):
        buffer.put(_synthetic_unroll(agent, rng, config.unroll_length))
    before = [v.numpy().copy() for v in agent.parameters()]
    # A clock that stands still: the first step is diagnosed, the later ones are not.
    agent._diagnose = diagnostics.Sampler(clock=lambda: 0.0)
    metrics = agent.train_step(buffer)
    metrics2 = agent.train_step(buffer)
    assert len(buffer) == 0
    sampled = ("update_ratio", *agent.relu_columns)
    for m in (metrics, metrics2):
        for key in ("loss", "policy_loss", "baseline_loss", "entropy", "grad_norm",
                    "mean_rho", "mean_abs_log_rho", "value_loss", "explained_variance",
                    "learning_rate", *(sampled if m is metrics else ())):
            assert isinstance(m[key], float) and np.isfinite(m[key]), key
        assert m["env_steps_trained"] == config.unroll_length * config.batch_size
    assert agent.relu_columns == ["dead_relu_0_torso_0"]  # one hidden ReLU layer
    assert 0 < metrics["update_ratio"] < 1 and 0 <= metrics["dead_relu_0_torso_0"] <= 1
    assert not set(sampled) & set(metrics2)
    after = agent.parameters()
    assert any(not np.allclose(a, b.numpy()) for a, b in zip(before, after))
    assert [fn.tracing_count() for fn in agent._train_fns.values()] == [1, 1]


def test_diagnosed_and_plain_train_steps_update_the_same_way():
    """The diagnostics only read: a step with them leaves the variables and the
    optimizer exactly where a step without them does."""
    config = _config(network_kwargs={"hidden_sizes": (16,)})
    rng = np.random.default_rng(3)
    probe = VTraceAgent(config, OBS, ACT)
    unrolls = [_synthetic_unroll(probe, rng, config.unroll_length) for _ in range(6)]
    states = []
    for interval_s in (0.0, 1e9):  # every step diagnosed; only the first
        agent = VTraceAgent(config, OBS, ACT)
        agent.restore_state(probe.checkpoint_state())  # the same starting point
        agent._diagnose = diagnostics.Sampler(interval_s, min_steps=0, clock=lambda: 0.0)
        buffer = agent.new_buffer()
        for u in unrolls:
            buffer.put(u)
        agent.train_step(buffer)
        agent.train_step(buffer)
        states.append(agent.checkpoint_state())
    assert states[0].keys() == states[1].keys()
    for name in states[0]:
        np.testing.assert_array_equal(states[0][name], states[1][name], err_msg=name)


def test_train_step_returns_none_when_closed():
    agent = VTraceAgent(_config(), OBS, ACT)
    buffer = agent.new_buffer()
    buffer.close()
    assert agent.train_step(buffer) is None


def _first_update_norm(grad_clip_norm):
    # Keras Adam's first step with lr 1 is sqrt(1 - b2) / (1 - b1) * m / (sqrt(v) + eps) with
    # m = (1 - b1) g and sqrt(v) = sqrt(1 - b2) |g|, i.e. c g / (c |g| + eps), c = sqrt(1 - b2).
    # With eps = 1 and small gradients the update is ~ c g: its norm measures the applied g.
    tf.random.set_seed(5)
    agent = VTraceAgent(_config(grad_clip_norm=grad_clip_norm, learning_rate=1.0,
                                adam_epsilon=1.0), OBS, ACT)
    buffer = agent.new_buffer()
    rng = np.random.default_rng(2)
    for _ in range(agent.config.batch_size):
        buffer.put(_synthetic_unroll(agent, rng, agent.unroll_length))
    before = [v.numpy().astype(np.float64) for v in agent.parameters()]
    metrics = agent.train_step(buffer)
    delta = np.sqrt(sum(np.sum((a.numpy() - b) ** 2) for a, b in zip(agent.parameters(), before)))
    return metrics["grad_norm"], delta


def test_grad_clipping_by_global_norm():
    c = np.sqrt(1 - 0.999)  # Keras Adam's default beta_2
    grad_norm, clipped = _first_update_norm(0.01)
    assert grad_norm > 0.05  # the reported norm is the unclipped one
    assert clipped == pytest.approx(c * 0.01, rel=0.02)
    same_grad_norm, unclipped = _first_update_norm(0.0)
    assert same_grad_norm == pytest.approx(grad_norm, rel=1e-5)
    assert unclipped > 0.9 * c * grad_norm / (1 + c * grad_norm)


def test_learning_rate_decay():
    agent = VTraceAgent(_config(lr_decay_to_zero=True, learning_rate=0.4), OBS, ACT)
    agent.set_progress(0.25)
    assert float(agent.optimizer.learning_rate.numpy()) == pytest.approx(0.3)
    agent.set_progress(1.5)
    assert float(agent.optimizer.learning_rate.numpy()) == 0.0
    fixed = VTraceAgent(_config(learning_rate=0.4), OBS, ACT)
    fixed.set_progress(0.5)
    assert float(fixed.optimizer.learning_rate.numpy()) == pytest.approx(0.4)


def test_checkpoint_round_trip_restores_parameters_and_optimizer():
    config = _config(network_kwargs={"hidden_sizes": (16,), "lstm_size": 4})
    agent = VTraceAgent(config, OBS, ACT)
    rng = np.random.default_rng(3)
    buffer = agent.new_buffer()
    for _ in range(config.batch_size):
        buffer.put(_synthetic_unroll(agent, rng, config.unroll_length))
    agent.train_step(buffer)
    saved = agent.checkpoint_state()
    assert any(k.startswith("optimizer/") for k in saved)
    assert sum(k.startswith("network/") for k in saved) == len(agent.parameters())
    # The optimizer state is real: Adam moments are nonzero after a step.
    assert any(np.any(v != 0) for k, v in saved.items()
               if k.startswith("optimizer/") and v.ndim > 0)

    tf.random.set_seed(99)
    fresh = VTraceAgent(config, OBS, ACT)
    assert any(not np.allclose(a.numpy(), b.numpy())
               for a, b in zip(fresh.parameters(), agent.parameters()))
    fresh.restore_state(saved)
    restored = fresh.checkpoint_state()
    assert restored.keys() == saved.keys()
    for k in saved:
        np.testing.assert_array_equal(restored[k], saved[k])

    # Both take the same next step from the same batch.
    batch = [_synthetic_unroll(agent, rng, config.unroll_length) for _ in range(3)]
    for a in (agent, fresh):
        buf = a.new_buffer()
        for u in batch:
            buf.put(u)
        a.train_step(buf)
    for a, b in zip(agent.parameters(), fresh.parameters()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("lstm_size", [0, 16])
def test_learns_a_contextual_bandit(lstm_size):
    first, last = run_bandit(_config(network_kwargs={"hidden_sizes": (32,),
                                                     "lstm_size": lstm_size},
                                     batch_size=8, learning_rate=1e-2, entropy_cost=1e-3,
                                     seed=0))
    assert first < 0.55  # about 1/3 for a random policy
    assert last > 0.85, (first, last)
