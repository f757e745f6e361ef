"""A contextual bandit and an in-process V-trace loop on it, for learning tests."""

import gymnasium as gym
import numpy as np
import tensorflow as tf

from seed.agents.vtrace_agent import VTraceAgent
from seed.config import replaced
from seed.types import EnvOutput, Unroll


class ContextualBandit:
    """Episodes of 4 steps; each step shows a one-hot context, reward 1 for action == context."""

    def __init__(self, rng, contexts=3, length=4):
        self.rng, self.k, self.length = rng, contexts, length
        self.observation_space = gym.spaces.Box(0.0, 1.0, (contexts,), np.float32)
        self.action_space = gym.spaces.Discrete(contexts)

    def _obs(self):
        self.context = int(self.rng.integers(self.k))
        return np.eye(self.k, dtype=np.float32)[self.context]

    def reset(self):
        self.t = 0
        return self._obs()

    def step(self, action):
        reward = float(action == self.context)
        self.t += 1
        done = self.t >= self.length
        return self._obs(), reward, done


def run_bandit(config, envs=8, unroll_length=8, updates=None):
    """A tiny in-process SEED-style loop: infer per step, build T+1 unrolls, train.

    ``config`` gives the agent (V-trace, an MLP network) and its optimizer;
    the loop sets ``unroll_length`` and ``discounting`` (0.9). It trains a
    ``batch_size`` batch whenever the buffer holds one, for ``updates`` train
    steps (default: as many as 50 unroll lengths of stepping give). Returns the
    mean reward over the first and the last 5 unroll lengths of steps.
    """
    tf.random.set_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    B, T = envs, unroll_length
    envs = [ContextualBandit(rng) for _ in range(B)]
    config = replaced(config, unroll_length=T, discounting=0.9, actors=1,
                                 envs_per_actor=B)
    agent = VTraceAgent(config, envs[0].observation_space, envs[0].action_space)
    buffer = agent.new_buffer()

    obs = np.stack([e.reset() for e in envs])
    reward = np.zeros(B, np.float32)
    done = np.ones(B, bool)  # run start
    prev_action = np.zeros(B, np.int32)
    # Per env, the steps so far: (core state before, prev_action, env output, agent output).
    partial = [[] for _ in range(B)]
    rewards_seen = []
    trained = 0
    step = 0
    while (trained < updates) if updates else (step < 50 * T + 1):
        step += 1
        env_output = EnvOutput(reward, done, obs)
        state = agent.read_core_state(np.arange(B))
        action, agent_output = agent.infer(np.arange(B), prev_action, env_output)
        for i in range(B):
            partial[i].append((tuple(s[i] for s in state), prev_action[i],
                               EnvOutput(reward[i], done[i], obs[i]),
                               {k: v[i] for k, v in agent_output.items()}))
            if len(partial[i]) == T + 1:
                steps = partial[i]
                buffer.put(Unroll(
                    core_state=steps[0][0],
                    prev_action=np.array([s[1] for s in steps], np.int32),
                    env_output=EnvOutput(*(np.array([s[2][j] for s in steps]) for j in range(3))),
                    agent_output={k: np.stack([s[3][k] for s in steps]) for k in steps[0][3]}))
                partial[i] = [steps[-1]]  # consecutive unrolls overlap by one step
        while len(buffer) >= config.batch_size:
            metrics = agent.train_step(buffer)
            assert np.isfinite(metrics["loss"])
            trained += 1
        results = [e.step(a) for e, a in zip(envs, action)]
        reward = np.array([r[1] for r in results], np.float32)
        done = np.array([r[2] for r in results])
        obs = np.stack([e.reset() if d else r[0] for e, r, d in zip(envs, results, done)])
        rewards_seen.append(reward.mean())
        prev_action = action

    return np.mean(rewards_seen[:5 * T]), np.mean(rewards_seen[-5 * T:])
