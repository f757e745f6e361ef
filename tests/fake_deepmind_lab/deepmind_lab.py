"""A pure-Python stand-in for DeepMind Lab's ``deepmind_lab`` module, for tests only.

It follows the documented Python API (deepmind/lab docs/users/python_api.md) and
the checks and error messages of the real extension (python/dmlab_module.c):
argument types, unknown observations, the status machine (uninitialized ->
running -> terminated / closed), ``step`` taking an np.intc array of shape (7,)
and returning the reward summed over ``num_steps`` frames, ``num_steps()``
counting frames, the level cache protocol (``fetch`` then ``write`` on a
miss), ``observation_spec``/``action_spec`` dicts.

The world is a toy, not a 3D maze: the agent walks a corridor towards a goal
whose distance is drawn from the reset seed. Each frame with
MOVE_BACK_FORWARD = +1 moves it one cell closer (-1 one cell back); reaching the
goal gives +10 and respawns it at the start (like explore_goal_locations). The
frame shows the distance as brightness over seeded noise, so the reward depends
on the action and can be learned from pixels. An episode lasts
``episodeLengthSeconds`` x ``fps`` frames (level options; defaults 90 and 60),
as in real levels. Everything is deterministic given the reset seed.

Tests put this directory on ``sys.path`` only when the real module is missing.
"""

from __future__ import annotations

import os
import random
import tempfile

import numpy as np

FAKE = True  # lets tests tell the fake from the real module

_STATUS_CLOSED = "closed"
_STATUS_UNINITIALIZED = "uninitialized"
_STATUS_RUNNING = "running"
_STATUS_TERMINATED = "terminated"

_ACTION_SPEC = (
    ("LOOK_LEFT_RIGHT_PIXELS_PER_FRAME", -512, 512),
    ("LOOK_DOWN_UP_PIXELS_PER_FRAME", -512, 512),
    ("STRAFE_LEFT_RIGHT", -1, 1),
    ("MOVE_BACK_FORWARD", -1, 1),
    ("FIRE", 0, 1),
    ("JUMP", 0, 1),
    ("CROUCH", 0, 1),
)
_FORWARD = 3
GOAL_REWARD = 10.0

# Levels the fake can load: those DMLab ships that the project uses.
_DMLAB30 = (
    "rooms_collect_good_objects_train", "rooms_collect_good_objects_test",
    "rooms_exploit_deferred_effects_train", "rooms_exploit_deferred_effects_test",
    "rooms_select_nonmatching_object", "rooms_watermaze", "rooms_keys_doors_puzzle",
    "language_select_described_object", "language_select_located_object",
    "language_execute_random_task", "language_answer_quantitative_question",
    "lasertag_one_opponent_small", "lasertag_three_opponents_small",
    "lasertag_one_opponent_large", "lasertag_three_opponents_large",
    "natlab_fixed_large_map", "natlab_varying_map_regrowth", "natlab_varying_map_randomized",
    "skymaze_irreversible_path_hard", "skymaze_irreversible_path_varied",
    "psychlab_arbitrary_visuomotor_mapping", "psychlab_continuous_recognition",
    "psychlab_sequential_comparison", "psychlab_visual_search",
    "explore_object_locations_small", "explore_object_locations_large",
    "explore_obstructed_goals_small", "explore_obstructed_goals_large",
    "explore_goal_locations_small", "explore_goal_locations_large",
    "explore_object_rewards_few", "explore_object_rewards_many",
)
LEVELS = frozenset(
    ["contributed/dmlab30/" + name for name in _DMLAB30]
    + ["lt_chasm", "lt_hallway_slope", "lt_horseshoe_color", "lt_space_bounce_hard",
       "nav_maze_random_goal_01", "nav_maze_random_goal_02", "nav_maze_random_goal_03",
       "nav_maze_static_01", "nav_maze_static_02", "nav_maze_static_03",
       "seekavoid_arena_01", "stairway_to_melon", "tests/empty_room_test"])

_runfiles_path = os.path.dirname(os.path.abspath(__file__))


def version() -> str:
    return "1.0"


def runfiles_path() -> str:
    return _runfiles_path


def set_runfiles_path(path: str) -> bool:
    global _runfiles_path
    if not isinstance(path, str):
        raise TypeError(f"argument 1 must be str, not {type(path).__name__}")
    _runfiles_path = path
    return True


def _type_name(value) -> str:
    return "None" if value is None else type(value).__name__


class Lab:
    """``Lab(level, observations, config={}, renderer='software', level_cache=None)``."""

    def __init__(self, level, observations, config=None, renderer="software",
                 level_cache=None):
        if not isinstance(level, str):
            raise TypeError(f"argument 1 must be str, not {_type_name(level)}")
        if not isinstance(observations, list):
            raise TypeError(f"argument 2 must be list, not {_type_name(observations)}")
        if config is not None and not isinstance(config, dict):
            raise TypeError(f"argument 3 must be dict, not {_type_name(config)}")
        if not isinstance(renderer, str):
            raise TypeError(f"argument 4 must be str, not {_type_name(renderer)}")
        config = dict(config or {})
        for key, value in config.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise TypeError(
                    f"bad argument type for config {key!r}: keys and values must be str, "
                    f"got {_type_name(key)}: {_type_name(value)}")
        if renderer not in ("", "software", "hardware"):
            raise RuntimeError('Failed to set renderer must be "hardware" or "software" '
                               f'actual "{renderer}"!')
        if level not in LEVELS:
            raise RuntimeError(f"Invalid levelName flag '{level}' - \"Could not find level\"")
        try:
            self._width = int(config.get("width", "320"))
            self._height = int(config.get("height", "240"))
            self._fps = int(config.get("fps", "60"))
            seconds = float(config.get("episodeLengthSeconds", "90"))
        except ValueError as e:
            raise RuntimeError(f"Failed to init environment - \"{e}\"") from None
        if self._width < 1 or self._height < 1 or self._fps < 1:
            raise RuntimeError("Failed to init environment - \"width, height, fps must be >= 1\"")
        self._episode_frames = max(1, int(seconds * self._fps))
        self.level = level
        self.config = config
        self.renderer = renderer or "software"
        self.level_cache = level_cache
        spec_names = {spec["name"] for spec in self.observation_spec()}
        for name in observations:
            if not isinstance(name, str):
                raise TypeError(f"observation names must be str, not {_type_name(name)}")
            if name not in spec_names:
                raise ValueError(f"Unknown observation '{name}'.")
        self._observation_names = list(observations)
        self._status = _STATUS_UNINITIALIZED
        self._episode = 0
        self._num_steps = 0
        self._events = []
        self._cache_dir = None
        # World state, set by reset().
        self._frame = 0
        self._position = 0
        self._goal = 0
        self._noise = None

    # -- specs -------------------------------------------------------------------------------

    def observation_spec(self):
        h, w = self._height, self._width
        return [
            {"name": "RGB_INTERLEAVED", "shape": (h, w, 3), "dtype": np.uint8},
            {"name": "RGBD_INTERLEAVED", "shape": (h, w, 4), "dtype": np.uint8},
            {"name": "RGB", "shape": (3, h, w), "dtype": np.uint8},
            {"name": "RGBD", "shape": (4, h, w), "dtype": np.uint8},
            {"name": "VEL.TRANS", "shape": (3,), "dtype": np.float64},
            {"name": "VEL.ROT", "shape": (3,), "dtype": np.float64},
            {"name": "INSTR", "shape": (), "dtype": str},
        ]

    def action_spec(self):
        return [{"min": lo, "max": hi, "name": name} for name, lo, hi in _ACTION_SPEC]

    def fps(self) -> int:
        return self._fps

    # -- episode -----------------------------------------------------------------------------

    def reset(self, episode=-1, seed=None):
        if not isinstance(episode, int) or isinstance(episode, bool):
            raise TypeError(f"'episode' must be int, not {_type_name(episode)}")
        if seed is not None and (not isinstance(seed, (int, np.integer)) or isinstance(seed, bool)):
            raise ValueError(f"'seed' must be int or None, was '{_type_name(seed)}'.")
        if self._status == _STATUS_CLOSED:
            raise RuntimeError("Failed to start environment - \"environment is closed\"")
        if episode >= 0:
            self._episode = episode
        if seed is None:
            seed = random.randrange(2**31)
        rng = np.random.default_rng(int(seed) & 0xFFFFFFFF)
        self._load_map(seed)
        self._goal = int(rng.integers(8, 17))
        self._noise = rng.integers(0, 64, size=(self._height, self._width, 3), dtype=np.uint8)
        self._position = 0
        self._frame = 0
        self._num_steps = 0
        self._events = [("EPISODE", [f"EPISODE {self._episode}"])]
        self._episode += 1
        self._status = _STATUS_RUNNING
        return True

    def _load_map(self, seed) -> None:
        """The level cache protocol: fetch the compiled map, or 'compile' and write it."""
        if self.level_cache is None:
            return
        if self._cache_dir is None:
            self._cache_dir = tempfile.mkdtemp(prefix="fake_dmlab_")
        key = f"{self.level.replace('/', '_')}_{int(seed)}"
        pk3_path = os.path.join(self._cache_dir, key + ".pk3")
        if not self.level_cache.fetch(key, pk3_path):
            with open(pk3_path, "wb") as f:
                f.write(f"compiled map {key}".encode())
            self.level_cache.write(key, pk3_path)
        elif not os.path.isfile(pk3_path):
            raise RuntimeError(f"level cache fetch returned True but wrote no {pk3_path}")

    def is_running(self) -> bool:
        return self._status == _STATUS_RUNNING

    def num_steps(self) -> int:
        return self._num_steps

    def step(self, action, num_steps=1):
        if not isinstance(action, np.ndarray):
            raise TypeError(f"argument 1 must be numpy.ndarray, not {_type_name(action)}")
        if not isinstance(num_steps, int) or isinstance(num_steps, bool):
            raise TypeError(f"'num_steps' must be int, not {_type_name(num_steps)}")
        if self._status != _STATUS_RUNNING:
            raise RuntimeError("Environment in wrong status to advance.")
        if action.ndim != 1 or action.shape[0] != len(_ACTION_SPEC):
            raise ValueError(f"action must have shape ({len(_ACTION_SPEC)})")
        if action.dtype != np.dtype(np.intc):
            raise ValueError("action must have dtype np.intc")
        self._events = []
        move = int(np.clip(action[_FORWARD], -1, 1))
        reward = 0.0
        for _ in range(num_steps):
            self._position = max(0, self._position + move)
            if self._position >= self._goal:
                reward += GOAL_REWARD
                self._position = 0
                self._events.append(("GOAL", [np.array([self._frame], np.float64)]))
            self._frame += 1
            if self._frame >= self._episode_frames:
                self._status = _STATUS_TERMINATED
                self._events.append(("LOG", ["Episode ended"]))
                break
        self._num_steps += num_steps
        return float(reward)

    def events(self):
        if self._status not in (_STATUS_RUNNING, _STATUS_TERMINATED):
            raise RuntimeError("Environment in wrong status for call to events()")
        return list(self._events)

    def observations(self):
        if self._status != _STATUS_RUNNING:
            raise RuntimeError("Environment in wrong status for call to observations()")
        rgb = self._render()
        out = {}
        for name in self._observation_names:
            if name == "RGB_INTERLEAVED":
                out[name] = rgb.copy()
            elif name == "RGBD_INTERLEAVED":
                depth = np.full(rgb.shape[:2] + (1,), self._goal - self._position, np.uint8)
                out[name] = np.concatenate([rgb, depth], -1)
            elif name == "RGB":
                out[name] = np.ascontiguousarray(rgb.transpose(2, 0, 1))
            elif name == "RGBD":
                depth = np.full((1,) + rgb.shape[:2], self._goal - self._position, np.uint8)
                out[name] = np.concatenate([rgb.transpose(2, 0, 1), depth], 0)
            elif name == "VEL.TRANS":
                out[name] = np.zeros(3, np.float64)
            elif name == "VEL.ROT":
                out[name] = np.zeros(3, np.float64)
            elif name == "INSTR":
                out[name] = "Find the goal."
        return out

    def _render(self) -> np.ndarray:
        closeness = int(191 * self._position / max(1, self._goal))
        return self._noise + np.uint8(closeness)

    def close(self) -> bool:
        if self._status == _STATUS_CLOSED:
            return False
        self._status = _STATUS_CLOSED
        return True
