"""DeepMind Lab adapter: ``envs.make('dmlab:<level>')`` on the ``deepmind_lab`` module.

Follows the setup SEED RL and IMPALA use for DMLab-30: 96x72 RGB frames
(``RGB_INTERLEAVED``, shape ``(72, 96, 3)`` uint8), the 9-action discrete set
below, each action held for 4 frames (``lab.step(action, num_steps=4)``, which
returns the reward summed over those frames), and a fresh level seed drawn from
the env's own generator at every reset.

Levels: the 30 DMLab-30 short names (``rooms_watermaze`` ->
``contributed/dmlab30/rooms_watermaze``), the two hold-out ``*_test`` variants,
the classic top-level levels (``seekavoid_arena_01``, ...), or any explicit level
path containing ``/`` (passed through as is).

``deepmind_lab`` is not on PyPI: ``make dmlab-setup`` builds it from source
(scripts/install_dmlab.sh) and records what it was built from in
``seed_build.json`` beside the module. This module imports it only when an env
is built, so importing the adapter never fails; ``python -m envs.dmlab --check``
tells whether it is importable.

Before an engine is made, the level's script must exist in the installed engine
and no map it names may be absent from the source the engine was built from: the
engine ends the whole process when it cannot find a map, so that is checked here
first (:func:`check_level`).

No TensorFlow here (adapters never import it).
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import importlib
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
from gymnasium import spaces

from envs import UnknownEnvError

# The DMLab-30 training levels (Espeholt et al. 2018, appendix; seed_rl dmlab/games.py).
DMLAB30_LEVELS = (
    "rooms_collect_good_objects_train",
    "rooms_exploit_deferred_effects_train",
    "rooms_select_nonmatching_object",
    "rooms_watermaze",
    "rooms_keys_doors_puzzle",
    "language_select_described_object",
    "language_select_located_object",
    "language_execute_random_task",
    "language_answer_quantitative_question",
    "lasertag_one_opponent_small",
    "lasertag_three_opponents_small",
    "lasertag_one_opponent_large",
    "lasertag_three_opponents_large",
    "natlab_fixed_large_map",
    "natlab_varying_map_regrowth",
    "natlab_varying_map_randomized",
    "skymaze_irreversible_path_hard",
    "skymaze_irreversible_path_varied",
    "psychlab_arbitrary_visuomotor_mapping",
    "psychlab_continuous_recognition",
    "psychlab_sequential_comparison",
    "psychlab_visual_search",
    "explore_object_locations_small",
    "explore_object_locations_large",
    "explore_obstructed_goals_small",
    "explore_obstructed_goals_large",
    "explore_goal_locations_small",
    "explore_goal_locations_large",
    "explore_object_rewards_few",
    "explore_object_rewards_many",
)
# Held-out evaluation variants of the two *_train levels (need allowHoldOutLevels).
DMLAB30_TEST_LEVELS = (
    "rooms_collect_good_objects_test",
    "rooms_exploit_deferred_effects_test",
)
DMLAB30_PREFIX = "contributed/dmlab30/"
# Levels that live directly in game_scripts/levels.
CLASSIC_LEVELS = (
    "lt_chasm", "lt_hallway_slope", "lt_horseshoe_color", "lt_space_bounce_hard",
    "nav_maze_random_goal_01", "nav_maze_random_goal_02", "nav_maze_random_goal_03",
    "nav_maze_static_01", "nav_maze_static_02", "nav_maze_static_03",
    "seekavoid_arena_01", "stairway_to_melon",
)

# The action set of SEED RL (dmlab/env.py DEFAULT_ACTION_SET) and IMPALA. Each is a
# DMLab action: (LOOK_LEFT_RIGHT_PIXELS_PER_FRAME, LOOK_DOWN_UP_PIXELS_PER_FRAME,
# STRAFE_LEFT_RIGHT, MOVE_BACK_FORWARD, FIRE, JUMP, CROUCH).
ACTION_SET = (
    (0, 0, 0, 1, 0, 0, 0),  # forward
    (0, 0, 0, -1, 0, 0, 0),  # backward
    (0, 0, -1, 0, 0, 0, 0),  # strafe left
    (0, 0, 1, 0, 0, 0, 0),  # strafe right
    (-20, 0, 0, 0, 0, 0, 0),  # look left
    (20, 0, 0, 0, 0, 0, 0),  # look right
    (-20, 0, 0, 1, 0, 0, 0),  # look left + forward
    (20, 0, 0, 1, 0, 0, 0),  # look right + forward
    (0, 0, 0, 0, 1, 0, 0),  # fire
)
ACTION_NAMES = (
    "forward", "backward", "strafe_left", "strafe_right", "look_left", "look_right",
    "look_left_forward", "look_right_forward", "fire",
)

OBSERVATION = "RGB_INTERLEAVED"
# mixerSeed SEED RL and the DMLab docs use for evaluation on hold-out levels.
EVAL_MIXER_SEED = 0x600D5EED

DMLAB_MISSING_HELP = """\
DeepMind Lab is not installed: the Python module `deepmind_lab` cannot be imported
by {python}.
It is not on PyPI; this project builds it from source with Bazel, offline, from
upstream's git (or an archive or directory of it, DMLAB_SOURCE=...):

  make dmlab-setup      # scripts/install_dmlab.sh; see docs/dmlab.md

Check with:  {python} -m envs.dmlab --check"""


class DeepMindLabMissingError(ImportError):
    """``deepmind_lab`` cannot be imported; the message says how to install it."""


class DMLabAssetsMissingError(RuntimeError):
    """The level names maps that the installed engine was built without."""


# What scripts/install_dmlab.sh writes beside the module: the source, its commit, and the files
# that source lacked (a partial copy lists them in MISSING_FROM_THIS_COPY.txt).
BUILD_INFO_FILE = "seed_build.json"
# A Lua `require 'factories.explore.factory'`, with or without parentheses.
_REQUIRE = re.compile(r"""require\s*\(?\s*['"]([\w./]+)['"]""")


def missing_help() -> str:
    """:data:`DMLAB_MISSING_HELP` with this interpreter's path filled in."""
    return DMLAB_MISSING_HELP.format(python=sys.executable or "python")


def require_deepmind_lab():
    """Import and return the ``deepmind_lab`` module, or raise with install steps."""
    try:
        return importlib.import_module("deepmind_lab")
    except ImportError as e:  # includes a .so that fails to load (missing libOSMesa, ...)
        raise DeepMindLabMissingError(
            f"{missing_help()}\n\n(import error: {e})") from e


def engine_dir(module=None) -> Path:
    """The installed engine's runfiles: the engine libraries, ``baselab/`` (assets, maps and
    ``game_scripts``) and :data:`BUILD_INFO_FILE`."""
    module = module or require_deepmind_lab()
    return Path(module.runfiles_path())


def build_info(module=None) -> dict:
    """What the installed engine was built from: ``source``, ``commit``, ``complete`` and the
    ``absent`` files of a partial source. An engine this project did not build is recorded
    as such, with ``complete`` unknown (None)."""
    path = engine_dir(module) / BUILD_INFO_FILE
    try:
        with open(path) as f:
            info = json.load(f)
    except FileNotFoundError:
        return {"source": "not built by scripts/install_dmlab.sh", "commit": None,
                "complete": None, "absent": []}
    return {k: info[k] for k in ("source", "commit", "complete", "absent")}


def level_sources(level: str, module=None) -> list[Path]:
    """The level's Lua script and every game script it requires, transitively."""
    game_scripts = engine_dir(module) / "baselab" / "game_scripts"
    script = game_scripts / "levels" / f"{level}.lua"
    if not script.is_file():
        raise UnknownEnvError(
            f"DMLab level {level!r} has no script in the installed engine ({script} is missing)")
    found, todo = [], [script]
    while todo:
        path = todo.pop()
        if path in found:
            continue
        found.append(path)
        for name in _REQUIRE.findall(path.read_text(errors="replace")):
            candidate = game_scripts / (name.replace(".", "/") + ".lua")
            if candidate.is_file():
                todo.append(candidate)
    return found


def _names(path: str) -> tuple[str, ...]:
    """How a level script can name an asset file: its stem, and for a numbered family
    (``natlab_forage_stm_054``) the prefix a script formats the numbers onto."""
    stem = Path(path).stem
    prefix = stem.rstrip("0123456789")
    return (stem, prefix) if prefix != stem and len(prefix) >= 8 else (stem,)


def absent_assets(level: str, module=None, info: dict | None = None) -> list[str]:
    """The files absent from the engine's source that ``level``'s scripts name;
    UnknownEnvError when the installed engine has no script for ``level``. ``info`` is the
    engine's :func:`build_info` when the caller already read it."""
    sources = level_sources(level, module)  # first: an unknown level fails on any build
    absent = (info or build_info(module))["absent"]
    if not absent:
        return []
    text = "\n".join(p.read_text(errors="replace") for p in sources)
    return [path for path in absent if any(name in text for name in _names(path))]


def check_level(level: str, module=None) -> list[str]:
    """Raise unless ``level`` can run on the installed engine; return the absent non-map assets
    it names (textures and models the engine draws with its placeholder).

    A missing map cannot be drawn around: the engine prints "Didn't find map" at reset and ends
    the process, so such a level is refused here, before any engine exists."""
    info = build_info(module)
    absent = absent_assets(level, module, info)
    maps = [p for p in absent if p.startswith("assets/maps/")]
    if maps:
        shown = ", ".join(maps[:3]) + (f" and {len(maps) - 3} more" if len(maps) > 3 else "")
        raise DMLabAssetsMissingError(
            f"DMLab level {level!r} cannot run on this engine: {len(maps)} of the maps it names "
            f"are absent from the source it was built from ({info['source']}): "
            f"{shown}")
    return absent


def level_path(name: str) -> str:
    """The DMLab level script for ``name``: a DMLab-30 short name, a classic level or a path."""
    if "/" in name:
        return name
    if name in DMLAB30_LEVELS or name in DMLAB30_TEST_LEVELS:
        return DMLAB30_PREFIX + name
    if name in CLASSIC_LEVELS:
        return name
    known = DMLAB30_LEVELS + DMLAB30_TEST_LEVELS + CLASSIC_LEVELS
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    raise UnknownEnvError(
        f"unknown DMLab level {name!r}{hint}; DMLab-30 levels: {', '.join(DMLAB30_LEVELS)}; "
        "or give a level path such as contributed/dmlab30/rooms_watermaze")


class LevelCache:
    """A directory of compiled levels (.pk3), shared by every env that points at it.

    DMLab calls ``fetch(key, pk3_path)`` before compiling a level map: copy the
    cached file to ``pk3_path`` and return True, or return False to make it
    compile; after compiling it calls ``write(key, pk3_path)``. Writes go through
    a temporary file and a rename so that concurrent actors never read half a file.
    A ``~`` at the start of ``cache_dir`` is the user's home, so a config can name a
    cache outside any run directory (``~/.cache/seed_rl/dmlab_levels``).
    """

    def __init__(self, cache_dir: str):
        self.cache_dir = os.path.expanduser(str(cache_dir))

    def path(self, key: str) -> str:
        digest = hashlib.md5(key.encode("utf-8")).hexdigest()
        return os.path.join(self.cache_dir, digest[:3], digest[3:])

    def fetch(self, key: str, pk3_path: str) -> bool:
        path = self.path(key)
        try:
            shutil.copyfile(path, pk3_path)
        except OSError:
            return False
        return True

    def write(self, key: str, pk3_path: str) -> None:
        path = self.path(key)
        if os.path.exists(path):
            return
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        os.close(fd)
        try:
            shutil.copyfile(pk3_path, tmp)
            os.replace(tmp, path)
        except OSError:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


class DMLabEnv:
    """One DeepMind Lab level as a Gymnasium-style env with a 9-action discrete space."""

    def __init__(self, level: str, *, width: int = 96, height: int = 72,
                 action_repeat: int = 4, seed: int | None = None,
                 level_cache_dir: str | None = None, renderer: str = "software",
                 is_test: bool = False, config: dict | None = None):
        if action_repeat < 1:
            raise ValueError(f"action_repeat must be at least 1, got {action_repeat}")
        deepmind_lab = require_deepmind_lab()
        self.absent_assets = check_level(level, deepmind_lab)
        self.level = level
        self.frames_per_step = int(action_repeat)
        settings = {"width": width, "height": height, "logLevel": "WARN"}
        if is_test:
            settings.update(allowHoldOutLevels="true", mixerSeed=EVAL_MIXER_SEED)
        settings.update(config or {})
        self.lab_config = {str(k): str(v) for k, v in settings.items()}
        self.level_cache = LevelCache(level_cache_dir) if level_cache_dir else None
        self._lab = deepmind_lab.Lab(level, [OBSERVATION], config=self.lab_config,
                                     renderer=renderer, level_cache=self.level_cache)
        self._actions = [np.array(a, dtype=np.intc) for a in ACTION_SET]
        self.observation_space = spaces.Box(0, 255, (int(height), int(width), 3), np.uint8)
        self.action_space = spaces.Discrete(len(ACTION_SET))
        self._rng = np.random.default_rng(seed)
        self._last_observation = None
        self._done = True

    def raw_action(self, action: int) -> np.ndarray:
        """The 7-int DMLab action (np.intc) for discrete ``action``."""
        action = int(action)
        if not 0 <= action < len(self._actions):
            raise ValueError(f"DMLab action must be in [0, {len(self._actions)}), got {action}")
        return self._actions[action]

    def _observation(self) -> np.ndarray:
        return np.asarray(self._lab.observations()[OBSERVATION], dtype=np.uint8)

    def reset(self, seed: int | None = None, options=None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._lab.reset(seed=int(self._rng.integers(0, 2**31 - 1)))
        self._last_observation = self._observation()
        self._done = False
        return self._last_observation, {"raw_reward": 0.0}

    def step(self, action):
        if self._done:
            raise RuntimeError("DMLabEnv.step called on a finished episode; call reset() first")
        reward = float(self._lab.step(self.raw_action(action), num_steps=self.frames_per_step))
        if self._lab.is_running():
            self._last_observation = self._observation()
        else:
            # DMLab has no observation once the episode is over: keep the last one.
            self._done = True
        return self._last_observation, reward, self._done, False, {"raw_reward": reward}

    def close(self):
        self._lab.close()


def observation_kind(name: str, **kwargs) -> str:
    """What its envs observe (``envs.OBSERVATION_KINDS``)."""
    del name, kwargs
    return "frames"


def make(name: str, **kwargs) -> DMLabEnv:
    """Build the DMLab env for level ``name`` (see :func:`level_path`)."""
    return DMLabEnv(level_path(name), **kwargs)


def engine_info(name: str) -> dict:
    """For a run's config.json: what the engine was built from (:func:`build_info`) and the
    absent assets that level ``name`` names."""
    info = build_info()
    return {**info, "level_absent_assets": absent_assets(level_path(name), info=info)}


def _smoke(level: str, steps: int) -> int:
    env = make(level)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    total, episodes = 0.0, 0
    for _ in range(steps):
        obs, reward, terminated, truncated, _ = env.step(int(rng.integers(env.action_space.n)))
        total += reward
        if terminated or truncated:
            episodes += 1
            obs, _ = env.reset()
    env.close()
    print(f"dmlab:{level}: {steps} steps ({steps * env.frames_per_step} frames), "
          f"observation {obs.shape} {obs.dtype}, {episodes} episodes ended, reward {total:g}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m envs.dmlab", description="Check the DeepMind Lab installation.")
    parser.add_argument("--check", action="store_true",
                        help="exit 0 if deepmind_lab imports, else 1 with install steps")
    parser.add_argument("--smoke", metavar="LEVEL",
                        help="also build LEVEL (e.g. rooms_watermaze) and take random steps")
    parser.add_argument("--steps", type=int, default=100, help="steps for --smoke")
    args = parser.parse_args(argv)
    if not (args.check or args.smoke):
        parser.error("give --check and/or --smoke LEVEL")
    try:
        module = require_deepmind_lab()
    except DeepMindLabMissingError as e:
        print(e, file=sys.stderr)
        return 1
    print(f"deepmind_lab is importable ({getattr(module, '__file__', module)})")
    if args.smoke:
        return _smoke(args.smoke, args.steps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
