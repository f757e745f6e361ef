"""Measure gfootball env steps per second, one env at a time, in one process.

Usage: python scripts/football_env_fps.py [--steps N] [--scenarios a,b] [--packed/--no-packed]

Steps each scenario with uniformly random actions (resetting at episode ends)
through envs.make('football:...'), the adapter the actors use, and prints one
line per scenario: steps, wall seconds, steps/s, CPU seconds of this process,
steps per CPU second (what one uncontended core would give), episodes finished.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import envs  # noqa: E402

DEFAULT = "academy_empty_goal_close,11_vs_11_easy_stochastic"


def measure(scenario: str, steps: int, packed: bool, seed: int = 0) -> dict:
    env = envs.make(f"football:{scenario}", packed=packed)
    rng = np.random.default_rng(seed)
    try:
        env.reset(seed=seed)
        env.step(0)  # warm the engine up outside the timed loop
        episodes = 0
        start, cpu_start = time.perf_counter(), time.process_time()
        for _ in range(steps):
            _, _, terminated, truncated, _ = env.step(int(rng.integers(env.action_space.n)))
            if terminated or truncated:
                episodes += 1
                env.reset()
        seconds = time.perf_counter() - start
        cpu_seconds = time.process_time() - cpu_start
    finally:
        env.close()
    return {"scenario": scenario, "steps": steps, "seconds": seconds,
            "steps_per_s": steps / seconds, "cpu_seconds": cpu_seconds,
            "steps_per_cpu_s": steps / cpu_seconds, "episodes": episodes}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--scenarios", default=DEFAULT)
    parser.add_argument("--packed", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args(argv)
    print(f"# {platform.node()} {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}, packed={args.packed}")
    for scenario in args.scenarios.split(","):
        r = measure(scenario, args.steps, args.packed)
        print(f"{r['scenario']}: {r['steps']} steps in {r['seconds']:.1f} s = "
              f"{r['steps_per_s']:.0f} steps/s; {r['cpu_seconds']:.1f} CPU s = "
              f"{r['steps_per_cpu_s']:.0f} steps per CPU second ({r['episodes']} episodes finished)",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
