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
mean and std of the returns. ``--record out.gif`` writes the first episode's
observations as an animated GIF (``.mp4`` through the ``ffmpeg`` program when it is
on PATH). Nothing here is timed.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

EVAL_CSV = "eval.csv"
EVAL_COLUMNS = ["episode", "return", "length", "frames"]
_GIF_MS_PER_FRAME = 80
_MIN_RECORD_SIZE = 256  # pixels along the longer side of a recorded frame


class EvaluateError(RuntimeError):
    """Evaluation cannot run; the message is one line."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "evaluate", help="play a run's checkpointed policy for N episodes; writes DIR/eval.csv",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_dir", metavar="DIR", help="run directory (config.json, checkpoint.npz)")
    p.add_argument("--episodes", type=int, required=True, help="episodes to play")
    p.add_argument("--epsilon", type=float, default=0.0,
                   help="probability of a uniformly random action (default 0: greedy)")
    p.add_argument("--sample", action="store_true",
                   help="act with the agent's own (sampled) action instead of the argmax")
    p.add_argument("--seed", type=int, default=0,
                   help="seeds the env resets and the epsilon draws (default 0)")
    p.add_argument("--max-episode-steps", type=int, default=0,
                   help="cut an episode after this many env steps (default 0: the env's own "
                        "limit)")
    p.add_argument("--record", metavar="OUT",
                   help="write the first episode as an animation: OUT.gif (or OUT.mp4 with "
                        "ffmpeg on PATH)")
    p.set_defaults(fn=cmd_evaluate)


def cmd_evaluate(args) -> int:
    try:
        result = evaluate(args.run_dir, episodes=args.episodes, epsilon=args.epsilon,
                          sample=args.sample, seed=args.seed,
                          max_episode_steps=args.max_episode_steps, record=args.record)
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


def _check_args(run_dir: Path, episodes: int, epsilon: float, record) -> None:
    if not run_dir.exists():
        raise EvaluateError(f"{run_dir}: no such directory")
    if not run_dir.is_dir():
        raise EvaluateError(f"{run_dir}: not a directory")
    if episodes < 1:
        raise EvaluateError(f"--episodes must be at least 1, got {episodes}")
    if not 0.0 <= epsilon <= 1.0 or math.isnan(epsilon):
        raise EvaluateError(f"--epsilon must be in [0, 1], got {epsilon}")
    if record:
        suffix = Path(record).suffix.lower()
        if suffix not in (".gif", ".mp4"):
            raise EvaluateError(f"--record {record}: give a .gif or .mp4 file name")
        if suffix == ".mp4" and shutil.which("ffmpeg") is None:
            raise EvaluateError("--record .mp4 needs the ffmpeg program on PATH "
                                "(e.g. apt-get install ffmpeg); a .gif needs nothing")
        parent = Path(record).resolve().parent
        if not parent.is_dir():
            raise EvaluateError(f"--record {record}: folder {parent} does not exist")


def evaluate(run_dir, episodes: int, epsilon: float = 0.0, sample: bool = False,
             seed: int = 0, max_episode_steps: int = 0, record: str | None = None) -> dict:
    """Play ``episodes`` episodes; writes ``run_dir/eval.csv``; returns a summary dict."""
    run_dir = Path(run_dir)
    _check_args(run_dir, episodes, epsilon, record)
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
    try:
        if record:
            frame_to_image(np.zeros(env.observation_space.shape, env.observation_space.dtype),
                           what=config.env)  # fail before playing, not after
        from seed.agents import make_agent
        try:
            agent = make_agent(config, env.observation_space, env.action_space)
            agent.restore_state(agent_state)
        except ValueError as e:  # a config the agent refuses, or a CheckpointMismatch
            raise EvaluateError(f"{run_dir / checkpoint.CHECKPOINT} does not fit the agent "
                                f"{config.agent}/{config.network} of config.json ({e})") \
                from None
        rng = np.random.default_rng(seed)
        frames_per_step = int(env.frames_per_step)
        rows, recorded = [], []
        for episode in range(episodes):
            ret, length, observations = play_episode(
                agent, env, rng, epsilon=epsilon, sample=sample,
                reset_seed=int(np.random.SeedSequence([seed, episode]).generate_state(1)[0]),
                max_steps=max_episode_steps, keep_observations=bool(record) and episode == 0)
            rows.append({"episode": episode, "return": ret, "length": length,
                         "frames": length * frames_per_step})
            if observations:
                recorded = observations
    finally:
        env.close()

    out = run_dir / EVAL_CSV
    _write_csv(out, rows)
    if record:
        write_animation(recorded, record, what=config.env)
    returns = np.array([r["return"] for r in rows], float)
    return {"run_dir": str(run_dir), "env": config.env, "agent": config.agent,
            "episodes": len(rows), "mean_return": float(returns.mean()),
            "std_return": float(returns.std()), "min_return": float(returns.min()),
            "max_return": float(returns.max()),
            "mean_length": float(np.mean([r["length"] for r in rows])),
            "policy": ("sampled" if sample else
                       f"epsilon-greedy (epsilon {epsilon:g})" if epsilon else "greedy"),
            "trained_frames": int(counters.get("env_steps", 0)) * int(env.frames_per_step),
            "eval_csv": str(out), "record": record}


def greedy_action(agent_output: dict) -> np.ndarray:
    """Argmax of ``policy_logits`` (V-trace) or ``q_values`` (R2D2), per env."""
    for key in ("policy_logits", "q_values"):
        if key in agent_output:
            return np.argmax(np.asarray(agent_output[key]), axis=-1).astype(np.int32)
    raise EvaluateError(f"the agent's output has neither policy_logits nor q_values "
                        f"(it has {', '.join(sorted(agent_output))})")


def play_episode(agent, env, rng, epsilon=0.0, sample=False, reset_seed=None, max_steps=0,
                 keep_observations=False):
    """One episode with a batch of one: (raw return, length in steps, observations)."""
    from seed.types import EnvOutput
    obs, _ = env.reset(seed=reset_seed)
    env_ids = np.zeros(1, np.int32)
    agent.reset_core_state(env_ids)
    prev_action = np.zeros(1, np.int32)
    reward, done = 0.0, True  # done marks the first observation of an episode
    n_actions = int(env.action_space.n)
    ret, length = 0.0, 0
    observations = [np.array(obs)] if keep_observations else []
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
        if keep_observations:
            observations.append(np.array(obs))
        if terminated or truncated or (max_steps and length >= max_steps):
            return ret, length, observations


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
            f"{r['mean_length']:.1f} steps; wrote {r['eval_csv']}"
            + (f" and {r['record']}" if r["record"] else ""))


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
        raise EvaluateError(f"--record needs image observations; {what}'s are of shape "
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


def write_animation(observations: list, path, what: str = "the env") -> Path:
    path = Path(path)
    images = [frame_to_image(o, what) for o in observations]
    if not images:
        raise EvaluateError("no frames to record")
    if path.suffix.lower() == ".gif":
        images = [im.convert("P") if im.mode == "RGB" else im for im in images]
        images[0].save(path, save_all=True, append_images=images[1:],
                       duration=_GIF_MS_PER_FRAME, loop=0, optimize=False)
        return path
    # .mp4: raw RGB frames piped into ffmpeg (checked to be on PATH before playing).
    w, h = images[0].size
    w2, h2 = w + (w % 2), h + (h % 2)  # H.264 wants even sizes
    cmd = ["ffmpeg", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24",
           "-s", f"{w}x{h}", "-r", str(round(1000 / _GIF_MS_PER_FRAME)), "-i", "-",
           "-vf", f"pad={w2}:{h2}", "-pix_fmt", "yuv420p", str(path)]
    data = b"".join(im.convert("RGB").tobytes() for im in images)
    proc = subprocess.run(cmd, input=data, capture_output=True)
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip().splitlines()
        raise EvaluateError(f"ffmpeg failed writing {path}: {err[-1] if err else proc.returncode}")
    return path
