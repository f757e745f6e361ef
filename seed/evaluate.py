"""``seed evaluate DIR``: play a trained run's policy for N episodes, in this process.

Reads ``DIR/config.json`` and ``DIR/checkpoint.npz``, builds the agent with
:func:`seed.agents.make_agent`, restores its variables, and plays ``--episodes``
episodes of the run's env one after another with the agent's ``infer`` (batch of one,
the recurrent state carried across steps as in training). No learner, no actors, no
network connection.

Action choice (the same for both agents, so results compare):

* greedy by default: the argmax of the agent's output, ``policy_logits`` for V-trace
  (the mode of the policy, not a sample) and ``q_values`` for R2D2;
* ``--epsilon E``: with probability E a uniformly random action instead (E = 0.001
  or 0.01 are the usual Atari evaluation settings);
* ``--sample`` (V-trace only meaningful): the action the agent itself drew from its
  policy, as the actors did during training (for R2D2 that is its per-env
  epsilon-greedy action of env 0).

Writes ``DIR/eval.csv`` (``episode, return, length, frames``: return is the raw game
score, length in env steps, frames in env frames = steps x frame skip) and prints the
mean and std of the returns. ``--video out.mp4`` (or ``.gif``) records every episode played
(one unless ``--episodes`` says otherwise) as the agent saw it, the episode and its return
so far drawn on each frame: H.264 through imageio-ffmpeg (its wheel carries the ffmpeg
binary), a GIF through Pillow. The file is written beside its final path and renamed into
place when complete, so a failure leaves nothing half-written. Nothing here is timed.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

EVAL_CSV = "eval.csv"
EVAL_COLUMNS = ["episode", "return", "length", "frames"]
VIDEO_FPS = 15  # an Atari step is 4 frames of 60 per second: 15 steps a second is real time
VIDEO_SUFFIXES = (".mp4", ".gif")
_MIN_RECORD_SIZE = 256  # pixels along the longer side of a recorded frame


class EvaluateError(RuntimeError):
    """Evaluation cannot run; the message is one line."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "evaluate", help="play a run's checkpointed policy for N episodes; writes DIR/eval.csv",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_dir", metavar="DIR", help="run directory (config.json, checkpoint.npz)")
    p.add_argument("--episodes", type=int, default=None,
                   help="episodes to play (required without --video; with it, default 1)")
    p.add_argument("--epsilon", type=float, default=0.0,
                   help="probability of a uniformly random action (default 0: greedy)")
    p.add_argument("--sample", action="store_true",
                   help="act with the agent's own (sampled) action instead of the argmax")
    p.add_argument("--seed", type=int, default=0,
                   help="seeds the env resets and the epsilon draws (default 0)")
    p.add_argument("--max-episode-steps", type=int, default=0,
                   help="cut an episode after this many env steps (default 0: the env's own "
                        "limit)")
    p.add_argument("--video", metavar="PATH",
                   help="record the episodes played, their return drawn on each frame: "
                        "PATH.mp4 (H.264) or PATH.gif")
    p.set_defaults(fn=cmd_evaluate)


def cmd_evaluate(args) -> int:
    episodes = args.episodes
    if episodes is None:
        if not args.video:
            print("seed evaluate: error: give --episodes N (or --video PATH, which plays one "
                  "episode unless --episodes says otherwise)", file=sys.stderr)
            return 2
        episodes = 1
    try:
        result = evaluate(args.run_dir, episodes=episodes, epsilon=args.epsilon,
                          sample=args.sample, seed=args.seed,
                          max_episode_steps=args.max_episode_steps, video=args.video)
    except EvaluateError as e:
        print(f"seed evaluate: error: {e}", file=sys.stderr)
        return 2
    print(format_result(result))
    return 0


# --------------------------------------------------------------------------- evaluation

def _load_config(run_dir: Path):
    from seed.config import ConfigError, from_saved
    from seed.results.files import RunDirError
    from seed.results.run_dirs import load_config
    try:
        saved = load_config(run_dir)["config"]
    except RunDirError as e:
        raise EvaluateError(str(e)) from None
    try:
        config = from_saved(saved)
        config.validate()
    except (TypeError, ConfigError) as e:
        raise EvaluateError(f"{run_dir / 'config.json'}: config does not load ({e})") from None
    return config


def _check_args(run_dir: Path, episodes: int, epsilon: float, video) -> None:
    if not run_dir.exists():
        raise EvaluateError(f"{run_dir}: no such directory")
    if not run_dir.is_dir():
        raise EvaluateError(f"{run_dir}: not a directory")
    if episodes < 1:
        raise EvaluateError(f"--episodes must be at least 1, got {episodes}")
    if not 0.0 <= epsilon <= 1.0 or math.isnan(epsilon):
        raise EvaluateError(f"--epsilon must be in [0, 1], got {epsilon}")
    if video:
        check_video_path(video)


def check_video_path(path) -> None:
    """EvaluateError (one line) unless ``path`` names a .mp4 or .gif file that can be
    written: its folder exists and is writable, and it is not a folder itself."""
    path = Path(path)
    if path.suffix.lower() not in VIDEO_SUFFIXES:
        raise EvaluateError(f"--video {path}: give a .mp4 or .gif file name")
    parent = path.resolve().parent
    if not parent.is_dir():
        raise EvaluateError(f"--video {path}: folder {parent} does not exist")
    if path.is_dir():
        raise EvaluateError(f"--video {path}: is a folder")
    if not os.access(parent, os.W_OK | os.X_OK) or (path.exists()
                                                    and not os.access(path, os.W_OK)):
        raise EvaluateError(f"--video {path}: cannot be written (permission denied)")


def evaluate(run_dir, episodes: int, epsilon: float = 0.0, sample: bool = False,
             seed: int = 0, max_episode_steps: int = 0, video: str | None = None,
             eval_csv: bool = True, on_frame=None) -> dict:
    """Play ``episodes`` episodes; writes ``run_dir/eval.csv`` (unless not ``eval_csv``) and,
    with ``video``, the episodes as a video; returns a summary dict.

    ``on_frame(image, episode, step)``, if given, gets every frame as the video would show
    it (a PIL image, the return drawn on it)."""
    run_dir = Path(run_dir)
    _check_args(run_dir, episodes, epsilon, video)
    config = _load_config(run_dir)

    from seed.runtime import checkpoint
    try:
        agent_state, counters = checkpoint.load(run_dir)
    except checkpoint.CheckpointError as e:
        raise EvaluateError(str(e).replace("nothing to resume from", "nothing to evaluate")) \
            from None

    import envs
    try:
        env = envs.make(config.env, **config.env_kwargs)
    except envs.UnknownEnvError as e:
        raise EvaluateError(f"{run_dir / 'config.json'}: {e}") from None
    writer = None
    try:
        draw = video or on_frame
        if draw:  # fail before playing, not after
            observation_image(np.zeros(env.observation_space.shape,
                                       env.observation_space.dtype), env, config.env)
        from seed.agents import make_agent
        try:
            agent = make_agent(config, env.observation_space, env.action_space)
            agent.restore_state(agent_state)
        except ValueError as e:  # a config the agent refuses, or a CheckpointMismatch
            raise EvaluateError(f"{run_dir / checkpoint.CHECKPOINT} does not fit the agent "
                                f"{config.agent}/{config.network} of config.json ({e})") \
                from None
        writer = VideoWriter(video) if video else None
        rng = np.random.default_rng(seed)
        frames_per_step = int(env.frames_per_step)
        rows = []
        def frame(obs, ret, step, episode):
            image = drawn_frame(observation_image(obs, env, config.env), episode, ret)
            if writer is not None:
                writer.append(image)
            if on_frame is not None:
                on_frame(image, episode, step)

        for episode in range(episodes):
            ret, length = play_episode(
                agent, env, rng, epsilon=epsilon, sample=sample,
                reset_seed=int(np.random.SeedSequence([seed, episode]).generate_state(1)[0]),
                max_steps=max_episode_steps,
                on_frame=(lambda o, r, t, e=episode: frame(o, r, t, e)) if draw else None)
            rows.append({"episode": episode, "return": ret, "length": length,
                         "frames": length * frames_per_step})
        if writer is not None:
            writer.close()
    except BaseException:
        if writer is not None:
            writer.abandon()
        raise
    finally:
        env.close()

    out = run_dir / EVAL_CSV
    if eval_csv:
        _write_csv(out, rows)
    returns = np.array([r["return"] for r in rows], float)
    return {"run_dir": str(run_dir), "env": config.env, "agent": config.agent,
            "episodes": len(rows), "mean_return": float(returns.mean()),
            "std_return": float(returns.std()), "min_return": float(returns.min()),
            "max_return": float(returns.max()),
            "mean_length": float(np.mean([r["length"] for r in rows])),
            "policy": ("sampled" if sample else
                       f"epsilon-greedy (epsilon {epsilon:g})" if epsilon else "greedy"),
            "trained_frames": int(counters.get("env_steps", 0)) * int(env.frames_per_step),
            "eval_csv": str(out) if eval_csv else None, "video": video}


def greedy_action(agent_output: dict) -> np.ndarray:
    """Argmax of ``policy_logits`` (V-trace) or ``q_values`` (R2D2), per env."""
    for key in ("policy_logits", "q_values"):
        if key in agent_output:
            return np.argmax(np.asarray(agent_output[key]), axis=-1).astype(np.int32)
    raise EvaluateError(f"the agent's output has neither policy_logits nor q_values "
                        f"(it has {', '.join(sorted(agent_output))})")


def play_episode(agent, env, rng, epsilon=0.0, sample=False, reset_seed=None, max_steps=0,
                 on_frame=None):
    """One episode with a batch of one: (raw return, length in steps). ``on_frame(obs,
    return so far, step)`` is called with the reset observation (step 0) and after each
    step."""
    from seed.types import EnvOutput
    obs, _ = env.reset(seed=reset_seed)
    env_ids = np.zeros(1, np.int32)
    agent.reset_core_state(env_ids)
    prev_action = np.zeros(1, np.int32)
    reward, done = 0.0, True  # done marks the first observation of an episode
    n_actions = int(env.action_space.n)
    ret, length = 0.0, 0
    if on_frame is not None:
        on_frame(obs, ret, length)
    while True:
        env_output = EnvOutput(np.array([reward], np.float32), np.array([done], bool),
                               np.asarray(obs)[None])
        action, agent_output = agent.infer(env_ids, prev_action, env_output)
        a = int(np.asarray(action)[0]) if sample else int(greedy_action(agent_output)[0])
        if epsilon and rng.random() < epsilon:
            a = int(rng.integers(n_actions))
        obs, reward, terminated, truncated, info = env.step(a)
        ret += float(info.get("raw_reward", reward))
        length += 1
        done = False
        prev_action = np.array([a], np.int32)
        if on_frame is not None:
            on_frame(obs, ret, length)
        if terminated or truncated or (max_steps and length >= max_steps):
            return ret, length


def _write_csv(path: Path, rows: list[dict]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".eval-", suffix=".csv", dir=path.parent)
    try:
        with os.fdopen(fd, "w", newline="") as f:
            w = csv.DictWriter(f, EVAL_COLUMNS)
            w.writeheader()
            for r in rows:
                w.writerow({**r, "return": f"{r['return']:.6g}"})
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def format_result(r: dict) -> str:
    return (f"{r['env']} ({r['agent']}, {r['policy']}, checkpoint at "
            f"{r['trained_frames']:,} env frames): {r['episodes']} episodes, return "
            f"mean {r['mean_return']:.3f} std {r['std_return']:.3f} "
            f"(min {r['min_return']:.3f}, max {r['max_return']:.3f}), mean length "
            f"{r['mean_length']:.1f} steps; wrote "
            + " and ".join(p for p in (r["eval_csv"], r["video"]) if p))


# --------------------------------------------------------------------------- recording

def frame_to_image(obs: np.ndarray, what: str = "the env"):
    """An observation as a PIL image, upscaled (nearest) to >= 256 px on its long side.

    Handles grayscale frames (H, W) or (H, W, 1) (Atari's 84x84x1 uint8, Catch's
    float board in [0, 1]) and RGB frames (H, W, 3) (DMLab); other shapes (vectors,
    bit-packed planes) raise EvaluateError.
    """
    from PIL import Image
    a = np.asarray(obs)
    if a.ndim == 3 and a.shape[-1] == 1:
        a = a[..., 0]
    if not (a.ndim == 2 or (a.ndim == 3 and a.shape[-1] == 3)):
        raise EvaluateError(f"--video needs image observations; {what}'s are of shape "
                            f"{tuple(np.asarray(obs).shape)}")
    if a.dtype != np.uint8:
        a = a.astype(np.float64)
        lo, hi = float(np.min(a)), float(np.max(a))
        if lo >= 0.0 and hi <= 1.0:
            a = a * 255.0
        elif hi > lo:
            a = (a - lo) / (hi - lo) * 255.0
        else:
            a = np.zeros_like(a)
        a = np.clip(np.rint(a), 0, 255).astype(np.uint8)
    img = Image.fromarray(a, "L" if a.ndim == 2 else "RGB")
    scale = max(1, math.ceil(_MIN_RECORD_SIZE / max(img.size)))
    if scale > 1:
        img = img.resize((img.size[0] * scale, img.size[1] * scale), Image.NEAREST)
    return img


#: Colours of the Super Mini Map's four planes (left team, right team, ball, active player).
_SMM_COLOURS = np.array([[230, 60, 60], [70, 110, 240], [255, 255, 255], [250, 210, 40]],
                        np.uint8)


def football_image(planes: np.ndarray) -> np.ndarray:
    """The newest Super Mini Map of stacked SMM planes ``[H, W, 4k]`` (0/nonzero) as RGB on
    a green pitch: each of its four planes in its colour, later planes drawn over earlier."""
    newest = np.asarray(planes)[..., -4:] != 0
    image = np.empty(newest.shape[:2] + (3,), np.uint8)
    image[:] = (30, 100, 40)
    for plane, colour in enumerate(_SMM_COLOURS[:newest.shape[-1]]):
        image[newest[..., plane]] = colour
    return image


def observation_image(obs: np.ndarray, env, what: str = "the env"):
    """An env's observation as the video shows it: Football's bit-packed planes unpacked
    and drawn as a mini map (:func:`football_image`), anything else by
    :func:`frame_to_image`."""
    if getattr(env, "packed", False) and getattr(env, "num_planes", 0):
        from envs.football_packing import unpack_planes
        obs = football_image(unpack_planes(np.asarray(obs), env.num_planes))
    elif getattr(env, "num_planes", 0) and np.asarray(obs).shape[-1] == env.num_planes:
        obs = football_image(obs)
    return frame_to_image(obs, what)


def drawn_frame(image, episode: int, episode_return: float):
    """``image`` in RGB with a band above it reading the episode and its return so far."""
    from PIL import Image, ImageDraw
    band = 18
    out = Image.new("RGB", (image.size[0], image.size[1] + band), (0, 0, 0))
    out.paste(image.convert("RGB"), (0, band))
    ImageDraw.Draw(out).text((4, 3), f"episode {episode}  return {episode_return:g}",
                             fill=(255, 255, 255))
    return out


class VideoWriter:
    """Frames into a video file: a temporary file beside ``path`` until :meth:`close`
    renames it into place (:meth:`abandon` deletes it), so ``path`` is never half-written.
    ``.mp4``: H.264 (yuv420p) through imageio-ffmpeg, frames padded to even sizes; ``.gif``:
    Pillow (every frame kept until the end: for short clips). :data:`VIDEO_FPS` frames a
    second."""

    def __init__(self, path):
        import imageio.v2 as imageio
        self.path = Path(path)
        check_video_path(self.path)
        suffix = self.path.suffix.lower()
        fd, self.tmp = tempfile.mkstemp(prefix=f".{self.path.stem}-", suffix=suffix,
                                        dir=self.path.resolve().parent)
        os.close(fd)
        try:
            if suffix == ".mp4":
                self._writer = imageio.get_writer(
                    self.tmp, format="FFMPEG", fps=VIDEO_FPS, codec="libx264",
                    pixelformat="yuv420p", macro_block_size=1,
                    output_params=["-crf", "28"], ffmpeg_log_level="error")
            else:  # Pillow writes a GIF's frames at once: they are kept until close
                self._writer = _GifFrames(self.tmp)
        except Exception as e:
            self.abandon()
            raise EvaluateError(f"--video {self.path}: cannot start writing "
                                f"({type(e).__name__}: {e})") from None
        self.frames = 0

    def append(self, image) -> None:
        a = np.asarray(image.convert("RGB"))
        h, w = a.shape[:2]
        if h % 2 or w % 2:  # H.264 in yuv420p wants even sizes
            a = np.pad(a, ((0, h % 2), (0, w % 2), (0, 0)))
        self._writer.append_data(a)
        self.frames += 1

    def close(self) -> Path:
        try:
            self._writer.close()
            if not self.frames:
                raise EvaluateError(f"--video {self.path}: no frames to record")
            os.replace(self.tmp, self.path)
        except BaseException:
            self.abandon()
            raise
        return self.path

    def abandon(self) -> None:
        try:
            writer = getattr(self, "_writer", None)
            if writer is not None and not writer.closed:
                writer.close()
        except Exception:
            pass
        if os.path.exists(self.tmp):
            os.unlink(self.tmp)


class _GifFrames:
    """A GIF written by Pillow at close, with the ``append_data``/``close``/``closed`` of an
    imageio writer."""

    def __init__(self, path: str):
        self.path, self.images, self.closed = path, [], False

    def append_data(self, frame: np.ndarray) -> None:
        from PIL import Image
        self.images.append(Image.fromarray(frame, "RGB"))

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.images:
            self.images[0].save(self.path, format="GIF", save_all=True,
                                append_images=self.images[1:],
                                duration=round(1000 / VIDEO_FPS), loop=0)
