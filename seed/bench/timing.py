"""Timing train steps, shared by the roofline's agent step and its bare TensorFlow step.

:func:`time_steps` times one step function. A :func:`step_timer` wraps a step into
``timer(seconds) -> totals``; :func:`alternate` runs several timers in turn, a short
block each, round after round, and sums each one's blocks: the speed of a shared
2-core VM drifts by 10% and more within a minute, and in turns the drift falls on
every timer alike, so a ratio of two of them is not one minute against the next.
"""

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


def step_timer(step, env_steps, frames_per_step: int, prepare=None, min_steps: int = 3):
    """``timer(seconds) -> totals`` for :func:`alternate` and :func:`rates`.

    ``env_steps(output)`` is the env steps one call trained on (from its return value);
    totals are ``{"steps", "env_steps", "frames", "wall_s", "cpu_s"}``.
    """
    def timer(seconds: float) -> dict:
        outputs, wall, cpu = time_steps(step, seconds, min_steps, prepare)
        trained = sum(int(env_steps(out)) for out in outputs)
        return {"steps": len(outputs), "env_steps": trained,
                "frames": trained * frames_per_step, "wall_s": wall, "cpu_s": cpu}

    return timer


def alternate(timers: dict, seconds: float, rounds: int) -> dict:
    """``{name: summed totals}``: every timer run ``rounds`` times for ``seconds / rounds``,
    in turn (A, B, A, B, ...)."""
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    totals: dict = {name: {} for name in timers}
    for _ in range(rounds):
        for name, timer in timers.items():
            for key, value in timer(seconds / rounds).items():
                totals[name][key] = totals[name].get(key, 0) + value
    return totals


def rates(totals: dict) -> dict:
    """Per-step and per-frame figures of a timer's totals."""
    steps, frames, wall, cpu = (totals[k] for k in ("steps", "frames", "wall_s", "cpu_s"))
    return {"steps": steps, "env_steps_per_train_step": totals["env_steps"] / steps,
            "wall_s_per_step": wall / steps, "cpu_s_per_step": cpu / steps,
            "frames_per_s": frames / wall, "cpu_s_per_frame": cpu / frames}
