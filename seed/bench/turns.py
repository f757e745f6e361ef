"""SEED's lock-step schedule with nothing of SEED in it: inference and simulation in turns.

``seed roofline``'s lock-step bound adds up inference, simulation and the data path, each
timed alone and back to back, with warm caches and busy cores. In a lock-step run each
follows the others: the learner infers after the actors' processes have run on every core
and while its own threads slept, the actors step after the learner's inference filled the
caches. :func:`measure_turns` times exactly that and nothing else: ``actors`` worker
processes, each stepping ``envs_per_actor`` envs once with random actions when told to, and
``agent.infer`` on the learner's batch in this process, in turns over OS pipes (no gRPC,
no batcher, no unroll assembly, no observations carried). Each worker times its own
stepping; the rest of the simulation turn is the hand-off (the pipes, waking the workers
and this process). What inference and stepping cost here more than alone is what the
schedule costs on this machine, whichever engine runs it: the roofline adds the data
path's cycle (its own hand-offs) to them for the bound of that schedule, and what a run's
cycle costs beyond that is its engine's.
"""

from __future__ import annotations

import multiprocessing as mp
import struct
import time

import numpy as np

GO, READY, STOP = b"g", b"r", b"s"
STEPPED = struct.Struct("d")  # a worker's answer: its own seconds stepping its envs


def _worker(env_name: str, env_kwargs: dict, num_envs: int, seed: int, conn) -> None:
    try:
        import envs
        group = [envs.make(env_name, **env_kwargs) for _ in range(num_envs)]
        rng = np.random.default_rng(seed)
        for i, env in enumerate(group):
            env.reset(seed=seed + i)
        n = int(group[0].action_space.n)
        conn.send_bytes(READY)
        while conn.recv_bytes() == GO:
            t0 = time.perf_counter()
            for env in group:
                _, _, terminated, truncated, _ = env.step(int(rng.integers(n)))
                if terminated or truncated:
                    env.reset()
            conn.send_bytes(STEPPED.pack(time.perf_counter() - t0))
        for env in group:
            env.close()
    except Exception as e:  # the parent reports it in one line
        conn.send_bytes(f"error: {type(e).__name__}: {e}".encode())  # never 8 bytes


def measure_turns(config, agent, inputs: tuple, frames_per_step: int, seconds: float,
                  warmup_cycles: int = 20) -> dict:
    """Cycles of ``agent.infer(*inputs)`` (``(env_ids, prev_action, env_output)`` of the
    learner's batch), then every worker stepping its envs once, for ``seconds``. Returns the
    mean wall time of each turn and of the cycle, and the frames/s the cycle gives
    (``num_envs x frames_per_step`` frames a cycle)."""
    env_ids, prev, env_out = inputs
    ctx = mp.get_context("spawn")  # no TensorFlow or threads inherited
    pipes, procs = [], []
    stopped = False  # every worker was told to stop: wait for it; otherwise end it at once
    try:
        for i in range(config.actors):
            ours, theirs = ctx.Pipe()
            p = ctx.Process(target=_worker, args=(config.env, config.env_kwargs,
                                                  config.envs_per_actor, 2000 + 100 * i, theirs),
                            daemon=True)
            p.start()
            pipes.append(ours)
            procs.append(p)
        _collect(pipes, procs, timeout_s=300.0, answer=READY)  # every worker made its envs
        inference, simulation, stepping = [], [], []
        t_end = None
        while True:
            t0 = time.perf_counter()
            prev, _ = agent.infer(env_ids, prev, env_out)
            t1 = time.perf_counter()
            for conn in pipes:
                conn.send_bytes(GO)
            stepped = _collect(pipes, procs, timeout_s=60.0)
            t2 = time.perf_counter()
            inference.append(t1 - t0)
            simulation.append(t2 - t1)
            stepping.append(max(stepped))
            if len(inference) == warmup_cycles:
                t_end = t2 + seconds
            if t_end is not None and t2 >= t_end:
                break
        for conn in pipes:
            conn.send_bytes(STOP)
        stopped = True
    finally:
        for p in procs:
            if stopped:
                p.join(timeout=10)
            if p.is_alive():
                p.terminate()
    return _summary(*(np.asarray(x[warmup_cycles:]) for x in (inference, simulation, stepping)),
                    config.num_envs * frames_per_step)


def _summary(inf: np.ndarray, sim: np.ndarray, step: np.ndarray, frames_per_cycle: int) -> dict:
    """The turns' mean (and median) wall times over the measured cycles, in seconds."""
    cycle = float(inf.mean() + sim.mean())
    return {"cycles": int(len(inf)), "inference_wall_s": float(inf.mean()),
            "inference_p50_s": float(np.median(inf)), "simulation_wall_s": float(sim.mean()),
            "simulation_p50_s": float(np.median(sim)), "stepping_wall_s": float(step.mean()),
            "handoff_wall_s": float(sim.mean() - step.mean()), "cycle_wall_s": cycle,
            "frames_per_s": frames_per_cycle / cycle}


def _collect(pipes, procs, timeout_s: float, answer: bytes | None = None) -> list[float]:
    """Every worker's answer (``answer`` itself, or its seconds stepping); RuntimeError
    naming a worker that failed or died."""
    deadline = time.monotonic() + timeout_s
    out = []
    for i, conn in enumerate(pipes):
        try:
            while not conn.poll(0.5):
                if not procs[i].is_alive() or time.monotonic() > deadline:
                    raise EOFError
            msg = conn.recv_bytes()
        except (EOFError, OSError):  # it died, or its end of the pipe closed
            procs[i].join(timeout=1.0)
            raise RuntimeError(f"turns: simulation worker {i} stopped answering (exit code "
                               f"{procs[i].exitcode})") from None
        if answer is not None and msg == answer:
            continue
        if answer is None and len(msg) == STEPPED.size:
            out.append(STEPPED.unpack(msg)[0])
            continue
        why = msg.decode(errors="replace").removeprefix("error: ")
        raise RuntimeError(f"turns: simulation worker {i} failed: {why}")
    return out
