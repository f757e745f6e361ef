"""DMLab adapter against the fake deepmind_lab module (tests/fake_deepmind_lab/).

The fake goes on sys.path only when a real ``deepmind_lab`` cannot be imported;
with a real one installed, the fake-specific tests skip.
"""

import importlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import envs
from envs import UnknownEnvError
from envs import dmlab

ROOT = Path(__file__).resolve().parent.parent
FAKE_DIR = Path(__file__).resolve().parent / "fake_deepmind_lab"


def _real_deepmind_lab_available() -> bool:
    if "deepmind_lab" in sys.modules:
        return not getattr(sys.modules["deepmind_lab"], "FAKE", False)
    return importlib.util.find_spec("deepmind_lab") is not None


REAL = _real_deepmind_lab_available()


@pytest.fixture
def fake_lab(monkeypatch):
    """The fake ``deepmind_lab`` module, importable for the test's duration."""
    if REAL:
        pytest.skip("a real deepmind_lab is installed; these tests need the fake's toy world")
    monkeypatch.syspath_prepend(str(FAKE_DIR))
    monkeypatch.delitem(sys.modules, "deepmind_lab", raising=False)
    module = importlib.import_module("deepmind_lab")
    assert module.FAKE
    yield module
    sys.modules.pop("deepmind_lab", None)


def _short_episode(seconds=1, fps=16):
    return {"episodeLengthSeconds": seconds, "fps": fps}


# -- level names ------------------------------------------------------------------------------

def test_dmlab30_has_thirty_levels_mapped_to_contributed_paths():
    assert len(dmlab.DMLAB30_LEVELS) == 30 == len(set(dmlab.DMLAB30_LEVELS))
    assert dmlab.level_path("rooms_watermaze") == "contributed/dmlab30/rooms_watermaze"
    assert (dmlab.level_path("explore_goal_locations_small")
            == "contributed/dmlab30/explore_goal_locations_small")
    assert (dmlab.level_path("rooms_collect_good_objects_test")
            == "contributed/dmlab30/rooms_collect_good_objects_test")
    assert dmlab.level_path("seekavoid_arena_01") == "seekavoid_arena_01"
    assert dmlab.level_path("tests/empty_room_test") == "tests/empty_room_test"


def test_unknown_level_fails_with_close_matches():
    with pytest.raises(UnknownEnvError, match="did you mean rooms_watermaze"):
        dmlab.level_path("room_watermaze")
    with pytest.raises(UnknownEnvError, match="unknown DMLab level 'pong'"):
        envs.make("dmlab:pong")


def test_every_dmlab30_level_builds_on_the_fake(fake_lab):
    for name in dmlab.DMLAB30_LEVELS:
        env = envs.make(f"dmlab:{name}")
        assert env._lab.level == "contributed/dmlab30/" + name
        env.close()


# -- the env ----------------------------------------------------------------------------------

def test_spaces_config_and_reset(fake_lab):
    env = envs.make("dmlab:explore_goal_locations_small")
    assert env.observation_space.shape == (72, 96, 3)
    assert env.observation_space.dtype == np.uint8
    assert env.action_space.n == 9
    assert env.frames_per_step == 4
    lab = env._lab
    assert lab.config == {"width": "96", "height": "72", "logLevel": "WARN"}
    assert lab.renderer == "software" and lab.level_cache is None
    obs, info = env.reset(seed=1)
    assert obs.shape == (72, 96, 3) and obs.dtype == np.uint8
    assert env.observation_space.contains(obs)
    assert info == {"raw_reward": 0.0}
    assert lab.num_steps() == 0 and lab.is_running()


def test_action_mapping_to_seven_int_dmlab_actions(fake_lab):
    env = envs.make("dmlab:rooms_watermaze")
    expected = {
        0: [0, 0, 0, 1, 0, 0, 0], 1: [0, 0, 0, -1, 0, 0, 0],
        2: [0, 0, -1, 0, 0, 0, 0], 3: [0, 0, 1, 0, 0, 0, 0],
        4: [-20, 0, 0, 0, 0, 0, 0], 5: [20, 0, 0, 0, 0, 0, 0],
        6: [-20, 0, 0, 1, 0, 0, 0], 7: [20, 0, 0, 1, 0, 0, 0],
        8: [0, 0, 0, 0, 1, 0, 0],
    }
    spec = env._lab.action_spec()
    for a, want in expected.items():
        raw = env.raw_action(a)
        assert raw.dtype == np.intc and raw.shape == (7,)
        assert raw.tolist() == want
        assert all(s["min"] <= v <= s["max"] for s, v in zip(spec, raw))
    for bad in (-1, 9):
        with pytest.raises(ValueError):
            env.raw_action(bad)


def test_action_repeat_counts_frames_and_sums_reward(fake_lab):
    env = envs.make("dmlab:explore_goal_locations_small", seed=5)
    env.reset(seed=5)
    # The same level seed on a bare fake Lab, stepped one frame at a time.
    reference = fake_lab.Lab("contributed/dmlab30/explore_goal_locations_small",
                             ["RGB_INTERLEAVED"], config=dict(env.lab_config))
    reference.reset(seed=int(np.random.default_rng(5).integers(0, 2**31 - 1)))
    forward = np.array(dmlab.ACTION_SET[0], np.intc)
    total, steps = 0.0, 0
    while total == 0.0:
        obs, reward, terminated, truncated, info = env.step(0)
        steps += 1
        want = sum(reference.step(forward, num_steps=1) for _ in range(4))
        assert reward == want and info["raw_reward"] == reward
        assert env._lab.num_steps() == 4 * steps
        np.testing.assert_array_equal(obs, reference.observations()["RGB_INTERLEAVED"])
        assert not terminated and not truncated
        total += reward
    assert total == fake_lab.GOAL_REWARD  # forward reaches the goal within 16 frames
    assert steps <= 4


def test_reward_depends_on_action(fake_lab):
    def episode_return(action):
        env = envs.make("dmlab:explore_goal_locations_small", config=_short_episode(5, 16))
        env.reset(seed=0)
        ret, done = 0.0, False
        while not done:
            _, r, done, _, _ = env.step(action)
            ret += r
        return ret
    assert episode_return(0) > 0  # forward
    assert episode_return(1) == 0  # backward
    assert episode_return(4) == 0  # look left


def test_reset_with_seed_is_deterministic(fake_lab):
    env = envs.make("dmlab:rooms_watermaze")
    first, _ = env.reset(seed=7)
    rollout = [env.step(a)[0] for a in (0, 0, 5, 0)]
    again, _ = env.reset(seed=7)
    np.testing.assert_array_equal(first, again)
    for want, a in zip(rollout, (0, 0, 5, 0)):
        np.testing.assert_array_equal(env.step(a)[0], want)
    other, _ = env.reset(seed=8)
    assert not np.array_equal(first, other)
    # Without a new seed, resets continue the env's own seed sequence: fresh levels.
    later, _ = env.reset()
    assert not np.array_equal(later, other)


def test_episode_end_returns_last_observation(fake_lab):
    # 1 s at 16 fps = 16 frames = 4 steps of 4 frames.
    env = envs.make("dmlab:rooms_watermaze", config=_short_episode(1, 16))
    env.reset(seed=3)
    last = None
    for t in range(4):
        obs, _, terminated, truncated, _ = env.step(4)  # look left: no reward, no motion
        assert not truncated
        if t < 3:
            assert not terminated
            last = obs
    assert terminated
    np.testing.assert_array_equal(obs, last)
    assert not env._lab.is_running()
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(0)
    obs, _ = env.reset()
    assert env._lab.is_running() and obs.shape == (72, 96, 3)


def test_options_reach_lab(fake_lab, tmp_path):
    env = envs.make("dmlab:rooms_watermaze", width=32, height=24, action_repeat=2,
                    renderer="hardware", is_test=True, level_cache_dir=str(tmp_path))
    lab = env._lab
    assert lab.renderer == "hardware"
    assert lab.config["allowHoldOutLevels"] == "true"
    assert lab.config["mixerSeed"] == str(0x600D5EED)
    assert env.observation_space.shape == (24, 32, 3)
    assert env.frames_per_step == 2
    obs, _ = env.reset(seed=0)
    assert obs.shape == (24, 32, 3)
    env.step(0)
    assert lab.num_steps() == 2


def test_level_cache_fetch_and_write(fake_lab, tmp_path):
    cache = dmlab.LevelCache(str(tmp_path / "cache"))
    src = tmp_path / "map.pk3"
    src.write_bytes(b"pk3 bytes")
    dest = tmp_path / "fetched.pk3"
    assert not cache.fetch("key", str(dest))
    cache.write("key", str(src))
    stored = Path(cache.path("key"))
    assert stored.read_bytes() == b"pk3 bytes" and stored.parent.parent == tmp_path / "cache"
    assert cache.fetch("key", str(dest)) and dest.read_bytes() == b"pk3 bytes"
    src.write_bytes(b"other")
    cache.write("key", str(src))  # an existing entry is kept
    assert stored.read_bytes() == b"pk3 bytes"
    assert not [p for p in stored.parent.iterdir() if p.suffix == ".tmp"]

    # Through the env: the first reset of a level seed compiles and writes, the second fetches.
    env = envs.make("dmlab:rooms_watermaze", level_cache_dir=str(tmp_path / "cache"))
    env.reset(seed=1)
    entries = sorted(p for p in (tmp_path / "cache").rglob("*") if p.is_file())
    assert len(entries) == 2  # "key" above and this level
    second = envs.make("dmlab:rooms_watermaze", level_cache_dir=str(tmp_path / "cache"))
    second.reset(seed=1)
    assert sorted(p for p in (tmp_path / "cache").rglob("*") if p.is_file()) == entries


# -- the fake follows the real API --------------------------------------------------------------

def test_fake_validates_like_the_real_module(fake_lab):
    Lab = fake_lab.Lab
    with pytest.raises(TypeError, match="must be dict, not list"):
        Lab("tests/empty_room_test", [], ["wrongconfig"])
    with pytest.raises(TypeError, match="str|bad argument type"):
        Lab("tests/empty_room_test", [], {"wrongtype": 3})
    with pytest.raises(TypeError, match="must be list, not None"):
        Lab("tests/empty_room_test", None, {})
    with pytest.raises(ValueError, match="Unknown observation"):
        Lab("tests/empty_room_test", ["nonexisting_obs"], {})
    with pytest.raises(RuntimeError, match="renderer"):
        Lab("tests/empty_room_test", [], renderer="gpu")
    lab = Lab("tests/empty_room_test", ["RGB_INTERLEAVED"], {"width": "8", "height": "6"})
    with pytest.raises(RuntimeError, match="wrong status to advance"):
        lab.step(np.zeros(7, np.intc))  # not reset yet
    with pytest.raises(ValueError, match="'seed' must be int or None, was 'str'"):
        lab.reset(seed="invalid")
    assert lab.reset(seed=1)
    with pytest.raises(ValueError, match="dtype np.intc"):
        lab.step(np.zeros(7, np.int64))
    with pytest.raises(ValueError, match="shape"):
        lab.step(np.zeros(6, np.intc))
    with pytest.raises(TypeError, match="numpy.ndarray"):
        lab.step([0] * 7)
    assert {a["name"] for a in lab.action_spec()} == {
        "LOOK_LEFT_RIGHT_PIXELS_PER_FRAME", "LOOK_DOWN_UP_PIXELS_PER_FRAME",
        "STRAFE_LEFT_RIGHT", "MOVE_BACK_FORWARD", "FIRE", "JUMP", "CROUCH"}
    spec = {o["name"]: o for o in lab.observation_spec()}
    assert spec["RGB_INTERLEAVED"]["shape"] == (6, 8, 3)
    assert lab.observations()["RGB_INTERLEAVED"].shape == (6, 8, 3)
    assert lab.events()[0][0] == "EPISODE"
    assert lab.close() and not lab.close()
    assert not lab.is_running()
    with pytest.raises(RuntimeError, match="wrong status"):
        lab.observations()


def test_fake_episode_ends_after_configured_frames(fake_lab):
    lab = fake_lab.Lab("tests/empty_room_test", [],
                       {"episodeLengthSeconds": "1", "fps": "10"})
    lab.reset(seed=0)
    noop = np.zeros(7, np.intc)
    lab.step(noop, num_steps=9)
    assert lab.is_running() and lab.num_steps() == 9
    lab.step(noop, num_steps=4)
    assert not lab.is_running() and lab.num_steps() == 13
    assert lab.events() == [("LOG", ["Episode ended"])]


# -- missing module and the --check CLI ---------------------------------------------------------

def _without_deepmind_lab_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT)
    return env


@pytest.mark.skipif(REAL, reason="a real deepmind_lab is installed")
def test_missing_module_error_says_what_and_how(monkeypatch):
    monkeypatch.delitem(sys.modules, "deepmind_lab", raising=False)
    with pytest.raises(dmlab.DeepMindLabMissingError) as err:
        dmlab.require_deepmind_lab()
    message = str(err.value)
    assert "deepmind_lab" in message and "cannot be imported" in message
    assert "//python/pip_package:build_pip_package" in message
    assert "dmlab-gym build" in message
    assert isinstance(err.value, ImportError)
    with pytest.raises(dmlab.DeepMindLabMissingError):
        envs.make("dmlab:rooms_watermaze")
    assert dmlab.DMLAB_MISSING_HELP.format(python="py") in dmlab.missing_help().replace(
        sys.executable, "py")


@pytest.mark.skipif(REAL, reason="a real deepmind_lab is installed")
def test_check_cli_exits_1_with_help_when_missing():
    result = subprocess.run([sys.executable, "-m", "envs.dmlab", "--check"], cwd=ROOT,
                            env=_without_deepmind_lab_env(), capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 1
    assert "DeepMind Lab is not installed" in result.stderr
    assert "dmlab-gym build" in result.stderr


def test_check_cli_exits_0_when_importable():
    env = _without_deepmind_lab_env()
    if not REAL:
        env["PYTHONPATH"] = os.pathsep.join([str(FAKE_DIR), str(ROOT)])
    result = subprocess.run([sys.executable, "-m", "envs.dmlab", "--check"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "deepmind_lab is importable" in result.stdout


@pytest.mark.skipif(REAL, reason="runs the fake's toy world")
def test_smoke_cli_runs_a_level_on_the_fake():
    env = _without_deepmind_lab_env()
    env["PYTHONPATH"] = os.pathsep.join([str(FAKE_DIR), str(ROOT)])
    result = subprocess.run(
        [sys.executable, "-m", "envs.dmlab", "--smoke", "rooms_watermaze", "--steps", "20"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "20 steps (80 frames), observation (72, 96, 3) uint8" in result.stdout
