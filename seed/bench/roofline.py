"""``seed roofline``: the best end-to-end FPS this machine's cores can reach for a config.

Three costs are measured, each in isolation, as CPU seconds (one core busy for one
second = 1) per env frame:

* ``c_sim``: the environment alone, random actions, one process per core
  (multiprocessing). Each worker's CPU time / its frames. Also recorded: the
  pure-simulation ceiling, frames/s summed over the workers.
* ``c_inf[B]``: ``agent.infer`` on a batch of B envs (random observations from the
  observation space), CPU time of this process per call / (B x frames per step).
  Batches measured: the SEED learner's batch (one request from every actor
  stream: ``actors x envs_per_actor / actor_splits``),
  ``envs_per_actor`` (an IMPALA actor's batch) and 1.
* ``c_train``: ``agent.train_step`` on a buffer kept full of synthetic unrolls of
  the run's shapes; CPU time per step / (env steps trained x frames per step).

For a V-trace config on an Atari network (no LSTM), ``agent.infer`` is also timed in
turns with the same inference step written bare (:mod:`seed.bench.bare_infer`: frame
stack update, forward pass, sampling, outputs to NumPy) at each of those batches, and
``infer_over_bare`` (the agent's frames/s over the bare step's) says what the suite's
structure costs on the inference path; the agent's call is broken down into its parts
(network, stack update, sampling, host copies in and out), each timed alone.

For a V-trace config on an Atari network, the same train step written bare
(:mod:`seed.bench.bare_step`) is timed in turns with the agent's (``TRAINING_ROUNDS``
blocks each, :func:`seed.bench.timing.alternate`), and
``agent_over_bare`` (the agent's frames/s over the bare step's) says how much
the suite's own structure costs in training.

For SEED, the data path that carries each step between actor and learner is also
measured alone (:mod:`seed.bench.data_path`: the real learner service and actor
streams, no inference, no envs), with the ceilings it would leave if its CPU were
counted too; those are not part of the formula below, whose ceilings stay what a run's
"fraction of the ceiling" is taken against.

The CPU time of a process counts all its threads, so TensorFlow's intra-op
parallelism is paid for, not hidden. Each frame is simulated once, inferred once
and (V-trace) trained on once, so with ``cores`` cores::

    ceiling_train = cores / (c_sim + c_inf[B] + c_train)
    ceiling_serve = cores / (c_sim + c_inf[B])            (serve mode: no training)

with B the SEED batch for ``seed_*`` and envs_per_actor for ``impala_*``. The
ceiling leaves out everything the architectures add (transport, unroll assembly,
parameter pulls, Python glue), which is what a compare run's fraction of the
ceiling shows. Written to ``results/roofline/<env>_<network>.json`` (``-<dtype>`` before
``.json`` for a ``compute_dtype`` other than float32).

FLOPs per frame of inference and of the train step, counted from the network, and the
FLOP/s each measurement achieved, against the CPU's peak for the dtype it computed in, are
recorded under ``flops`` (:mod:`seed.bench.flops`), with the CPU's model and flags.

The ceiling assumes that simulation and inference overlap perfectly. SEED with
``actor_splits: 1`` and a batch of every env does not overlap them: each actor waits for
its actions, and the learner for every actor's request, so one cycle is the batch's
inference, then the actors' steps, then the data path's round trip, in turn. From the
same measurements (wall times, not CPU)::

    seed_lockstep_serve = num_envs x frames_per_step / (t_inf[B] + t_sim + t_data_path)

with t_sim the wall time for the actors to step their envs, ``min(actors, cores)`` of
them at once, and t_data_path the data path's cycle alone. Each term is timed alone on
an idle machine, so a serve run of that schedule should stay below it. Timed alone, each
runs back to back with warm caches and busy cores, which a lock-step cycle never gives
it: :mod:`seed.bench.turns` also runs inference and simulation in turns for real, without
SEED's engine (``seed_lockstep_serve.turns``), and inference and stepping so timed plus the
data path's cycle is the bound of that schedule on this machine, whatever engine runs it.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import queue
import time
from pathlib import Path

import numpy as np

from seed.metrics.cpu import usable_cores
from seed.bench.timing import alternate, rates, step_timer
from seed.config import Config, replaced

#: The agent's train step and the bare one are timed in this many alternating blocks each
#: (seed/bench/timing.py): their ratio is the target of issue 16, and in turns the
#: machine's drift does not fall on one of them alone.
TRAINING_ROUNDS = 5
#: The same for the agent's inference call, the bare one and the call's parts.
INFERENCE_ROUNDS = 5

FORMULA = ("ceiling_train = cores / (c_sim + c_inf + c_train); "
           "ceiling_serve = cores / (c_sim + c_inf); c_* in CPU seconds per env frame, "
           "c_inf at the architecture's inference batch (SEED: the learner's batch, "
           "actors*envs_per_actor/actor_splits; IMPALA: envs_per_actor)")


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


# -- the roofline ------------------------------------------------------------------------

def ceilings(cores: int, c_sim: float, c_inf: dict, c_train: float) -> dict:
    """The ceiling formula (see the module doc) for each architecture and mode."""
    out = {}
    for arch in ("seed", "impala"):
        out[f"{arch}_train"] = cores / (c_sim + c_inf[arch] + c_train)
        out[f"{arch}_serve"] = cores / (c_sim + c_inf[arch])
    out["simulation_only"] = cores / c_sim
    return out


def lockstep_serve(num_envs: int, actors: int, cores: int, frames_per_step: int,
                   sim: dict, inference_s_per_call: float, data_path: dict) -> dict:
    """SEED's serve rate bound when simulation, inference and transport take turns (the
    module doc): each term of one cycle in seconds, the cycle and the frames/s it gives."""
    step_s = sim["processes"] / sim["steps_per_s"]  # one env step in one simulating process
    frames_per_cycle = num_envs * frames_per_step
    terms = {"inference_wall_s": inference_s_per_call,
             "simulation_wall_s": num_envs * step_s / min(actors, cores),
             "data_path_wall_s": frames_per_cycle / data_path["frames_per_s"]}
    cycle = sum(terms.values())
    return {**terms, "cycle_wall_s": cycle, "frames_per_s": frames_per_cycle / cycle}


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


def run_roofline(config: Config, seconds: float = 10.0, processes: int | None = None,
                 echo=print) -> dict:
    """Every measurement of the module doc, for ``config``'s env, network and shape (idle
    cores polling throughout when ``config.cpu_idle_poll``, as in a run of it)."""
    from seed.runtime import cpu_idle
    with cpu_idle.idle_polling(config.cpu_idle_poll):
        return _measure_all(config, seconds, processes, echo)


def _measure_all(config: Config, seconds: float, processes: int | None, echo) -> dict:
    from seed.runtime import architectures
    from seed.runtime.seed_arch import transport as seed_transport
    architectures.validate(config)
    from seed.metrics.cpu_facts import with_effective_compute_dtype
    config = with_effective_compute_dtype(config, echo)
    from seed.bench.compare import check_runnable
    check_runnable(config.env, config.env_kwargs, config.network)
    cores = usable_cores()
    processes = processes or cores
    seed_batch = seed_transport.inference_batch_size(config)
    impala_batch = config.envs_per_actor
    echo(f"[roofline] simulation: {config.env}, {processes} process(es), {seconds:g}s")
    sim = measure_simulation(config.env, config.env_kwargs, seconds, processes)
    frames_per_step = sim["frames_per_step"]
    agent, spec = build_agent(config)
    obs_space = spec.observation_space
    inference = {}
    for b in sorted({1, impala_batch, seed_batch}):
        echo(f"[roofline] inference: {config.network}, batch {b}, {seconds:g}s")
        inference[str(b)] = measure_inference(agent, obs_space, b, seconds, frames_per_step)
    from seed.bench import bare_infer  # TensorFlow: never imported by the simulation workers
    inference_vs_bare = None
    if bare_infer.has_bare_inference(config):
        inference_vs_bare = {}
        for b in sorted({1, impala_batch, seed_batch}):
            echo(f"[roofline] inference in turns with the same step in bare TensorFlow, and "
                 f"its parts: batch {b}, {seconds / 2:g}s each")
            timers = bare_infer.inference_timers(
                agent, config, obs_space, inference_inputs(agent, obs_space, b), frames_per_step)
            inference_vs_bare[str(b)] = bare_infer.summarize(
                {name: rates(t) for name, t in
                 alternate(timers, seconds / 2, INFERENCE_ROUNDS).items()})
    timers = {"agent": training_timer(agent, config, obs_space, frames_per_step)}
    from seed.bench import bare_step
    if config.agent == "vtrace" and config.network in bare_step.NETWORKS:
        timers["bare"] = bare_step.bare_training_timer(config, agent.num_actions, frames_per_step)
    echo(f"[roofline] training: batch {config.batch_size} x T={config.unroll_length}, "
         f"{seconds:g}s" + (", in turns with the same step in bare TensorFlow"
                            if "bare" in timers else ""))
    measured = {name: rates(t) for name, t in
                alternate(timers, seconds, TRAINING_ROUNDS).items()}
    training, bare = measured["agent"], measured.get("bare")
    if bare is not None:
        bare["agent_over_bare"] = training["frames_per_s"] / bare["frames_per_s"]
    from seed.bench import flops as bench_flops
    flops = bench_flops.achieved(bench_flops.count(agent, config, obs_space), config,
                                 frames_per_step, cores, inference, training)
    echo(f"[roofline] SEED data path alone: {config.actors} actor stream(s) x "
         f"{config.envs_per_actor} envs, no inference, no envs, {seconds:g}s")
    from seed.bench.data_path import measure_data_path
    data_path = measure_data_path(config, agent, spec, seconds)
    costs = {"sim": sim["cpu_s_per_frame"],
             "inf_seed": inference[str(seed_batch)]["cpu_s_per_frame"],
             "inf_impala": inference[str(impala_batch)]["cpu_s_per_frame"],
             "train": training["cpu_s_per_frame"]}
    ceil = ceilings(cores, costs["sim"],
                    {"seed": costs["inf_seed"], "impala": costs["inf_impala"]}, costs["train"])
    # What SEED could reach with its data path counted too (not a ceiling of the formula).
    data_path_cost = data_path["learner_cpu_s_per_frame"] + data_path["actor_cpu_s_per_frame"]
    data_path["seed_serve_with_data_path"] = cores / (costs["sim"] + costs["inf_seed"]
                                                      + data_path_cost)
    data_path["seed_train_with_data_path"] = cores / (costs["sim"] + costs["inf_seed"]
                                                      + costs["train"] + data_path_cost)
    lockstep = None
    if seed_transport.serve_runs_in_lockstep(config):
        lockstep = lockstep_serve(config.num_envs, config.actors, cores, frames_per_step, sim,
                                  inference[str(seed_batch)]["wall_s_per_call"], data_path)
        lockstep["fraction_of_serve_ceiling"] = lockstep["frames_per_s"] / ceil["seed_serve"]
        echo(f"[roofline] SEED's lock-step turns without SEED: batch {seed_batch} inference, "
             f"then {config.actors} process(es) stepping their envs once, {seconds:g}s")
        from seed.bench.turns import measure_turns
        turns = measure_turns(config, agent, inference_inputs(agent, obs_space, seed_batch),
                              frames_per_step, seconds)
        # the data path's cycle carries the hand-offs: the pipes' are left out
        turns["with_data_path_frames_per_s"] = (config.num_envs * frames_per_step / (
            turns["inference_wall_s"] + turns["stepping_wall_s"] + lockstep["data_path_wall_s"]))
        lockstep["turns"] = turns
    from seed.metrics.machine import machine_facts
    return {
        "env": config.env, "network": config.network, "network_kwargs": config.network_kwargs,
        "agent": config.agent,
        "config": {k: getattr(config, k) for k in (
            "actors", "envs_per_actor", "unroll_length", "batch_size", "env_kwargs",
            "cpu_idle_poll", "compute_dtype", "jit_inference")}
        | {k: getattr(config.transport, k) for k in ("actor_splits", "inference_batch_size")},
        "seed_batch": seed_batch, "impala_batch": impala_batch,
        "cores": cores, "frames_per_step": frames_per_step, "seconds_per_measurement": seconds,
        "simulation": sim, "inference": inference, "inference_vs_bare": inference_vs_bare,
        "training": training,
        "bare_training": bare, "seed_data_path": data_path, "seed_lockstep_serve": lockstep,
        "costs_cpu_s_per_frame": costs, "ceilings": ceil, "formula": FORMULA, "flops": flops,
        "machine": machine_facts(), "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }


def format_roofline(r: dict) -> str:
    c, ceil = r["costs_cpu_s_per_frame"], r["ceilings"]
    us = lambda x: f"{1e6 * x:,.1f} us"  # noqa: E731
    lines = [
        f"roofline {r['env']} / {r['network']} on {r['cores']} core(s) "
        f"(frames = env steps x {r['frames_per_step']})",
        f"  simulation: {r['simulation']['frames_per_s']:,.0f} frames/s with "
        f"{r['simulation']['processes']} process(es); {us(c['sim'])} CPU per frame",
    ]
    for b, m in sorted(r["inference"].items(), key=lambda kv: int(kv[0])):
        lines.append(f"  inference batch {int(b):>4}: {m['frames_per_s']:,.0f} frames/s on its "
                     f"own; {us(m['cpu_s_per_frame'])} CPU per frame, "
                     f"{1e3 * m['wall_s_per_call']:.2f} ms per call")
    for b, m in sorted((r.get("inference_vs_bare") or {}).items(), key=lambda kv: int(kv[0])):
        parts = m["agent_parts_ms"]
        lines.append(f"  inference batch {int(b):>4} vs bare TensorFlow "
                     f"(seed/bench/bare_infer.py): agent {m['agent_ms_per_call']:.2f} ms, "
                     f"bare {m['bare_ms_per_call']:.2f} ms per call; "
                     f"infer_over_bare {m['infer_over_bare']:.2f}")
        lines.append("    the agent's call in parts, each alone: " + ", ".join(
            f"{name.replace('_', ' ')} {ms:.2f}" for name, ms in parts.items())
            + f"; the rest (dispatch, glue) {m['agent_rest_ms']:.2f} ms")
    t = r["training"]
    lines.append(f"  training: {t['frames_per_s']:,.0f} frames/s on its own; "
                 f"{us(c['train'])} CPU per frame, {1e3 * t['wall_s_per_step']:.1f} ms per step")
    bare = r.get("bare_training")  # absent from files written before it existed
    if bare:
        lines.append(f"  bare TensorFlow train step (seed/bench/bare_step.py): "
                     f"{bare['frames_per_s']:,.0f} frames/s, {1e3 * bare['wall_s_per_step']:.1f} ms "
                     f"per step; the agent's step runs at {bare['agent_over_bare']:.2f} x its speed")
    from seed.bench.flops import format_lines
    lines += format_lines(r)
    d = r.get("seed_data_path")  # absent from files written before it existed
    if d:
        lines.append(f"  SEED data path alone (seed/bench/data_path.py; no inference, no envs): "
                     f"{d['frames_per_s']:,.0f} frames/s, round trip p50 "
                     f"{d['round_trip_p50_ms']:.2f} ms; learner {us(d['learner_cpu_s_per_frame'])}"
                     f" + actors {us(d['actor_cpu_s_per_frame'])} CPU per frame")
    lines.append(f"  ceiling: {FORMULA}")
    for arch in ("seed", "impala"):
        lines.append(f"    {arch:<6}: train {ceil[f'{arch}_train']:>12,.0f} frames/s   "
                     f"serve {ceil[f'{arch}_serve']:>12,.0f} frames/s")
    lines.append(f"    simulation only: {ceil['simulation_only']:,.0f} frames/s")
    if d:
        lines.append(f"    seed with its data path's CPU counted too: train "
                     f"{d['seed_train_with_data_path']:,.0f}, serve "
                     f"{d['seed_serve_with_data_path']:,.0f} frames/s")
    lock = r.get("seed_lockstep_serve")  # absent from older files; None with actor_splits > 1
    if lock:
        lines.append(f"    seed serve, simulation, inference and data path in turn (actor_splits "
                     f"1): {lock['frames_per_s']:,.0f} frames/s, "
                     f"{100 * lock['fraction_of_serve_ceiling']:.0f}% of the serve ceiling "
                     f"(cycle {1e3 * lock['cycle_wall_s']:.2f} ms = inference "
                     f"{1e3 * lock['inference_wall_s']:.2f} + simulation "
                     f"{1e3 * lock['simulation_wall_s']:.2f} + data path "
                     f"{1e3 * lock['data_path_wall_s']:.2f})")
    turns = (lock or {}).get("turns")  # absent from older files
    if turns:
        lines.append(f"    the same turns run for real without SEED (seed/bench/turns.py): "
                     f"inference {1e3 * turns['inference_wall_s']:.2f} + stepping "
                     f"{1e3 * turns['stepping_wall_s']:.2f} + hand-off over pipes "
                     f"{1e3 * turns['handoff_wall_s']:.2f} ms a cycle; inference + stepping + "
                     f"data path {turns['with_data_path_frames_per_s']:,.0f} frames/s")
    return "\n".join(lines)


def write_roofline(result: dict, out: str | Path | None) -> Path:
    from seed.bench.compare import roofline_path
    path = Path(out) if out else roofline_path(
        result["env"], result["network"], result["config"].get("cpu_idle_poll", False),
        result["config"].get("compute_dtype", "float32"))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2))
    return path


if __name__ == "__main__":  # pragma: no cover - use ``seed roofline``
    raise SystemExit("use: seed roofline --env ENV --network NET")
