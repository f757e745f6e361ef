"""Every committed config's loss and optimizer settings make updates of a sane size.

Pong sat at random play for 10M frames (issue 13) because the IMPALA paper's RMSprop
settings (lr 6e-4, epsilon 0.01 inside the square root), tuned for losses *summed* over the
T x B steps, met this suite's *mean* losses: the gradients were ~T x B times smaller than the
settings assumed, RMSprop's epsilon floor swamped them, and every update was ~30x smaller than
intended. The Catch tests ran with Catch's own settings and saw nothing.

Here each config's optimizer (and loss reduction, batch size, unroll length, gradient clip)
trains the Nature CNN on a batch of real Pong frames from a random policy, and the typical
parameter step of the third update (the RMS of |delta theta| over the weights that moved) must
be of the order of the learning rate. Adam's is ~1 whatever the gradients' scale; RMSprop's is ~1 to ~10 when its
epsilon is small against the gradients' mean square, and far below 1 when the epsilon floor
dominates -- the bug above. A second test learns a toy task with the Pong config's optimizer.
"""

from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from seed.agents import make_agent
from seed.config import Config, load, make_config, replaced
from seed.types import EnvOutput, Unroll

from tests.support.bandit import run_bandit

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = sorted((ROOT / "experiments").glob("*.yaml"))
UPDATES = 3
# The RMS of |delta theta| / lr over the parameters that moved, on the last update. Measured
# when this test was written: committed configs 0.12 (Pong V-trace, Adam epsilon 1e-5) to 0.8;
# the IMPALA paper's RMSprop on the mean loss 0.026, on the summed loss 0.41; RMSprop with
# epsilon 0.1 (the DMLab configs before) 0.0004; Adam with epsilon 1e-3, beta_1 0 0.008.
SANE_STEP = (0.05, 30.0)


@pytest.fixture(scope="module")
def pong():
    envs_mod = pytest.importorskip("envs.atari")
    return envs_mod.make("Pong")


def probe_config(config: Config) -> Config:
    """The config's optimizer and loss on the Nature CNN; unroll and batch capped for speed.

    Under mean losses neither the unroll length nor the batch changes a gradient's scale.
    The replay is free-running: the probe fills it and trains from one thread, where a held
    ratio would make the inserts wait for samples that never come.
    """
    unroll = min(config.unroll_length, 20)
    r2d2 = config.agent == "r2d2"
    replay = dict(burn_in=min(config.agent_config.burn_in, unroll // 4), replay_min_size=1,
                  replay_ratio=0.0, eval_envs=0) if r2d2 else {}
    return replaced(
        config, network="nature_cnn", batch_size=min(config.batch_size, 8),
        network_kwargs={"lstm_size": 32} if r2d2 else {}, env="atari:Pong",
        unroll_length=unroll, jit_inference=False, lr_decay_to_zero=False, actors=1,
        envs_per_actor=1, seed=1, **replay)


def pong_unrolls(agent, env, count, T, seed=0):
    """``count`` consecutive unrolls of ``T + 1`` steps of one Pong game, acted by ``agent``."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    reward, done = np.zeros(1, np.float32), np.ones(1, bool)
    prev_action = np.zeros(1, np.int32)
    agent.reset_core_state(np.zeros(1, np.int32))
    steps, unrolls = [], []
    while len(unrolls) < count:
        env_output = EnvOutput(reward, done, obs[None])
        state = agent.read_core_state(np.zeros(1, np.int32))
        action, out = agent.infer(np.zeros(1, np.int32), prev_action, env_output)
        steps.append((tuple(s[0] for s in state), prev_action[0], env_output,
                      {k: v[0] for k, v in out.items()}))
        if len(steps) == T + 1:
            unrolls.append(Unroll(
                core_state=steps[0][0],
                prev_action=np.array([s[1] for s in steps], np.int32),
                env_output=EnvOutput(*(np.concatenate([s[2][j] for s in steps])
                                       for j in range(3))),
                agent_output={k: np.stack([s[3][k] for s in steps]) for k in steps[0][3]}))
            steps = [steps[-1]]
        if rng.random() < 0.9:  # mostly the policy's action, sometimes a random one
            action = np.asarray([rng.integers(env.action_space.n)], np.int32)
        obs, r, terminated, truncated, _ = env.step(int(action[0]))
        reward = np.asarray([r], np.float32)
        done = np.asarray([terminated or truncated])
        if done[0]:
            obs, _ = env.reset()
        prev_action = action.astype(np.int32)
    return unrolls


def parameter_step(config: Config, env) -> float:
    """RMS |delta theta| / lr over the parameters that moved, on update ``UPDATES``."""
    tf.random.set_seed(0)
    agent = make_agent(config, env.observation_space, env.action_space)
    unrolls = pong_unrolls(agent, env, config.batch_size, config.unroll_length)
    buffer = agent.new_buffer()
    for _ in range(UPDATES):
        before = [v.numpy().copy() for v in agent.parameters()]
        for u in unrolls:
            buffer.put(u)
        metrics = agent.train_step(buffer)
        assert np.isfinite(metrics["loss"])
    delta = np.concatenate([np.abs(v.numpy() - b).ravel()
                            for v, b in zip(agent.parameters(), before)])
    moved = delta[delta > 0]
    assert moved.size > 0.1 * delta.size, "most parameters did not move at all"
    return float(np.sqrt(np.mean(np.square(moved)))) / config.agent_config.learning_rate


# Fields of a probe config that its probe never reads: the Pong env is the fixture's, the
# learning rate does not decay, and nothing counts frames or seconds.
UNREAD = ("benchmark", "env_kwargs", "logdir", "frames", "seconds")


def _probe_key(path: Path) -> str:
    try:
        values = probe_config(load(str(path))).to_json()
    except Exception:  # the test of this config says what is wrong with it
        return str(path)
    return repr(sorted((k, v) for k, v in values.items() if k not in UNREAD))


def configs_by_probe() -> list[list[Path]]:
    """The committed configs, grouped where their probes are the same computation (the
    Atari V-trace configs share one): each probe runs once, for every config in its group."""
    groups: dict[str, list[Path]] = {}
    for path in CONFIGS:
        groups.setdefault(_probe_key(path), []).append(path)
    return list(groups.values())


PROBES = configs_by_probe()


@pytest.mark.parametrize("paths", PROBES, ids=["+".join(p.stem for p in g) for g in PROBES])
def test_committed_config_makes_updates_of_a_sane_size(paths, pong):
    configs = [load(str(path)) for path in paths]
    for config in configs:
        config.validate()
    step = parameter_step(probe_config(configs[0]), pong)
    assert SANE_STEP[0] <= step <= SANE_STEP[1], (
        f"{', '.join(p.name for p in paths)}: the typical parameter step is {step:.3g} x the "
        "learning rate; the optimizer settings do not fit the loss's scale (see "
        "seed/agents/vtrace.py)")


def test_the_settings_that_kept_pong_at_random_play_are_caught(pong):
    """The check above fails for the IMPALA paper's RMSprop settings on a mean loss."""
    pong_config = load(str(ROOT / "experiments" / "atari_pong_vtrace.yaml"))
    before_issue_13 = replaced(
        pong_config, optimizer="rmsprop", learning_rate=6e-4, rms_epsilon=0.01,
        rms_decay=0.99, grad_clip_norm=40.0, batch_size=16)
    step = parameter_step(probe_config(before_issue_13), pong)
    assert step < SANE_STEP[0], step
    # The same settings on the loss they were tuned for (summed) are fine.
    summed = replaced(before_issue_13, loss_reduction="sum")
    assert SANE_STEP[0] <= parameter_step(probe_config(summed), pong) <= SANE_STEP[1]


def test_the_pong_optimizer_settings_learn_a_toy_task():
    """Pong's optimizer, loss, clip and batch size, on a small MLP, learn a contextual bandit."""
    pong = load(str(ROOT / "experiments" / "atari_pong_vtrace.yaml"))
    fields = ("optimizer", "learning_rate", "adam_epsilon", "adam_beta1", "rms_epsilon",
              "rms_decay", "rms_momentum", "grad_clip_norm", "loss_reduction", "entropy_cost",
              "baseline_cost", "lr_decay_to_zero")
    config = make_config(agent="vtrace", network="mlp", network_kwargs={"hidden_sizes": (32,)},
                         seed=0, batch_size=pong.batch_size,
                         **{f: getattr(pong.agent_config, f) for f in fields})
    first, last = run_bandit(config, envs=8, unroll_length=8, updates=600)
    assert first < 0.55  # about 1/3 for a random policy
    assert last > 0.85, (first, last)
