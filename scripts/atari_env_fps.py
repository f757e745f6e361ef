"""Atari env throughput: env steps/s (and frames/s) with random actions, in N processes.

    python scripts/atari_env_fps.py --game Pong --seconds 10 --processes 1 2

Each process runs one env (``envs.make('atari:GAME')`` with default preprocessing),
steps it with uniformly random actions for ``--seconds`` and counts steps; the
total over processes is printed per process count, with steps per CPU-second of
the env processes (the rate one free core would give, when the machine is busy). No TensorFlow involved.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def _worker(game: str, seconds: float, seed: int, start, results) -> None:
    import numpy as np

    import envs

    env = envs.make(f"atari:{game}")
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    start.wait()
    steps, resets = 0, 0
    t0, c0 = time.perf_counter(), time.process_time()
    while time.perf_counter() - t0 < seconds:
        for _ in range(100):
            _, _, terminated, truncated, _ = env.step(int(rng.integers(env.action_space.n)))
            steps += 1
            if terminated or truncated:
                env.reset()
                resets += 1
    results.put((steps, time.perf_counter() - t0, env.frames_per_step, resets,
                 time.process_time() - c0))


def measure(game: str, processes: int, seconds: float) -> dict:
    ctx = mp.get_context("spawn")
    start = ctx.Event()
    results = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(game, seconds, i, start, results))
             for i in range(processes)]
    for p in procs:
        p.start()
    time.sleep(0.5)
    start.set()
    out = [results.get() for _ in procs]
    for p in procs:
        p.join()
    steps = sum(o[0] for o in out)
    wall = max(o[1] for o in out)
    return {"processes": processes, "steps_per_s": steps / wall,
            "frames_per_s": steps * out[0][2] / wall,
            "steps_per_s_per_process": [round(o[0] / o[1], 1) for o in out],
            "episodes_ended": sum(o[3] for o in out),
            # Steps per CPU-second of the env processes: what one core gives when it is not
            # shared (wall-clock rates drop when other work competes for the cores).
            "steps_per_cpu_s": steps / sum(o[4] for o in out)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="Pong")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    print(f"game={args.game} seconds={args.seconds} cpus={os.cpu_count()}")
    for n in args.processes:
        r = measure(args.game, n, args.seconds)
        print(f"processes={n}: {r['steps_per_s']:.0f} env steps/s, {r['frames_per_s']:.0f} "
              f"frames/s (per process {r['steps_per_s_per_process']}, "
              f"{r['episodes_ended']} episodes ended); {r['steps_per_cpu_s']:.0f} steps per CPU-second")


if __name__ == "__main__":
    main()
