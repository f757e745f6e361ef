"""The resident size an R2D2 learner's full replay takes, against the estimate a run checks.

    python scripts/measure_replay_rss.py [--config experiments/atari_pong_r2d2.yaml]
        [--capacities 500 1500]

For each capacity, in a fresh process: the learner's core as ``seed train`` builds it (the
env probed, the agent, its prioritized replay of that many sequences), then the replay filled
twice over as SEED's learner fills it (every env's steps through an ``UnrollBuilder`` with the
agent's overlap, random frames), and the process's resident size (psutil's RSS) read before
and after. Prints, per capacity, the estimate ``seed.runtime.memory`` checks before a run
(``item_bytes`` of the run's unroll spec, times the capacity) beside the RSS growth, then the
growth per sequence between the two capacities (what is fixed, TensorFlow and the builder's
buffers, cancels out) beside ``item_bytes``. The replay's limiter is set free
(``replay_ratio=0``) so that filling needs no learner. Each capacity is rounded up to a
multiple of the run's envs: they complete their sequences on the same step, into one copy
per leaf that lives while any of its sequences is held, so a replay whose capacity splits
such a batch keeps up to one batch more than its capacity. A few seconds per capacity beyond
building the agent; memory about twice the larger replay at most.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def measure(config_path: str, capacity: int) -> dict:
    """Fill a replay of ``capacity`` sequences; the estimate and the RSS before and after."""
    import numpy as np
    import psutil

    from seed.config import given_values, from_paths
    from seed.runtime import memory
    from seed.runtime.learner_core import EnvSpec, LearnerCore
    from seed.types import EnvOutput
    from seed.unroll_spec import UnrollSpec
    from seed.unrolls import UnrollBuilder

    config = from_paths(given_values(config_path, {"replay_min_size": 1, "replay_ratio": 0.0}))
    envs = config.num_envs
    capacity = -(-capacity // envs) * envs
    config = from_paths(given_values(config_path, {
        "replay_capacity": capacity, "replay_min_size": 1, "replay_ratio": 0.0}))
    env = EnvSpec.probe(config.env, config.env_kwargs)
    core = LearnerCore(config, env)
    spec = UnrollSpec.of(core.agent, env.observation_space)
    builder = UnrollBuilder(spec, envs, core.agent.unroll_overlap)
    rng = np.random.default_rng(0)
    high = 255 if np.dtype(spec.observation.dtype).kind in "iu" else 1
    frames = rng.integers(0, high, (envs,) + spec.observation.shape).astype(
        spec.observation.dtype)
    rows = np.arange(envs)
    outputs = {k: np.zeros((envs,) + s.shape, s.dtype)
               for k, s in spec.agent_output.items() if k != "action"}
    gc.collect()
    process = psutil.Process()
    before = process.memory_info().rss
    while core.buffer.num_inserted < 2 * capacity:
        wanted = builder.rows_wanting_state(rows)
        state = tuple(np.asarray(s)[:int(wanted.sum())]
                      for s in core.agent.initial_state(envs))
        for _, unroll in builder.append_batch(
                rows, state, np.zeros(envs, np.int32),
                EnvOutput(np.zeros(envs, np.float32), np.zeros(envs, bool), frames),
                outputs, rng.integers(0, env.action_space.n, envs).astype(np.int32)):
            core.buffer.put(unroll)
    gc.collect()
    return {"capacity": capacity, "item_bytes": memory.item_bytes(spec),
            "unroll_nbytes": spec.nbytes, "rss_before": before,
            "rss_after": process.memory_info().rss}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="experiments/atari_pong_r2d2.yaml")
    ap.add_argument("--capacities", type=int, nargs=2, default=[500, 1500])
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a capacity, in this process
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(args.config, args.one)))
        return
    results = []
    for capacity in args.capacities:
        out = subprocess.run([sys.executable, __file__, "--config", args.config,
                              "--one", str(capacity)], cwd=REPO, check=True,
                             capture_output=True, text=True).stdout
        results.append(json.loads(out.strip().splitlines()[-1]))
    mib = 2**20
    print(f"{'capacity':>9} {'estimate MiB':>13} {'RSS growth MiB':>15} {'ratio':>6}")
    for r in results:
        estimate = r["capacity"] * r["item_bytes"]
        growth = r["rss_after"] - r["rss_before"]
        print(f"{r['capacity']:>9} {estimate / mib:>13.1f} {growth / mib:>15.1f} "
              f"{growth / estimate:>6.3f}")
    small, large = results
    per_sequence = ((large["rss_after"] - small["rss_after"])
                    / (large["capacity"] - small["capacity"]))
    print(f"per sequence between the two: {per_sequence:,.0f} bytes of RSS; estimate "
          f"{large['item_bytes']:,} bytes ({large['unroll_nbytes']:,} of arrays); ratio "
          f"{per_sequence / large['item_bytes']:.3f}")


if __name__ == "__main__":
    main()
