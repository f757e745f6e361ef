"""R2D2Agent: acting (per-env epsilons, eval envs), a train step checked against NumPy, and learning.

The learning check runs without the runtime: actors are simulated here, building
unrolls of T+1 steps per the seed.types convention (consecutive unrolls of an
env overlap by one step).
"""

import threading
import time

import numpy as np
import pytest
import tensorflow as tf
from gymnasium import spaces

from seed.agents import diagnostics, make_agent
from seed.agents.r2d2_agent import R2D2Agent
from seed import config as config_lib
from seed.buffers.prioritized import PrioritizedReplay
from seed.types import EnvOutput, Unroll

OBS_SPACE = spaces.Box(0.0, 1.0, (2,), np.float32)
ACT_SPACE = spaces.Discrete(2)


def h(x, eps):
    return np.sign(x) * (np.sqrt(np.abs(x) + 1.0) - 1.0) + eps * x


def h_inv(y, eps):
    a = np.abs(y)
    s = (-1.0 + np.sqrt(1.0 + 4.0 * eps * (1.0 + eps + a))) / (2.0 * eps) if eps else a + 1.0
    return np.sign(y) * (s * s - 1.0)


def make_config(**kw):
    base = dict(agent="r2d2", network="mlp",
                network_kwargs={"hidden_sizes": (16,), "lstm_size": 8},
                actors=1, envs_per_actor=4, eval_envs=1, unroll_length=4, burn_in=1,
                batch_size=8, replay_min_size=4, replay_capacity=100, n_steps=2,
                discounting=0.9, target_update_period=3, learning_rate=1e-3, seed=3)
    base.update(kw)
    return config_lib.make_config(**base)


class Chain:
    """Two-step chain. s0: action 0 -> s1 (reward 0), action 1 -> end (reward 0.1).
    s1: action 0 -> end (reward 1), action 1 -> end (reward 0). Optimal greedy return 1;
    with discount 0.9: Q*(s0) = [0.9, 0.1], Q*(s1) = [1, 0]."""

    def reset(self):
        self.s = 0
        return np.array([1.0, 0.0], np.float32)

    def step(self, action):
        if self.s == 0 and action == 0:
            self.s = 1
            return np.array([0.0, 1.0], np.float32), 0.0, False
        reward = {(0, 1): 0.1, (1, 0): 1.0, (1, 1): 0.0}[(self.s, int(action))]
        return self.reset(), reward, True


class SimulatedActors:
    """All envs of the config, stepped in one batch per call, unrolls put into the buffer."""

    def __init__(self, agent, buffer, num_envs):
        self.agent, self.buffer = agent, buffer
        self.envs = [Chain() for _ in range(num_envs)]
        self.obs = np.stack([e.reset() for e in self.envs])
        self.reward = np.zeros(num_envs, np.float32)
        self.done = np.ones(num_envs, bool)  # a run starts with a fresh episode
        self.prev_action = np.zeros(num_envs, np.int32)
        agent.reset_core_state(np.arange(num_envs))
        self.pending = [[] for _ in range(num_envs)]
        self.first_state = [None] * num_envs
        self.episode_return = np.zeros(num_envs)
        self.returns = [[] for _ in range(num_envs)]
        self.unrolls_put = 0

    def step(self):
        n = len(self.envs)
        self.state = self.agent.read_core_state(np.arange(n))
        action, out = self.agent.infer(np.arange(n, dtype=np.int32), self.prev_action,
                                       EnvOutput(self.reward, self.done, self.obs))
        for i, env in enumerate(self.envs):
            if not self.pending[i]:
                self.first_state[i] = tuple(s[i] for s in self.state)
            self.pending[i].append((self.prev_action[i], self.reward[i], self.done[i],
                                    self.obs[i], {k: v[i] for k, v in out.items()},
                                    tuple(s[i] for s in self.state)))
            if len(self.pending[i]) == self.agent.unroll_length + 1:
                steps = self.pending[i]
                unroll = Unroll(
                    core_state=self.first_state[i],
                    prev_action=np.array([s[0] for s in steps], np.int32),
                    env_output=EnvOutput(np.array([s[1] for s in steps], np.float32),
                                         np.array([s[2] for s in steps], bool),
                                         np.stack([s[3] for s in steps])),
                    agent_output={k: np.stack([s[4][k] for s in steps]) for k in steps[0][4]})
                if not self.agent.is_eval_env(i):
                    self.buffer.put(unroll)
                    self.unrolls_put += 1
                self.pending[i] = [steps[-1]]
                self.first_state[i] = steps[-1][5]
            obs, reward, done = env.step(action[i])
            self.obs[i], self.reward[i], self.done[i] = obs, reward, done
            self.episode_return[i] += reward
            if done:
                self.returns[i].append(self.episode_return[i])
                self.episode_return[i] = 0.0
        self.prev_action = action.astype(np.int32)


def test_make_agent_builds_r2d2_and_validates_burn_in():
    agent = make_agent(make_config(), OBS_SPACE, ACT_SPACE)
    assert isinstance(agent, R2D2Agent) and agent.unroll_length == 4
    assert isinstance(agent.new_buffer(), PrioritizedReplay)
    assert agent.new_buffer().capacity == 100
    with pytest.raises(ValueError, match="burn_in"):
        R2D2Agent(make_config(burn_in=4), OBS_SPACE, ACT_SPACE)


def test_infer_per_env_epsilons_and_eval_envs():
    config = make_config(actors=2, envs_per_actor=3, eval_envs=2, epsilon_base=0.4,
                         epsilon_alpha=7.0, eval_epsilon=0.0)
    agent = R2D2Agent(config, OBS_SPACE, ACT_SPACE)
    n = 4
    np.testing.assert_allclose(agent.epsilons[:n],
                               [0.4 ** (1 + 7.0 * i / (n - 1)) for i in range(n)], rtol=1e-6)
    np.testing.assert_allclose(agent.epsilons[n:], [0.0, 0.0])
    assert [agent.is_eval_env(i) for i in range(6)] == [False] * 4 + [True] * 2

    # Batches of different sizes share one trace.
    for b in (1, 3, 5):
        env = EnvOutput(np.zeros(b, np.float32), np.ones(b, bool),
                        np.tile([[1.0, 0.0]], (b, 1)).astype(np.float32))
        action, out = agent.infer(np.arange(b, dtype=np.int32), np.zeros(b, np.int32), env)
        state = agent.read_core_state(np.arange(b))
        assert action.dtype == np.int32 and action.shape == (b,)
        assert out["q_values"].shape == (b, 2) and out["action"].shape == (b,)
        assert len(state) == 2 and state[0].shape == (b, 8)
    assert agent._infer_fn.tracing_count() == 1

    # How often each env deviates from the greedy action: epsilon / 2 with 2 actions.
    b = 3000
    env_ids = np.repeat(np.array([0, 3, 5], np.int32), b)
    env = EnvOutput(np.zeros(3 * b, np.float32), np.ones(3 * b, bool),
                    np.tile([[1.0, 0.0]], (3 * b, 1)).astype(np.float32))
    # Ids repeat within the batch: their rows of the state table collide, which does not
    # matter here (done everywhere: every row starts from the initial state).
    action, out = agent.infer(env_ids, np.zeros(3 * b, np.int32), env)
    greedy = np.argmax(out["q_values"], -1)
    off = (action != greedy).reshape(3, b).mean(1)
    np.testing.assert_allclose(off[:2], [0.4 / 2, 0.4 ** 8 / 2], atol=0.03)
    assert off[2] == 0.0  # eval env with eval_epsilon 0 is greedy


class RecordingReplay(PrioritizedReplay):
    def sample(self, batch_size, rng):
        self.last = super().sample(batch_size, rng)
        return self.last


def random_unroll(rng, T, state_size=8):
    done = rng.uniform(size=T + 1) < 0.3
    return Unroll(
        core_state=(rng.normal(size=state_size).astype(np.float32),
                    rng.normal(size=state_size).astype(np.float32)),
        prev_action=rng.integers(0, 2, T + 1).astype(np.int32),
        env_output=EnvOutput(rng.normal(size=T + 1).astype(np.float32), done,
                             rng.uniform(size=(T + 1, 2)).astype(np.float32)),
        agent_output={"action": rng.integers(0, 2, T + 1).astype(np.int32),
                      "q_values": np.zeros((T + 1, 2), np.float32)})


def n_step_reference(reward, done, online_q, target_q, gamma, n, eps):
    """Slow loop over the definition, [T+1, B(, A)] in the seed.types convention."""
    T = reward.shape[0] - 1
    out = np.zeros((T, reward.shape[1]))
    for b in range(reward.shape[1]):
        for t in range(T):
            total, discount, last = 0.0, 1.0, t
            for k in range(n):
                j = t + k + 1
                if j > T:
                    break
                total += discount * reward[j, b]
                if done[j, b]:
                    discount = 0.0
                    break
                discount *= gamma
                last = j
            if discount:
                total += discount * h_inv(target_q[last, b, np.argmax(online_q[last, b])], eps)
            out[t, b] = h(total, eps)
    return out


def test_train_step_loss_priorities_and_target_updates_match_numpy():
    config = make_config(burn_in=2, unroll_length=5, n_steps=3, batch_size=6,
                         target_update_period=2, importance_sampling_exponent=0.7)
    agent = R2D2Agent(config, OBS_SPACE, ACT_SPACE)
    agent._diagnose = diagnostics.Sampler(interval_s=0.0, min_steps=0)  # every step diagnosed
    buffer = RecordingReplay(50, config.agent_config.priority_exponent,
                             config.agent_config.importance_sampling_exponent)
    rng = np.random.default_rng(0)
    for _ in range(10):
        buffer.put(random_unroll(rng, 5))
    buffer.update_priorities(np.arange(10), rng.uniform(0.5, 2.0, 10))
    # Make the target net differ from the online one, so double-Q is visible.
    for v in agent.target_network.variables:
        v.assign(v + 0.05 * tf.random.normal(v.shape))

    before = [v.numpy().copy() for v in agent.network.variables]
    target_before = [v.numpy().copy() for v in agent.target_network.variables]

    def q_over_unroll(net, batch):
        # One unroll over all T+1 steps from the stored state, then drop the burn-in:
        # the same values as burn-in followed by the learning part.
        out, _ = net(tf.constant(batch["prev_action"]), batch["env"], batch["state"],
                     unroll=True)
        return out["q_values"].numpy()[config.agent_config.burn_in:]

    metrics = agent.train_step(buffer)
    indices, unrolls, weights = buffer.last
    stacked = {
        "prev_action": np.stack([u.prev_action for u in unrolls], 1),
        "env": EnvOutput(*(np.stack([u.env_output[i] for u in unrolls], 1) for i in range(3))),
        "state": tuple(np.stack([u.core_state[i] for u in unrolls]) for i in range(2)),
    }
    # Recompute with the variables the step started from.
    after = [v.numpy().copy() for v in agent.network.variables]
    for v, x in zip(agent.network.variables, before):
        v.assign(x)
    q = q_over_unroll(agent.network, stacked).astype(np.float64)
    tq = q_over_unroll(agent.target_network, stacked).astype(np.float64)
    for v, x in zip(agent.network.variables, after):
        v.assign(x)
    b = config.agent_config.burn_in
    reward = stacked["env"].reward[b:].astype(np.float64)
    done = stacked["env"].done[b:]
    targets = n_step_reference(reward, done, q, tq, 0.9, 3, config.agent_config.value_rescale_eps)
    actions = np.stack([u.agent_output["action"] for u in unrolls], 1)[b:-1]
    q_taken = np.take_along_axis(q[:-1], actions[..., None], -1)[..., 0]
    td = targets - q_taken
    expected_loss = np.mean(weights * 0.5 * np.sum(td ** 2, 0))
    assert metrics["loss"] == pytest.approx(expected_loss, rel=1e-4)
    assert metrics["mean_q"] == pytest.approx(q_taken.mean(), rel=1e-4, abs=1e-6)
    expected_priorities = 0.9 * np.abs(td).max(0) + 0.1 * np.abs(td).mean(0)
    assert metrics["mean_priority"] == pytest.approx(expected_priorities.mean(), rel=1e-4)
    assert metrics["env_steps_trained"] == (5 - 2) * 6
    # The sampled items now carry those priorities (p^alpha in the tree).
    slots = indices % buffer.capacity
    np.testing.assert_allclose(buffer._tree.get(slots),
                               expected_priorities ** config.agent_config.priority_exponent,
                               rtol=1e-4)
    assert any(not np.allclose(a, b) for a, b in zip(after, before))
    # Target net untouched after step 1, equal to online after step 2 (period 2).
    for v, x in zip(agent.target_network.variables, target_before):
        np.testing.assert_array_equal(v.numpy(), x)
    agent.train_step(buffer)
    for v, w in zip(agent.target_network.variables, agent.network.variables):
        np.testing.assert_array_equal(v.numpy(), w.numpy())
    assert agent._train_fns[True].tracing_count() == 1


def test_train_step_waits_for_min_size_and_stops_on_close():
    agent = R2D2Agent(make_config(replay_min_size=3), OBS_SPACE, ACT_SPACE)
    buffer = agent.new_buffer()
    rng = np.random.default_rng(1)
    buffer.put(random_unroll(rng, 4))
    result = {}
    thread = threading.Thread(target=lambda: result.setdefault("m", agent.train_step(buffer)))
    thread.start()
    time.sleep(0.3)
    assert thread.is_alive()  # 1 < replay_min_size: still waiting
    buffer.put(random_unroll(rng, 4))
    buffer.put(random_unroll(rng, 4))
    thread.join(30)
    assert not thread.is_alive() and result["m"]["env_steps_trained"] == 3 * 8
    closed = agent.new_buffer()
    closed.close()
    assert agent.train_step(closed) is None


def test_replay_ratio_holds_training_and_inserts_to_it():
    # ratio 2, 3 training envs, batch 8: error buffer 2 * 3 + 8 = 14, and
    # credit = 2 * (inserted - min_size 1) - sequences trained.
    agent = R2D2Agent(make_config(replay_min_size=1, replay_ratio=2.0), OBS_SPACE, ACT_SPACE)
    agent._diagnose = diagnostics.Sampler(interval_s=0.0, min_steps=0)  # every step diagnosed
    assert agent.unroll_overlap == 2  # burn_in 1 + the shared last step
    buffer = agent.new_buffer()
    assert buffer.limiter.error_buffer == 14
    rng = np.random.default_rng(2)
    buffer.put(random_unroll(rng, 4))
    first = agent.train_step(buffer)  # credit 0 - 8 >= -14
    assert first["replay_ratio"] == pytest.approx(8 / 1)
    result = {}
    thread = threading.Thread(target=lambda: result.setdefault("m", agent.train_step(buffer)))
    thread.start()
    time.sleep(0.3)
    assert thread.is_alive()  # -8 - 8 = -16 < -14: waits for the actors
    buffer.put(random_unroll(rng, 4))  # credit -6: a batch may go
    thread.join(30)
    assert not thread.is_alive() and result["m"]["replay_ratio"] == pytest.approx(16 / 2)
    for key in ("value_loss", "explained_variance", "update_ratio", *agent.relu_columns):
        assert np.isfinite(result["m"][key]), key
    # Now the actors may run ahead by the error buffer: from credit -14, 14 inserts of 2.
    accepted = 0
    while buffer.put(random_unroll(rng, 4), timeout=0):
        accepted += 1
    assert accepted == 14
    buffer.close()


def test_learning_rate_decays_linearly_only_when_asked():
    agent = R2D2Agent(make_config(learning_rate=1e-3, lr_decay_to_zero=True), OBS_SPACE, ACT_SPACE)
    agent.set_progress(0.25)
    assert float(agent.optimizer.learning_rate.numpy()) == pytest.approx(7.5e-4)
    agent.set_progress(1.5)
    assert float(agent.optimizer.learning_rate.numpy()) == 0.0
    constant = R2D2Agent(make_config(learning_rate=1e-3), OBS_SPACE, ACT_SPACE)
    constant.set_progress(0.5)
    assert float(constant.optimizer.learning_rate.numpy()) == pytest.approx(1e-3)


def test_checkpoint_round_trip():
    agent = R2D2Agent(make_config(), OBS_SPACE, ACT_SPACE)
    buffer = agent.new_buffer()
    rng = np.random.default_rng(2)
    for _ in range(6):
        buffer.put(random_unroll(rng, 4))
    agent.train_step(buffer)
    saved = agent.checkpoint_state()
    assert any(k.startswith("optimizer/") for k in saved)
    assert all(isinstance(v, np.ndarray) for v in saved.values())
    for _ in range(3):
        agent.train_step(buffer)
    agent.restore_state(saved)
    again = agent.checkpoint_state()
    assert saved.keys() == again.keys()
    for k in saved:
        np.testing.assert_array_equal(saved[k], again[k])
    other = R2D2Agent(make_config(seed=9), OBS_SPACE, ACT_SPACE)
    other.restore_state(saved)
    for a, b in zip(other.parameters(), agent.parameters()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def greedy_q_at_start(agent):
    # The first step of an episode that follows an optimal one (the LSTM also sees the
    # previous reward, 1, and action, 0, which the policy sees at such a step).
    env = EnvOutput(np.ones(1, np.float32), np.ones(1, bool), np.array([[1.0, 0.0]], np.float32))
    _, out = agent.infer(np.array([agent.num_envs - 1], np.int32), np.zeros(1, np.int32), env)
    return h_inv(out["q_values"][0].astype(np.float64), agent.settings.value_rescale_eps)


def test_r2d2_learns_the_two_step_chain():
    # n_steps=1: uncorrected n-step returns (as R2D2 uses them) converge towards the
    # behaviour policy's values (epsilon at s1 lowers Q(s0, 0) below 0.9); one-step
    # double-Q targets converge to Q* itself, which this test checks.
    tf.random.set_seed(0)
    config = make_config(actors=1, envs_per_actor=4, eval_envs=1, epsilon_base=0.5,
                         epsilon_alpha=1.0, eval_epsilon=0.0, batch_size=16,
                         replay_min_size=16, replay_capacity=400, learning_rate=5e-3,
                         target_update_period=20, n_steps=1, burn_in=1, unroll_length=4)
    agent = R2D2Agent(config, OBS_SPACE, ACT_SPACE)
    buffer = agent.new_buffer()
    actors = SimulatedActors(agent, buffer, config.num_envs)
    eval_id = config.num_envs - 1
    while len(buffer) < config.agent_config.replay_min_size:
        actors.step()
    initial_q = greedy_q_at_start(agent)
    returns_before = list(actors.returns[eval_id])
    for _ in range(500):
        actors.step()
        metrics = agent.train_step(buffer)
    assert np.isfinite(metrics["loss"])
    # The eval env's unrolls never went into replay.
    assert actors.unrolls_put == buffer.num_inserted
    # Its greedy (epsilon 0) return after learning is the optimum.
    actors.returns[eval_id].clear()
    for _ in range(12):
        actors.step()
    final = actors.returns[eval_id]
    assert len(final) >= 5 and np.all(np.array(final) == 1.0), (returns_before, final)
    assert returns_before and np.mean(returns_before) < 1.0  # it did improve
    # And the Q values at s0 approach Q* = [0.9, 0.1], from wherever they started.
    q = greedy_q_at_start(agent)
    print("initial Q(s0)", initial_q, "learnt", q, "returns before", returns_before)
    np.testing.assert_allclose(q, [0.9, 0.1], atol=0.12)
    assert np.abs(initial_q - [0.9, 0.1]).max() > 0.2


def test_a_grad_clip_norm_of_0_trains_unclipped():
    """0 means no clipping (Config's comment, V-trace's rule): a step still moves the net."""
    agent = R2D2Agent(make_config(replay_min_size=2, grad_clip_norm=0.0), OBS_SPACE, ACT_SPACE)
    buffer = agent.new_buffer()
    rng = np.random.default_rng(2)
    for _ in range(2):
        buffer.put(random_unroll(rng, 4))
    before = [v.numpy().copy() for v in agent.network.trainable_variables]
    metrics = agent.train_step(buffer)
    assert metrics["grad_norm"] > 0
    moved = [np.abs(v.numpy() - b).max() for v, b in zip(agent.network.trainable_variables,
                                                           before)]
    assert max(moved) > 0
