"""Timing one step at a time, shared by the roofline's train-step measurements."""

from __future__ import annotations

import time


def time_steps(step, seconds: float, min_steps: int, prepare=None, warmup: int = 2):
    """Call ``step()`` until ``seconds`` of its own wall time and ``min_steps`` calls.

    ``prepare()``, if given, runs before every call outside the timed part (topping up
    a buffer); ``warmup`` untimed calls first trace and warm up. Returns
    ``(outputs, wall_s, cpu_s)``: each timed call's return value, and the wall and
    process CPU time summed over the timed calls alone.
    """
    for _ in range(warmup):
        if prepare is not None:
            prepare()
        step()
    outputs, wall, cpu = [], 0.0, 0.0
    while len(outputs) < min_steps or wall < seconds:
        if prepare is not None:
            prepare()
        w0, c0 = time.perf_counter(), time.process_time()
        outputs.append(step())
        wall += time.perf_counter() - w0
        cpu += time.process_time() - c0
    return outputs, wall, cpu
