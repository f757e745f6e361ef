"""Toy envs: Catch dynamics checked by hand, CartPole wrapping, the envs.make factory."""

import numpy as np
import pytest

import envs


def test_catch_spaces_and_reset():
    env = envs.make("toy:catch")
    assert env.observation_space.shape == (10, 5)
    assert env.observation_space.dtype == np.float32
    assert env.action_space.n == 3
    assert env.frames_per_step == 1
    obs, info = env.reset(seed=3)
    assert obs.dtype == np.float32 and obs.shape == (10, 5)
    assert obs.sum() == 2.0
    assert obs[0].sum() == 1.0  # ball in the top row
    assert obs[9, 2] == 1.0 and obs[9].sum() == 1.0  # paddle in the middle of the bottom row
    assert info["raw_reward"] == 0.0
    assert env.observation_space.contains(obs)


def test_catch_ball_falls_and_paddle_moves_and_clips():
    env = envs.make("toy:catch")
    obs, _ = env.reset(seed=0)
    ball_col = int(np.argmax(obs[0]))
    # Left three times: 2 -> 1 -> 0 -> 0 (clipped at the wall).
    expected_paddle = [1, 0, 0]
    for t, want in enumerate(expected_paddle, start=1):
        obs, reward, terminated, truncated, info = env.step(0)
        assert obs[t, ball_col] == 1.0 and obs[t].sum() == 1.0  # ball fell one row
        assert obs[9, want] == 1.0 and obs[9].sum() == 1.0
        assert reward == 0.0 and info["raw_reward"] == 0.0
        assert not terminated and not truncated
    # Right six times: 0 -> 1 -> 2 -> 3 -> 4 -> 4 -> 4 (clipped at the other wall); the
    # fifth step puts the ball in row 8, the sixth (9th overall) lands it.
    for t, want in zip(range(4, 9), [1, 2, 3, 4, 4]):
        obs, reward, terminated, _, _ = env.step(2)
        assert obs[t, ball_col] == 1.0
        assert obs[9, want] == 1.0 and obs[9].sum() == 1.0
        assert reward == 0.0 and not terminated
    obs, reward, terminated, truncated, info = env.step(1)  # 9th step: stay at 4
    assert terminated and not truncated
    assert obs[9, 4] == 1.0 and obs[9, ball_col] == 1.0
    assert reward == (1.0 if ball_col == 4 else -1.0)
    assert info["raw_reward"] == reward
    with pytest.raises(RuntimeError):
        env.step(1)


@pytest.mark.parametrize("seed", range(12))
def test_catch_tracking_policy_always_catches(seed):
    env = envs.make("toy:catch")
    obs, _ = env.reset(seed=seed)
    ball_col = int(np.argmax(obs[0]))
    steps, total, terminated = 0, 0.0, False
    while not terminated:
        paddle = int(np.argmax(obs[9]))
        action = 1 + int(np.sign(ball_col - paddle))
        obs, reward, terminated, truncated, _ = env.step(action)
        total += reward
        steps += 1
    assert steps == 9
    assert total == 1.0


def test_catch_wrong_paddle_gets_minus_one():
    env = envs.make("toy:catch")
    for seed in range(20):
        obs, _ = env.reset(seed=seed)
        ball_col = int(np.argmax(obs[0]))
        # Run to the wall opposite the ball (or any wall when it starts in the middle).
        action = 0 if ball_col >= 2 else 2
        rewards = [env.step(action)[1] for _ in range(9)]
        assert rewards[:8] == [0.0] * 8
        assert rewards[8] == -1.0


def test_catch_seed_determinism_and_variety():
    env = envs.make("toy:catch")
    cols_a = [int(np.argmax(env.reset(seed=s)[0][0])) for s in range(30)]
    cols_b = [int(np.argmax(env.reset(seed=s)[0][0])) for s in range(30)]
    assert cols_a == cols_b
    assert set(cols_a) == set(range(5))  # all columns reachable
    env.reset(seed=7)
    seq_a = [int(np.argmax(env.reset()[0][0])) for _ in range(10)]
    env.reset(seed=7)
    seq_b = [int(np.argmax(env.reset()[0][0])) for _ in range(10)]
    assert seq_a == seq_b


def test_catch_other_grid_size():
    env = envs.make("toy:catch", rows=4, columns=3)
    obs, _ = env.reset(seed=1)
    assert obs.shape == (4, 3)
    done, steps = False, 0
    while not done:
        _, _, done, _, _ = env.step(1)
        steps += 1
    assert steps == 3


def test_cartpole():
    env = envs.make("toy:cartpole")
    assert env.frames_per_step == 1
    assert env.action_space.n == 2
    assert env.observation_space.shape == (4,)
    assert env.observation_space.dtype == np.float32
    obs, info = env.reset(seed=5)
    assert obs.dtype == np.float32
    obs2, _ = env.reset(seed=5)
    np.testing.assert_array_equal(obs, obs2)
    obs, reward, terminated, truncated, info = env.step(0)
    assert obs.dtype == np.float32 and reward == 1.0 and info["raw_reward"] == 1.0
    env.close()


def test_cartpole_truncates_at_500():
    env = envs.make("toy:cartpole")
    env.reset(seed=0)
    # Balance with a simple hand-made controller (push towards the pole's lean); it keeps
    # the pole up well past 500 steps, so the episode ends by truncation.
    obs, _ = env.reset(seed=0)
    for step in range(1, 501):
        theta, omega = obs[2], obs[3]
        obs, _, terminated, truncated, _ = env.step(int(theta + 0.5 * omega > 0))
        assert not terminated
        if truncated:
            break
    assert step == 500 and truncated


def test_make_rejects_unknown_names():
    with pytest.raises(envs.UnknownEnvError, match="catch"):
        envs.make("toy:cathc")
    with pytest.raises(envs.UnknownEnvError, match="toy"):
        envs.make("tyo:catch")
    with pytest.raises(envs.UnknownEnvError, match="kind:name"):
        envs.make("catch")
    with pytest.raises(envs.UnknownEnvError):
        envs.make("toy:")


def test_memory_shows_the_cue_once_and_rewards_its_choice_after_the_delay():
    env = envs.make("toy:memory", cues=3, delay=2)
    assert env.observation_space.shape == (4,) and env.action_space.n == 3
    for seed in range(6):
        obs, _ = env.reset(seed=seed)
        cue = int(np.argmax(obs[:3]))
        assert obs.tolist() == [float(i == cue) for i in range(3)] + [0.0]
        for _ in range(2):  # the delay: blank, whatever the action, no reward
            obs, reward, done, truncated, _ = env.step(cue)
            assert obs.tolist() == [0.0] * 4 and reward == 0 and not done and not truncated
        obs, reward, done, _, _ = env.step(0)  # the last blank step shows the flag
        assert obs.tolist() == [0.0, 0.0, 0.0, 1.0] and reward == 0 and not done
        choice = cue if seed % 2 else (cue + 1) % 3
        _, reward, done, _, _ = env.step(choice)
        assert done and reward == (1.0 if seed % 2 else -1.0)
    with pytest.raises(RuntimeError, match="finished episode"):
        env.step(0)
    with pytest.raises(ValueError, match="cues >= 2"):
        envs.make("toy:memory", cues=1)
