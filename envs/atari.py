"""Atari 2600 games through ale-py's ``ALEInterface``, with the usual DQN preprocessing.

``envs.make('atari:Pong', **kwargs)``; any game whose ROM the ale-py wheel ships
works by its CamelCase name (``Breakout``, ``MsPacman``) or ROM id
(``ms_pacman``). Keywords and defaults (the settings of SEED RL's Atari runs,
after Machado et al. 2018 where they differ from DQN's):

* ``frame_skip=4``: each ``step`` repeats the action for 4 emulator frames and
  returns the pixel-wise max of the last two of them (Atari sprites flicker).
* ``noop_max=30``: ``reset`` plays a uniformly drawn 1..30 no-op frames.
* ``sticky_action_probability=0.0``: ALE's ``repeat_action_probability``
  (0.25 for the Machado et al. protocol).
* ``full_action_space=False``: the game's minimal action set, else all 18.
* ``terminal_on_life_loss=False``: when True, losing a life ends the episode
  (``terminated``); the following ``reset`` then carries on the same game
  instead of restarting it, until the game is really over.
* ``max_episode_frames=108_000``: emulator frames (30 minutes at 60 Hz,
  no-ops included) after which the episode is *truncated*.
* ``screen_size=84``: frames are grayscale, resized (area filter) to
  ``screen_size x screen_size``.

Observation: one frame, ``(84, 84, 1)`` uint8 (the network stacks frames).
``frames_per_step = frame_skip``. ``info`` carries ``raw_reward`` (the game
score of the step, summed over the skipped frames), ``lives`` and
``episode_frame_number``. ``reset(seed=s)`` seeds both the emulator (and its
sticky actions) and the no-op draw, so a seeded run repeats exactly.
"""

from __future__ import annotations

import difflib
import re

import ale_py
import numpy as np
from ale_py import roms
from gymnasium import spaces

from envs import UnknownEnvError


def _camel(rom_id: str) -> str:
    return "".join(part.capitalize() for part in rom_id.split("_"))


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


# ROMs the wheel ships that hold only multi-player modes: ALE's single-agent interface cannot
# load them (it exits the process), and ale-py's own Gymnasium registration skips them too.
MULTIPLAYER_ONLY = frozenset({"combat", "joust", "maze_craze", "warlords"})

#: Every single-player game the installed ale-py ships, by CamelCase name.
GAMES = tuple(sorted(_camel(r) for r in roms.get_all_rom_ids() if r not in MULTIPLAYER_ONLY))
_ROM_IDS = {_key(_camel(r)): r for r in roms.get_all_rom_ids() if r not in MULTIPLAYER_ONLY}


def rom_id(game: str) -> str:
    """The ale-py ROM id of ``game`` (``MsPacman`` -> ``ms_pacman``), or UnknownEnvError."""
    found = _ROM_IDS.get(_key(game))
    if found is None and _key(game) in {_key(r) for r in MULTIPLAYER_ONLY}:
        raise UnknownEnvError(f"Atari game {game!r} has only multi-player modes, which ALE's "
                              "single-agent interface does not run")
    if found is None:
        close = difflib.get_close_matches(game, GAMES, n=5, cutoff=0.5)
        if not close:
            close = [_camel(_ROM_IDS[k]) for k in
                     difflib.get_close_matches(_key(game), list(_ROM_IDS), n=5, cutoff=0.5)]
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise UnknownEnvError(f"unknown Atari game {game!r}{hint} ({len(GAMES)} games are "
                              "available: envs.atari.GAMES)")
    return found


def area_weights(n_in: int, n_out: int) -> np.ndarray:
    """``[n_out, n_in]`` weights of an area resize: the share of each input cell in an output cell.

    Output cell ``o`` covers input span ``[o * n_in / n_out, (o + 1) * n_in / n_out)``; each
    input cell weighs by its overlap with that span, divided by the span's length (what
    OpenCV's ``INTER_AREA``, used upstream, computes when shrinking).
    """
    scale = n_in / n_out
    lo = np.arange(n_out)[:, None] * scale
    cells = np.arange(n_in)[None, :]
    overlap = np.minimum(lo + scale, cells + 1) - np.maximum(lo, cells)
    return (np.clip(overlap, 0.0, None) / scale).astype(np.float32)


class AreaResize:
    """Shrink 2-D uint8 frames of ``(height, width)`` to ``(size, size)`` by area averaging.

    Each output cell mixes at most a few input cells, so the weights are kept banded
    (indices + weights per output cell) and applied with elementwise NumPy: a dense
    BLAS matmul would be no faster here and its threads thrash a busy machine.
    """

    def __init__(self, height: int, width: int, size: int):
        self._rows = self._banded(area_weights(height, size))
        self._cols = self._banded(area_weights(width, size))

    @staticmethod
    def _banded(weights):
        band = int((weights > 0).sum(axis=1).max())
        first = np.argmax(weights > 0, axis=1)
        index = np.minimum(first[:, None] + np.arange(band), weights.shape[1] - 1)
        taken = np.take_along_axis(weights, index, axis=1)
        # Where the band ran past the last cell, the clipped index repeats: weigh it 0.
        taken[first[:, None] + np.arange(band) >= weights.shape[1]] = 0.0
        return index, taken.astype(np.float32)

    def __call__(self, frame: np.ndarray) -> np.ndarray:
        (ri, rw), (ci, cw) = self._rows, self._cols
        x = frame.astype(np.float32)
        x = np.einsum("ok,okw->ow", rw, x[ri])  # [size, width]
        x = np.einsum("ok,hok->ho", cw, x[:, ci])  # [size, size]
        return np.clip(np.rint(x), 0, 255).astype(np.uint8)


class AtariEnv:
    """One ALE game with frame skip + max-pool, grayscale 84x84 frames, no-op starts."""

    def __init__(self, game: str, frame_skip: int = 4, noop_max: int = 30,
                 sticky_action_probability: float = 0.0, full_action_space: bool = False,
                 terminal_on_life_loss: bool = False, max_episode_frames: int = 108_000,
                 screen_size: int = 84):
        if frame_skip < 1:
            raise ValueError(f"frame_skip must be at least 1, got {frame_skip}")
        if noop_max < 0:
            raise ValueError(f"noop_max must be >= 0, got {noop_max}")
        if not 0.0 <= sticky_action_probability <= 1.0:
            raise ValueError("sticky_action_probability must lie in [0, 1], got "
                             f"{sticky_action_probability}")
        if max_episode_frames < 1:
            raise ValueError(f"max_episode_frames must be at least 1, got {max_episode_frames}")
        self.game = _camel(rom_id(game))
        self._rom_path = roms.get_rom_path(rom_id(game))
        self.frame_skip = self.frames_per_step = int(frame_skip)
        self.noop_max = int(noop_max)
        self.terminal_on_life_loss = bool(terminal_on_life_loss)
        self.max_episode_frames = int(max_episode_frames)
        self.screen_size = int(screen_size)

        self._ale = ale_py.ALEInterface()
        self._ale.setLoggerMode(ale_py.LoggerMode.Error)
        self._ale.setFloat("repeat_action_probability", float(sticky_action_probability))
        self._rng = np.random.default_rng()
        self._seed_emulator(int(self._rng.integers(2**31)))
        self._actions = (self._ale.getLegalActionSet() if full_action_space
                         else self._ale.getMinimalActionSet())
        height, width = self._ale.getScreenDims()
        self._screens = np.zeros((2, height, width), np.uint8)
        self._resize = AreaResize(height, width, self.screen_size)
        self.observation_space = spaces.Box(0, 255, (self.screen_size, self.screen_size, 1),
                                            np.uint8)
        self.action_space = spaces.Discrete(len(self._actions))
        self._episode_over = True  # step() needs a reset() first
        self._game_continues = False  # a life was lost, the game goes on (life-loss mode)
        self._lives = 0

    def _seed_emulator(self, ale_seed: int) -> None:
        self._ale.setInt("random_seed", ale_seed)
        self._ale.loadROM(str(self._rom_path))  # the seed takes effect on loading

    def _observation(self, screens: np.ndarray) -> np.ndarray:
        frame = screens.max(axis=0) if screens.shape[0] > 1 else screens[0]
        return self._resize(frame)[:, :, None]

    def _info(self, raw_reward: float) -> dict:
        return {"raw_reward": raw_reward, "lives": int(self._ale.lives()),
                "episode_frame_number": int(self._ale.getEpisodeFrameNumber())}

    def reset(self, seed: int | None = None, options=None):
        if seed is not None:
            seeds = np.random.SeedSequence(seed).generate_state(2)
            self._rng = np.random.default_rng(int(seeds[0]))
            self._seed_emulator(int(seeds[1] % 2**31))
            self._game_continues = False
        if self._game_continues and not self._ale.game_over():
            # Life-loss mode: the "episode" that ended was one life; play on.
            self._game_continues = False
        else:
            self._ale.reset_game()
            noops = int(self._rng.integers(1, self.noop_max + 1)) if self.noop_max else 0
            for _ in range(noops):
                self._ale.act(ale_py.Action.NOOP)
                if self._ale.game_over():
                    self._ale.reset_game()
        self._lives = self._ale.lives()
        self._episode_over = False
        self._ale.getScreenGrayscale(self._screens[0])
        return self._observation(self._screens[:1]), self._info(0.0)

    def step(self, action):
        if self._episode_over:
            raise RuntimeError("AtariEnv.step called after the episode ended; call reset()")
        ale_action = self._actions[int(action)]
        reward = 0.0
        grabbed = 0
        for i in range(self.frame_skip):
            reward += self._ale.act(ale_action)
            over = (self._ale.game_over()
                    or self._ale.getEpisodeFrameNumber() >= self.max_episode_frames)
            if i >= self.frame_skip - 2 or over:
                self._ale.getScreenGrayscale(self._screens[grabbed % 2])
                grabbed += 1
            if over:
                break
        screens = self._screens if grabbed >= 2 else self._screens[(grabbed - 1) % 2:][:1]
        terminated = bool(self._ale.game_over())
        truncated = (not terminated
                     and self._ale.getEpisodeFrameNumber() >= self.max_episode_frames)
        lives = self._ale.lives()
        if self.terminal_on_life_loss and not terminated and lives < self._lives:
            terminated = True
            self._game_continues = True
        self._lives = lives
        self._episode_over = terminated or truncated
        return self._observation(screens), reward, terminated, truncated, self._info(reward)

    def close(self):
        pass


def observation_kind(name: str, **kwargs) -> str:
    """What its envs observe (``envs.OBSERVATION_KINDS``)."""
    del name, kwargs
    return "frames"


def make(name: str, **kwargs):
    """Build ``AtariEnv(name, **kwargs)`` (see the module docstring for the keywords)."""
    return AtariEnv(name, **kwargs)
