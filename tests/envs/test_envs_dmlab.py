"""The DMLab adapter against the real engine (built by `make dmlab-setup`, required by `make test`).

Levels: `seekavoid_arena_01` (a fixed arena: cheap resets) for most checks;
`explore_goal_locations_small` where a maze must be compiled (the level cache).
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import envs
from tests.support.dmlab_engine import needs_dmlab
from envs import UnknownEnvError
from envs import dmlab

ROOT = Path(__file__).resolve().parents[2]
ARENA = "dmlab:seekavoid_arena_01"
POSITION, ROTATION = "DEBUG.POS.TRANS", "DEBUG.POS.ROT"


def _episode(env, seed, actions):
    """(first observation, [(observation, reward, terminated)] per action)."""
    first, _ = env.reset(seed=seed)
    return first, [env.step(a)[:3] for a in actions]


def _same_episode(a, b):
    (first_a, steps_a), (first_b, steps_b) = a, b
    np.testing.assert_array_equal(first_a, first_b)
    for (obs_a, r_a, d_a), (obs_b, r_b, d_b) in zip(steps_a, steps_b, strict=True):
        np.testing.assert_array_equal(obs_a, obs_b)
        assert (r_a, d_a) == (r_b, d_b)


# -- names (no engine needed) -------------------------------------------------------------------

def test_dmlab30_has_thirty_levels_mapped_to_contributed_paths():
    assert len(dmlab.DMLAB30_LEVELS) == 30 == len(set(dmlab.DMLAB30_LEVELS))
    assert dmlab.level_path("rooms_watermaze") == "contributed/dmlab30/rooms_watermaze"
    assert (dmlab.level_path("rooms_collect_good_objects_test")
            == "contributed/dmlab30/rooms_collect_good_objects_test")
    assert dmlab.level_path("seekavoid_arena_01") == "seekavoid_arena_01"
    assert dmlab.level_path("tests/empty_room_test") == "tests/empty_room_test"


def test_unknown_level_name_fails_with_close_matches():
    with pytest.raises(UnknownEnvError, match="did you mean rooms_watermaze"):
        dmlab.level_path("room_watermaze")
    with pytest.raises(UnknownEnvError, match="unknown DMLab level 'pong'"):
        envs.make("dmlab:pong")


def test_action_set_is_seed_rls():
    assert [list(a) for a in dmlab.ACTION_SET] == [
        [0, 0, 0, 1, 0, 0, 0], [0, 0, 0, -1, 0, 0, 0], [0, 0, -1, 0, 0, 0, 0],
        [0, 0, 1, 0, 0, 0, 0], [-20, 0, 0, 0, 0, 0, 0], [20, 0, 0, 0, 0, 0, 0],
        [-20, 0, 0, 1, 0, 0, 0], [20, 0, 0, 1, 0, 0, 0], [0, 0, 0, 0, 1, 0, 0]]


# -- the engine ---------------------------------------------------------------------------------

@needs_dmlab
def test_every_dmlab30_level_script_is_installed():
    for name in dmlab.DMLAB30_LEVELS + dmlab.DMLAB30_TEST_LEVELS + dmlab.CLASSIC_LEVELS:
        assert dmlab.level_sources(dmlab.level_path(name))


@needs_dmlab
def test_observation_is_a_rendered_rgb_frame():
    env = envs.make(ARENA)
    try:
        assert env.observation_space.shape == (72, 96, 3)
        assert env.observation_space.dtype == np.uint8
        assert (env.action_space.n, env.frames_per_step) == (9, 4)
        obs, info = env.reset(seed=1)
        assert obs.shape == (72, 96, 3) and obs.dtype == np.uint8 and info == {"raw_reward": 0.0}
        assert env.observation_space.contains(obs)
        assert obs.std() > 10  # a rendered scene, not a blank buffer
        assert len({tuple(c) for c in obs.reshape(-1, 3)[::7]}) > 50
    finally:
        env.close()
    small = envs.make(ARENA, width=32, height=24)
    try:
        assert small.reset(seed=1)[0].shape == (24, 32, 3)
        assert small.observation_space.shape == (24, 32, 3)
    finally:
        small.close()


@needs_dmlab
@pytest.mark.parametrize("repeat", [4, 2])
def test_actions_move_and_turn_the_player_as_named(repeat):
    """Each discrete action, held for `repeat` frames on the engine, read back from the engine's
    own player position and yaw."""
    import deepmind_lab
    lab = deepmind_lab.Lab("seekavoid_arena_01", ["RGB_INTERLEAVED", POSITION, ROTATION],
                           {"width": "96", "height": "72"})
    env = envs.make(ARENA, action_repeat=repeat)
    try:
        moves = {}
        for a, name in enumerate(dmlab.ACTION_NAMES):
            lab.reset(seed=1)
            lab.step(np.zeros(7, np.intc), num_steps=8)  # let the spawn settle
            before = lab.observations()
            frames = lab.num_steps()
            lab.step(env.raw_action(a), num_steps=env.frames_per_step)
            after = lab.observations()
            assert lab.num_steps() - frames == repeat
            yaw = np.deg2rad(before[ROTATION][1])
            delta = after[POSITION][:2] - before[POSITION][:2]
            facing = np.array([np.cos(yaw), np.sin(yaw)])
            left = np.array([-np.sin(yaw), np.cos(yaw)])
            moves[name] = (delta @ facing, delta @ left, after[ROTATION][1] - before[ROTATION][1])
    finally:
        lab.close()
        env.close()
    ahead, aside, turn = (np.array(v) for v in zip(*moves.values()))
    names = list(moves)
    moved = {n for n, d in zip(names, np.hypot(ahead, aside)) if d > 0.5}
    turned = {n for n, t in zip(names, turn) if abs(t) > 0.5}
    assert moved == {"forward", "backward", "strafe_left", "strafe_right", "look_left_forward",
                     "look_right_forward"}
    assert turned == {"look_left", "look_right", "look_left_forward", "look_right_forward"}
    assert moves["forward"][0] > 0 > moves["backward"][0]
    assert moves["strafe_left"][1] > 0 > moves["strafe_right"][1]
    assert moves["look_left"][2] > 0 > moves["look_right"][2]
    assert abs(moves["look_left"][2]) == pytest.approx(abs(moves["look_right"][2]))
    assert moves["fire"] == (0.0, 0.0, 0.0)


@needs_dmlab
def test_action_repeat_counts_frames_and_sums_their_rewards():
    """A 4-frame step's reward is the sum of the same 4 frames stepped one by one on a bare engine
    started on the same level seed; a random walk that collects rewards shows it."""
    import deepmind_lab
    env = envs.make(ARENA, seed=11)
    bare = deepmind_lab.Lab("seekavoid_arena_01", ["RGB_INTERLEAVED"], dict(env.lab_config))
    rng = np.random.default_rng(0)
    try:
        env.reset(seed=11)
        bare.reset(seed=int(np.random.default_rng(11).integers(0, 2**31 - 1)))
        rewards = []
        for _ in range(300):  # one 20 s episode
            action = int(rng.choice([0, 0, 0, 6, 7, 4, 5, 2, 3, 1, 8]))  # mostly ahead
            obs, reward, terminated, _, info = env.step(action)
            frames = [bare.step(env.raw_action(action), num_steps=1) for _ in range(4)]
            assert reward == sum(frames) == info["raw_reward"]
            assert env._lab.num_steps() == bare.num_steps()
            rewards.append(reward)
            if terminated:
                break
            np.testing.assert_array_equal(obs, bare.observations()["RGB_INTERLEAVED"])
    finally:
        env.close()
        bare.close()
    assert sum(r != 0 for r in rewards) >= 2  # apples (+1) or lemons (-1) were collected


@needs_dmlab
def test_same_seed_same_frames_other_seed_other_frames():
    actions = [0, 0, 4, 0, 6, 2, 0, 7, 1, 0] * 3
    one, two = envs.make(ARENA), envs.make(ARENA)
    try:
        _same_episode(_episode(one, 7, actions), _episode(two, 7, actions))
        first_other, _ = _episode(two, 8, actions)
        assert not np.array_equal(_episode(one, 7, [])[0], first_other)
        # Unseeded resets go on with the env's own sequence of level seeds.
        assert not np.array_equal(one.reset()[0], two.reset()[0])
    finally:
        one.close()
        two.close()


@needs_dmlab
def test_episode_ends_on_the_engines_clock():
    # 1 s at DMLab's 60 fps = 60 frames = 15 steps of 4.
    env = envs.make(ARENA, config={"episodeLengthSeconds": 1})
    try:
        env.reset(seed=3)
        for t in range(15):
            obs, _, terminated, truncated, _ = env.step(4)
            assert terminated == (t == 14) and not truncated
            if t < 14:
                last = obs
        np.testing.assert_array_equal(obs, last)  # no frame after the end: the last one again
        assert env._lab.num_steps() == 60 and not env._lab.is_running()
        with pytest.raises(RuntimeError, match="call reset"):
            env.step(0)
        assert env.reset()[0].shape == (72, 96, 3) and env._lab.is_running()
    finally:
        env.close()


@needs_dmlab
def test_several_envs_in_one_process_are_independent():
    actions = [0, 6, 0, 7, 0, 2, 0, 3] * 4
    levels = [(ARENA, 1), (ARENA, 2), ("dmlab:rooms_watermaze", 1)]
    alone = []
    for name, seed in levels:
        env = envs.make(name)
        alone.append(_episode(env, seed, actions))
        env.close()
    together = [envs.make(name) for name, _ in levels]
    try:
        firsts = [env.reset(seed=seed)[0] for env, (_, seed) in zip(together, levels)]
        steps = [[] for _ in together]
        for a in actions:  # interleaved, as an actor steps its envs
            for env, record in zip(together, steps):
                record.append(env.step(a)[:3])
        for episode, first, record in zip(alone, firsts, steps):
            _same_episode(episode, (first, record))
    finally:
        for env in together:
            env.close()


@needs_dmlab
def test_level_cache_compiles_a_maze_once(tmp_path):
    cache = tmp_path / "cache"
    first = envs.make("dmlab:explore_goal_locations_small", level_cache_dir=str(cache))
    try:
        obs_first, _ = first.reset(seed=5)
    finally:
        first.close()
    entries = sorted(p for p in cache.rglob("*") if p.is_file())
    assert len(entries) == 1 and entries[0].stat().st_size > 10_000  # the compiled .pk3
    assert not [p for p in cache.rglob("*.tmp")]
    fetched = []
    second = envs.make("dmlab:explore_goal_locations_small", level_cache_dir=str(cache))
    real_fetch = second.level_cache.fetch
    second.level_cache.fetch = lambda key, path: fetched.append(key) or real_fetch(key, path)
    try:
        obs_second, _ = second.reset(seed=5)
    finally:
        second.close()
    assert fetched and sorted(p for p in cache.rglob("*") if p.is_file()) == entries
    np.testing.assert_array_equal(obs_first, obs_second)  # the same maze, from the cache


@needs_dmlab
def test_a_level_without_a_script_fails_in_one_line():
    with pytest.raises(UnknownEnvError) as err:
        envs.make("dmlab:tests/no_such_level")
    assert "'tests/no_such_level' has no script" in str(err.value)
    assert "\n" not in str(err.value)


# -- what the engine was built from -------------------------------------------------------------

@needs_dmlab
def test_build_info_records_the_source_and_what_it_lacked():
    info = dmlab.build_info()
    assert info["commit"] == "b1db91af5b4d2f3a24466f4632a3e5e1b0829cca"
    assert info["complete"] == (not info["absent"])
    maps = dmlab.engine_dir() / "baselab" / "maps"
    for path in info["absent"]:  # a map absent from the source is absent from the engine
        if path.startswith("assets/maps/built/"):
            assert not (maps / Path(path).name).exists(), path
    described = envs.engine_info(ARENA)
    assert described == {**info, "level_absent_assets": dmlab.absent_assets("seekavoid_arena_01")}
    assert envs.engine_info("toy:catch") is None


def _partial_build_missing_a_map():
    info = dmlab.build_info()
    if info["complete"] is not False or not any(
            p.startswith("assets/maps/built/natlab_") for p in info["absent"]):
        pytest.skip("this engine was built from a source with every natlab map")  # upstream git
    return info


@needs_dmlab
def test_a_level_whose_maps_are_absent_is_refused_before_any_engine_exists():
    _partial_build_missing_a_map()
    for name in ("natlab_fixed_large_map", "natlab_varying_map_regrowth",
                 "natlab_varying_map_randomized"):
        with pytest.raises(dmlab.DMLabAssetsMissingError) as err:
            envs.make(f"dmlab:{name}")
        message = str(err.value)
        assert "\n" not in message and "cannot run on this engine" in message
        assert "assets/maps/built/natlab_forage_" in message
    with pytest.raises(dmlab.DMLabAssetsMissingError, match="natlab_forage_ltm_dawn.bsp"):
        envs.make("dmlab:natlab_fixed_large_map")
    # Levels that only lack textures run (drawn with the engine's placeholder) and say so.
    env = envs.make("dmlab:explore_goal_locations_small")
    env.close()
    assert "assets/textures/map/fake_sky.tga" in env.absent_assets


@needs_dmlab
def test_the_engine_itself_ends_the_process_on_an_absent_map():
    """Why the check above exists: the bare engine exits at reset, with no exception."""
    _partial_build_missing_a_map()
    code = ("import deepmind_lab\n"
            "lab = deepmind_lab.Lab('contributed/dmlab30/natlab_fixed_large_map', "
            "['RGB_INTERLEAVED'], {'width': '96', 'height': '72'})\n"
            "lab.reset(seed=1)\nprint('survived')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode != 0 and "survived" not in proc.stdout
    assert "Didn't find map" in proc.stdout + proc.stderr


# -- beside TensorFlow --------------------------------------------------------------------------

@needs_dmlab
@pytest.mark.parametrize("order", ["tensorflow first", "engine first"])
def test_tensorflow_and_dmlab_share_a_process(order):
    """As an IMPALA actor and the learner's spec probe do: TensorFlow and several engines in one
    process, stepping in turns, then a clean exit (the engine bound to TensorFlow's LLVM and
    segfaulted at the first reset before engine-dlopen-deepbind.patch)."""
    code = textwrap.dedent(f"""
        import numpy as np
        if {order == "tensorflow first"}:
            import tensorflow as tf
        import envs
        envs_ = [envs.make("dmlab:seekavoid_arena_01"), envs.make("dmlab:rooms_watermaze")]
        obs = np.stack([env.reset(seed=i)[0] for i, env in enumerate(envs_)])
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Conv2D(4, 3), tf.keras.layers.Flatten(),
                                     tf.keras.layers.Dense(9)])
        for _ in range(20):
            actions = np.argmax(model(obs.astype(np.float32) / 255.0).numpy(), axis=1)
            obs = np.stack([env.step(int(a))[0] for env, a in zip(envs_, actions)])
        for env in envs_:
            env.close()
        print("stepped", obs.shape)
    """)
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "stepped (2, 72, 96, 3)" in proc.stdout


# -- without the engine, and the CLI -------------------------------------------------------------

def test_without_the_engine_the_error_points_at_make_dmlab_setup(monkeypatch):
    monkeypatch.setitem(sys.modules, "deepmind_lab", None)  # import deepmind_lab -> ImportError
    with pytest.raises(dmlab.DeepMindLabMissingError) as err:
        envs.make("dmlab:rooms_watermaze")
    assert "cannot be imported" in str(err.value) and "make dmlab-setup" in str(err.value)
    assert isinstance(err.value, ImportError)


def _cli(*args, **env):
    return subprocess.run([sys.executable, "-m", "envs.dmlab", *args], cwd=ROOT,
                          env={**os.environ, **env}, capture_output=True, text=True, timeout=120)


@needs_dmlab
def test_check_and_smoke_cli_on_the_engine():
    check = _cli("--check")
    assert check.returncode == 0, check.stderr
    assert "deepmind_lab is importable" in check.stdout
    smoke = _cli("--smoke", "seekavoid_arena_01", "--steps", "20")
    assert smoke.returncode == 0, smoke.stderr
    assert "20 steps (80 frames), observation (72, 96, 3) uint8" in smoke.stdout


def test_check_cli_exits_1_with_the_build_command_when_missing(tmp_path):
    # A deepmind_lab that fails to import, first on the path: as a missing or broken build.
    (tmp_path / "deepmind_lab.py").write_text("raise ImportError('libOSMesa.so.8: not found')\n")
    result = _cli("--check", PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    assert result.returncode == 1
    assert "DeepMind Lab is not installed" in result.stderr
    assert "make dmlab-setup" in result.stderr and "libOSMesa.so.8" in result.stderr


def test_build_info_of_an_engine_this_project_did_not_build(tmp_path):
    class Module:  # the one call build_info makes of the module
        @staticmethod
        def runfiles_path():
            return str(tmp_path)
    assert dmlab.build_info(Module) == {
        "source": "not built by scripts/install_dmlab.sh", "commit": None, "complete": None,
        "absent": []}
    (tmp_path / dmlab.BUILD_INFO_FILE).write_text(json.dumps(
        {"overlay_hash": "x", "source": "archive a.tar.xz", "commit": "c", "complete": False,
         "absent": ["assets/maps/built/natlab_forage_ltm_dawn.bsp"]}))
    assert dmlab.build_info(Module)["absent"] == ["assets/maps/built/natlab_forage_ltm_dawn.bsp"]


def test_an_unknown_level_fails_on_a_complete_build_too(tmp_path):
    """With nothing absent there is no asset to look for, but the script must still exist."""
    class Module:
        @staticmethod
        def runfiles_path():
            return str(tmp_path)
    levels = tmp_path / "baselab" / "game_scripts" / "levels"
    levels.mkdir(parents=True)
    (levels / "arena.lua").write_text("return {}\n")
    (tmp_path / dmlab.BUILD_INFO_FILE).write_text(json.dumps(
        {"source": "git", "commit": "c", "complete": True, "absent": []}))
    assert dmlab.check_level("arena", Module) == []
    with pytest.raises(UnknownEnvError, match="'no_such_level' has no script"):
        dmlab.check_level("no_such_level", Module)
