"""Each cost ``seed roofline`` measures, alone: env stepping in processes of its own
(:func:`measure_simulation`), the agent's inference call on a batch
(:func:`measure_inference`), and a timer of its train step on synthetic unrolls of the run's
shapes (:func:`training_timer`); and the agent they are measured on (:func:`build_agent`).
The roofline (:mod:`seed.bench.roofline`), the sweeps and the turns use them.

Nothing here imports TensorFlow at module level: the simulation workers import this module.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import time

import numpy as np

from seed.bench.timing import step_timer
from seed.config import Config, replaced


# -- simulation -------------------------------------------------------------------------

def _simulate(env_name: str, env_kwargs: dict, seconds: float, seed: int, out) -> None:
    try:
        _simulate_inner(env_name, env_kwargs, seconds, seed, out)
    except Exception as e:  # reported by the parent as one line
        out.put({"error": f"{type(e).__name__}: {e}"})


def _simulate_inner(env_name: str, env_kwargs: dict, seconds: float, seed: int, out) -> None:
    import envs
    env = envs.make(env_name, **env_kwargs)
    rng = np.random.default_rng(seed)
    n = int(env.action_space.n)
    frames_per_step = int(env.frames_per_step)
    env.reset(seed=seed)
    steps = 0
    wall0, cpu0 = time.perf_counter(), time.process_time()
    while True:
        for _ in range(64):
            _, _, terminated, truncated, _ = env.step(int(rng.integers(n)))
            steps += 1
            if terminated or truncated:
                env.reset()
        if time.perf_counter() - wall0 >= seconds:
            break
    out.put({"steps": steps, "frames": steps * frames_per_step,
             "wall_s": time.perf_counter() - wall0, "cpu_s": time.process_time() - cpu0,
             "frames_per_step": frames_per_step})
    env.close()


def measure_simulation(env_name: str, env_kwargs: dict, seconds: float,
                       processes: int) -> dict:
    """Random-action env stepping in ``processes`` processes at once."""
    ctx = mp.get_context("spawn")  # no TensorFlow or threads inherited
    out = ctx.Queue()
    procs = [ctx.Process(target=_simulate, args=(env_name, env_kwargs, seconds, 1000 + i, out))
             for i in range(processes)]
    for p in procs:
        p.start()
    results = []
    deadline = time.monotonic() + seconds + 300
    try:
        while len(results) < len(procs):
            try:
                r = out.get(timeout=1.0)
            except queue.Empty:
                dead = [p for p in procs if p.exitcode not in (None, 0)]
                if dead or time.monotonic() > deadline:
                    raise RuntimeError(f"simulation workers failed (exit codes "
                                       f"{[p.exitcode for p in procs]})") from None
                continue
            if "error" in r:
                raise RuntimeError(f"simulating {env_name} failed: {r['error']}")
            results.append(r)
    finally:
        for p in procs:
            p.join(timeout=10)
            if p.is_alive():
                p.terminate()
    frames = sum(r["frames"] for r in results)
    steps = sum(r["steps"] for r in results)
    cpu = sum(r["cpu_s"] for r in results)
    wall = max(r["wall_s"] for r in results)
    return {"processes": processes, "steps": steps, "frames": frames,
            "frames_per_step": results[0]["frames_per_step"],
            "steps_per_s": sum(r["steps"] / r["wall_s"] for r in results),
            "frames_per_s": sum(r["frames"] / r["wall_s"] for r in results),
            "wall_s": wall, "cpu_s": cpu, "cpu_s_per_frame": cpu / frames}


# -- inference ---------------------------------------------------------------------------

def _observations(space, n: int, rng: np.random.Generator) -> np.ndarray:
    low = np.broadcast_to(np.asarray(space.low, np.float64), space.shape)
    high = np.broadcast_to(np.asarray(space.high, np.float64), space.shape)
    if np.issubdtype(space.dtype, np.integer):
        x = rng.integers(low.astype(np.int64), high.astype(np.int64) + 1,
                         size=(n,) + tuple(space.shape))
    else:
        lo, hi = np.maximum(low, -10.0), np.minimum(high, 10.0)
        x = rng.uniform(lo, hi, size=(n,) + tuple(space.shape))
    return x.astype(space.dtype)


def inference_inputs(agent, observation_space, batch: int) -> tuple:
    """``(env_ids, prev_action, env_output)`` for ``agent.infer`` on envs ``0..batch-1``:
    random observations from the space; the envs' core states are reset."""
    from seed.types import EnvOutput
    obs = _observations(observation_space, batch, np.random.default_rng(0))
    env_out = EnvOutput(np.zeros(batch, np.float32), np.zeros(batch, bool), obs)
    env_ids = np.arange(batch, dtype=np.int32)
    agent.reset_core_state(env_ids)
    return env_ids, np.zeros(batch, np.int32), env_out


def measure_inference(agent, observation_space, batch: int, seconds: float,
                      frames_per_step: int, min_calls: int = 5) -> dict:
    """``agent.infer`` on ``batch`` envs, repeated for ``seconds`` (at least ``min_calls``)."""
    env_ids, prev, env_out = inference_inputs(agent, observation_space, batch)
    for _ in range(3):  # trace and warm up
        prev, _ = agent.infer(env_ids, prev, env_out)
    calls = 0
    wall0, cpu0 = time.perf_counter(), time.process_time()
    while calls < min_calls or time.perf_counter() - wall0 < seconds:
        prev, _ = agent.infer(env_ids, prev, env_out)
        calls += 1
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    frames = calls * batch * frames_per_step
    return {"batch": batch, "calls": calls, "wall_s_per_call": wall / calls,
            "cpu_s_per_call": cpu / calls, "frames_per_s": frames / wall,
            "cpu_s_per_frame": cpu / frames, "cpu_s_per_sample": cpu / (calls * batch)}


# -- training ----------------------------------------------------------------------------

def synthetic_unrolls(agent, observation_space, count: int = 4, seed: int = 0) -> list:
    """Unrolls with the run's shapes: random observations, the agent's own outputs."""
    from seed.types import EnvOutput, Unroll
    rng = np.random.default_rng(seed)
    steps = int(agent.unroll_length) + 1
    out = []
    for _ in range(count):
        obs = _observations(observation_space, steps, rng)
        done = rng.random(steps) < 0.05
        done[0] = True
        env_out = EnvOutput(rng.choice([-1.0, 0.0, 1.0], steps).astype(np.float32), done, obs)
        prev = np.zeros(steps, np.int32)
        # One step at a time, as env 0 (an env id indexes the agent's state and R2D2's
        # epsilons, and a config may have fewer envs than an unroll has steps).
        outputs = []
        agent.reset_core_state(np.zeros(1, np.int32))
        for t in range(steps):
            _, output = agent.infer(np.zeros(1, np.int32), prev[t:t + 1],
                                    EnvOutput(*(x[t:t + 1] for x in env_out)))
            outputs.append(output)
            if t + 1 < steps:
                prev[t + 1] = output["action"][0]
        agent_output = {k: np.concatenate([o[k] for o in outputs]) for k in outputs[0]}
        core_state = tuple(np.asarray(s)[0] for s in agent.initial_state(1))
        out.append(Unroll(core_state=core_state, prev_action=prev, env_output=env_out,
                          agent_output={k: np.asarray(v) for k, v in agent_output.items()}))
    return out


def training_timer(agent, config: Config, observation_space, frames_per_step: int,
                   min_steps: int = 3):
    """A :func:`seed.bench.timing.step_timer` of ``agent.train_step`` on a buffer topped up
    with synthetic unrolls before each step (outside the timed part)."""
    unrolls = synthetic_unrolls(agent, observation_space)
    buffer = agent.new_buffer()
    need = int(config.batch_size)
    if config.agent == "r2d2":
        need = max(need, int(config.agent_config.replay_min_size))
    need = min(need, buffer.capacity)
    k = 0

    def top_up():
        nonlocal k
        while len(buffer) < need:
            buffer.put(unrolls[k % len(unrolls)], timeout=0)
            k += 1

    return step_timer(lambda: agent.train_step(buffer),
                      lambda metrics: metrics["env_steps_trained"], frames_per_step,
                      prepare=top_up, min_steps=min_steps)


def build_agent(config: Config):
    """(agent, env spec) for the config's env and network; the spec
    (:class:`seed.runtime.learner_core.EnvSpec`) holds the observation and action spaces and
    the frames per step.

    The agent's replay is free-running (``replay_ratio`` 0): the benchmarks time a step's
    cost, filling the buffer and training from one thread, where a held ratio would make
    the train step wait for inserts that never come."""
    import tensorflow as tf
    from seed.agents import make_agent
    from seed.runtime.learner_core import EnvSpec
    spec = EnvSpec.probe(config.env, config.env_kwargs)
    tf.random.set_seed(config.seed)
    if config.agent == "r2d2":
        config = replaced(config, replay_ratio=0.0)
    agent = make_agent(config, spec.observation_space, spec.action_space)
    return agent, spec
