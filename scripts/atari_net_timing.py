"""Atari network timings on this machine: inference forward and a train-sized forward/backward.

    python scripts/atari_net_timing.py --networks nature_cnn impala_resnet \\
        --batches 1 8 32 64 --unrolls 32 --unroll-length 20

For each network: the median wall time of one single-step forward (the SEED
inference call, under ``tf.function``) at each batch size, and of one
forward + backward over ``unrolls x unroll_length`` steps (the shape of a
learner step), with ``--lstm`` optionally adding an LSTM core.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from gymnasium import spaces  # noqa: E402

from seed.networks import make_network  # noqa: E402
from seed.types import EnvOutput  # noqa: E402

SPACE = spaces.Box(0, 255, (84, 84, 1), np.uint8)
NUM_ACTIONS = 6


def _inputs(shape_prefix, rng):
    return (tf.constant(rng.integers(0, NUM_ACTIONS, shape_prefix), tf.int32),
            EnvOutput(tf.constant(rng.normal(size=shape_prefix), tf.float32),
                      tf.constant(rng.random(shape_prefix) < 0.01),
                      tf.constant(rng.integers(0, 256, shape_prefix + SPACE.shape,
                                               dtype=np.uint8))))


def _median_ms(fn, repeats: int) -> tuple[float, float]:
    fn()  # trace / warm up
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times), 1000 * min(times)


def time_network(name: str, batches, unrolls: int, length: int, lstm: int, repeats: int):
    net = make_network(name, NUM_ACTIONS, SPACE, lstm_size=lstm)
    params = sum(int(np.prod(v.shape)) for v in net.trainable_variables)
    print(f"{name} (lstm_size={lstm}, {params:,} parameters)")
    rng = np.random.default_rng(0)
    step = tf.function(lambda p, e, s: net(p, e, s))
    for b in batches:
        prev, env = _inputs((b,), rng)
        state = net.initial_state(b)
        med, best = _median_ms(lambda: tf.nest.map_structure(
            lambda x: x.numpy(), step(prev, env, state)), repeats)
        print(f"  forward batch {b:3d}: median {med:8.2f} ms, min {best:8.2f} ms, "
              f"{1000 * b / med:8.0f} steps/s")

    @tf.function
    def train(prev, env, state):
        with tf.GradientTape() as tape:
            out, _ = net(prev, env, state, unroll=True)
            loss = sum(tf.reduce_mean(tf.square(v)) for v in out.values())
        grads = tape.gradient(loss, net.trainable_variables)
        return loss, tf.linalg.global_norm(grads)

    prev, env = _inputs((length, unrolls), rng)
    state = net.initial_state(unrolls)
    med, best = _median_ms(lambda: [x.numpy() for x in train(prev, env, state)],
                           max(3, repeats // 4))
    print(f"  forward+backward {unrolls} unrolls x {length} steps: median {med:8.1f} ms, "
          f"min {best:8.1f} ms, {1000 * unrolls * length / med:8.0f} steps/s trained")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", nargs="+", default=["nature_cnn", "impala_resnet"])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8, 32, 64])
    parser.add_argument("--unrolls", type=int, default=32)
    parser.add_argument("--unroll-length", type=int, default=20)
    parser.add_argument("--lstm", type=int, default=0, help="LSTM size (0: none)")
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    print(f"cpus={os.cpu_count()} tf={tf.__version__} "
          f"devices={[d.device_type for d in tf.config.list_physical_devices()]}")
    for name in args.networks:
        time_network(name, args.batches, args.unrolls, args.unroll_length, args.lstm,
                     args.repeats)


if __name__ == "__main__":
    main()
