"""How much slower the learner's forward pass is when it follows an idle gap.

    python scripts/inference_after_idle.py [--config experiments/atari_pong_vtrace.yaml]
        [--batch 32] [--gap-ms 7] [--calls 300] [--cpu-idle-poll]

In SEED's lock-step schedule the learner idles while the actors step their envs (about
4-5 ms for Pong on 2 cores), then infers a batch. ``seed roofline`` times inference back
to back, with the threads and caches warm. This times ``agent.infer`` on the config's
network both ways, back to back and after ``time.sleep(gap)``, in one process, and prints
the median and mean per call of each and their difference. Nothing else should run.
TensorFlow's thread counts follow ``TF_NUM_INTRAOP_THREADS`` / ``TF_NUM_INTEROP_THREADS``.
``--cpu-idle-poll`` times both while idle cores poll instead of halting (what a run's
``cpu_idle_poll`` does, seed/runtime/cpu_idle.py; root).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="experiments/atari_pong_vtrace.yaml")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--gap-ms", type=float, default=7.0)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--cpu-idle-poll", action="store_true",
                    help="idle cores poll instead of halting while this runs (root)")
    args = ap.parse_args()
    if args.batch < 1 or args.calls < 10 or args.gap_ms <= 0:
        ap.error("--batch >= 1, --calls >= 10 and --gap-ms > 0, please")

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from seed import config as config_lib
    from seed import quiet_tf
    quiet_tf.import_tensorflow()
    from seed.bench.costs import build_agent, inference_inputs

    agent, spec = build_agent(config_lib.load(args.config, {"arch": "seed"}))
    b = args.batch
    env_ids, prev, env_out = inference_inputs(agent, spec.observation_space, b)
    for _ in range(5):  # trace and warm up
        prev, _ = agent.infer(env_ids, prev, env_out)

    from seed.runtime import cpu_idle
    try:
        with cpu_idle.idle_polling(args.cpu_idle_poll):
            medians = _time(agent, env_ids, prev, env_out, args)
    except cpu_idle.CpuIdlePollError as e:
        ap.error(str(e))
    print(f"idle gap costs {medians[args.gap_ms / 1000.0] - medians[0.0]:+.2f} ms per call (p50)"
          + (", idle cores polling" if args.cpu_idle_poll else ""))


def _time(agent, env_ids, prev, env_out, args) -> dict:
    """{gap in s: p50 ms of one call}, back to back and after the gap."""
    b = args.batch
    medians = {}
    for gap_s in (0.0, args.gap_ms / 1000.0):
        times = []
        for _ in range(args.calls):
            if gap_s:
                time.sleep(gap_s)
            t0 = time.perf_counter()
            prev, _ = agent.infer(env_ids, prev, env_out)
            times.append(time.perf_counter() - t0)
        ms = 1e3 * np.asarray(times)
        medians[gap_s] = float(np.median(ms))
        what = "back to back" if not gap_s else f"after {args.gap_ms:g} ms idle"
        print(f"batch {b}, {what:<18}: p50 {np.median(ms):.2f} ms, mean {ms.mean():.2f} ms "
              f"({args.calls} calls)")
    return medians


if __name__ == "__main__":
    main()
