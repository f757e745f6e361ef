"""The Atari adapter, against the real ale-py ROMs (Pong, Breakout)."""

import ale_py
import numpy as np
import pytest
from ale_py import roms

import envs
from envs import atari


def _area_resize(frame, size):
    """Reference area-average resize: each output pixel is the mean of the input area it covers."""
    def weights(n_in, n_out):
        w = np.zeros((n_out, n_in))
        scale = n_in / n_out
        for o in range(n_out):
            lo, hi = o * scale, (o + 1) * scale
            for i in range(int(np.floor(lo)), int(np.ceil(hi))):
                w[o, i] = min(hi, i + 1) - max(lo, i)
        return w / scale
    rows, cols = weights(frame.shape[0], size), weights(frame.shape[1], size)
    # einsum (not @): plain loops, no BLAS threads to thrash a busy test machine.
    shrunk_rows = np.einsum("oh,hw->ow", rows, frame.astype(np.float64))
    return np.einsum("ow,pw->op", shrunk_rows, cols)


def test_area_resize_hand_computed():
    # 5 -> 2 rows: output row 0 covers rows 0, 1 and half of row 2 (weights .4 .4 .2).
    frame = np.repeat(np.array([0, 10, 20, 30, 40], np.uint8)[:, None], 5, axis=1)
    out = atari.AreaResize(5, 5, 2)(frame)
    np.testing.assert_array_equal(out, [[8, 8], [32, 32]])
    # 4 -> 2: plain 2x2 block means (rounded to nearest).
    frame = np.array([[0, 2, 10, 10], [4, 6, 0, 1], [255, 255, 7, 7], [255, 255, 7, 8]],
                     np.uint8)
    out = atari.AreaResize(4, 4, 2)(frame)
    np.testing.assert_array_equal(out, [[3, 5], [255, 7]])
    assert out.dtype == np.uint8


@pytest.fixture(scope="module")
def pong():
    return envs.make("atari:Pong")


def test_spaces_and_dtype(pong):
    assert pong.observation_space.shape == (84, 84, 1)
    assert pong.observation_space.dtype == np.uint8
    assert pong.action_space.n == 6  # Pong's minimal action set
    assert pong.frames_per_step == 4
    obs, info = pong.reset(seed=0)
    assert obs.shape == (84, 84, 1) and obs.dtype == np.uint8
    assert pong.observation_space.contains(obs)
    assert set(info) >= {"raw_reward", "lives", "episode_frame_number"}
    obs, reward, terminated, truncated, info = pong.step(0)
    assert obs.shape == (84, 84, 1) and obs.dtype == np.uint8
    assert isinstance(reward, float) and isinstance(terminated, bool)


def test_full_action_space():
    env = envs.make("atari:Pong", full_action_space=True)
    assert env.action_space.n == 18


def test_frame_skip_is_counted_in_frames():
    env = envs.make("atari:Pong", noop_max=0, frame_skip=3)
    assert env.frames_per_step == 3
    _, info = env.reset(seed=0)
    assert info["episode_frame_number"] == 0
    for step in range(1, 6):
        _, _, _, _, info = env.step(1)
        assert info["episode_frame_number"] == 3 * step


def test_noop_reset_plays_1_to_noop_max_frames(pong):
    starts = [pong.reset(seed=s)[1]["episode_frame_number"] for s in range(6)]
    assert all(1 <= n <= 30 for n in starts)
    assert len(set(starts)) > 1  # the count is drawn, not fixed
    # Without a seed the draws carry on from the last seed's generator.
    unseeded = [pong.reset()[1]["episode_frame_number"] for _ in range(4)]
    assert all(1 <= n <= 30 for n in unseeded)


def test_truncation_at_the_frame_cap():
    env = envs.make("atari:Pong", noop_max=0, max_episode_frames=40)
    env.reset(seed=0)
    for step in range(1, 11):
        _, _, terminated, truncated, info = env.step(0)
        assert not terminated
        assert truncated == (step == 10)
    assert info["episode_frame_number"] == 40
    with pytest.raises(RuntimeError):
        env.step(0)
    _, info = env.reset()
    assert info["episode_frame_number"] == 0  # a fresh episode


def test_cap_counts_noop_frames():
    env = envs.make("atari:Pong", noop_max=30, max_episode_frames=50)
    _, info = env.reset(seed=1)
    noops = info["episode_frame_number"]
    steps, truncated = 0, False
    while not truncated:
        _, _, _, truncated, info = env.step(0)
        steps += 1
    assert info["episode_frame_number"] == 50  # the last step stops at the cap, mid-skip
    assert steps == -(-(50 - noops) // 4)


@pytest.mark.parametrize("sticky", [0.0, 0.25])
def test_determinism_under_a_seed(sticky):
    def run(seed):
        env = envs.make("atari:Pong", sticky_action_probability=sticky)
        obs, info = env.reset(seed=seed)
        actions = np.random.default_rng(0).integers(0, 6, 60)
        trace = [obs, info["episode_frame_number"]]
        for a in actions:
            obs, reward, *_ = env.step(a)
            trace += [obs, reward]
        trace.append(env.reset()[1]["episode_frame_number"])
        return trace

    a, b = run(7), run(7)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_frames_rewards_match_raw_ale_reference():
    """Compare with ALE driven directly: summed rewards, max of the last two frames, resize."""
    env = envs.make("atari:Pong", noop_max=0, sticky_action_probability=0.0)
    obs, _ = env.reset(seed=3)
    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.setFloat("repeat_action_probability", 0.0)
    ale.loadROM(str(roms.get_rom_path("pong")))
    ale.reset_game()
    actions = ale.getMinimalActionSet()
    np.testing.assert_allclose(obs[:, :, 0], _area_resize(ale.getScreenGrayscale(), 84), atol=1)
    rng = np.random.default_rng(1)
    total, nonzero = 0.0, 0
    for _ in range(250):
        a = int(rng.integers(6))
        obs, reward, terminated, _, info = env.step(a)
        want, screens = 0.0, []
        for _ in range(4):
            want += ale.act(actions[a])
            screens.append(ale.getScreenGrayscale())
        assert reward == want and info["raw_reward"] == want
        pooled = np.maximum(screens[-2], screens[-1])
        np.testing.assert_allclose(obs[:, :, 0], _area_resize(pooled, 84), atol=1)
        assert info["episode_frame_number"] == ale.getEpisodeFrameNumber()
        total += reward
        nonzero += reward != 0
        assert not terminated
    assert nonzero > 0  # points were scored, so the reward path was exercised
    assert total == -nonzero  # a random Pong player only ever concedes


def test_life_loss_terminates_and_reset_continues_the_game():
    env = envs.make("atari:Breakout", terminal_on_life_loss=True)
    _, info = env.reset(seed=0)
    lives = info["lives"]
    assert lives == 5
    rng = np.random.default_rng(0)
    terminated = False
    while not terminated:
        _, _, terminated, truncated, info = env.step(int(rng.integers(4)))
        assert not truncated
    assert info["lives"] == lives - 1
    frame = info["episode_frame_number"]
    _, info = env.reset()  # the game goes on with one life fewer
    assert info["lives"] == lives - 1 and info["episode_frame_number"] == frame
    env2 = envs.make("atari:Breakout")  # default: a lost life does not end the episode
    env2.reset(seed=0)
    lives = 5
    while lives == 5:
        _, _, terminated, _, info = env2.step(int(rng.integers(4)))
        lives = info["lives"]
    assert lives == 4 and not terminated


def test_games_by_name():
    assert "Pong" in atari.GAMES and "MsPacman" in atari.GAMES and "Breakout" in atari.GAMES
    assert atari.rom_id("MsPacman") == "ms_pacman"
    assert atari.rom_id("ms_pacman") == "ms_pacman"
    assert envs.make("atari:MsPacman").action_space.n == 9
    assert envs.make("atari:Breakout").action_space.n == 4


def test_unknown_game_lists_close_matches():
    with pytest.raises(envs.UnknownEnvError, match="Pong"):
        envs.make("atari:Pongg")
    with pytest.raises(envs.UnknownEnvError, match="MsPacman"):
        envs.make("atari:MsPacmn")
    with pytest.raises(envs.UnknownEnvError, match="multi-player"):
        envs.make("atari:Combat")


@pytest.mark.slow
def test_every_listed_game_runs():
    for game in atari.GAMES:
        env = envs.make(f"atari:{game}", noop_max=0)
        obs, _ = env.reset()
        assert obs.shape == (84, 84, 1)
        env.step(0)
