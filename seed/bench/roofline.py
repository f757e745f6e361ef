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
``.json`` for a ``compute_dtype`` other than float32), a
:class:`seed.results.roofline.Roofline` (which also formats it, for the terminal and the
report alike).

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

import time
from pathlib import Path

from seed.bench import flops as bench_flops
from seed.bench.costs import (build_agent, inference_inputs, measure_inference,
                              measure_simulation, training_timer)
from seed.bench.timing import alternate, rates
from seed.config import Config
from seed.metrics.cpu import usable_cores
from seed.results import roofline as results_roofline
from seed.results.roofline import Roofline
from seed.runtime.seed_arch import sizing

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


def run_roofline(config: Config, seconds: float = 10.0, processes: int | None = None,
                 echo=print) -> Roofline:
    """Every measurement of the module doc, for ``config``'s env, network and shape (idle
    cores polling throughout when ``config.cpu_idle_poll``, as in a run of it)."""
    from seed.runtime import cpu_idle
    with cpu_idle.idle_polling(config.cpu_idle_poll):
        return _measure_all(config, seconds, processes, echo)


def _inference_vs_bare(agent, config: Config, obs_space, batches, frames_per_step: int,
                       seconds: float, echo) -> dict | None:
    """The agent's inference call in turns with the same step in bare TensorFlow, and its
    parts, per batch; None where there is no bare step for the config."""
    from seed.bench import bare_infer  # TensorFlow: never imported by the simulation workers
    if not bare_infer.has_bare_inference(config):
        return None
    out = {}
    for b in batches:
        echo(f"[roofline] inference in turns with the same step in bare TensorFlow, and "
             f"its parts: batch {b}, {seconds / 2:g}s each")
        timers = bare_infer.inference_timers(
            agent, config, obs_space, inference_inputs(agent, obs_space, b), frames_per_step)
        out[str(b)] = bare_infer.summarize(
            {name: rates(t) for name, t in
             alternate(timers, seconds / 2, INFERENCE_ROUNDS).items()})
    return out


def _training(agent, config: Config, obs_space, frames_per_step: int, seconds: float,
              echo) -> tuple[dict, dict | None]:
    """(the agent's train step, the bare one or None), timed in turns."""
    from seed.bench import bare_step
    timers = {"agent": training_timer(agent, config, obs_space, frames_per_step)}
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
    return training, bare


def _lockstep(config: Config, agent, obs_space, cores: int, frames_per_step: int, sim: dict,
              inference_s_per_call: float, data_path: dict, serve_ceiling: float,
              seconds: float, echo) -> dict:
    """SEED's lock-step serve bound, and its turns run for real without SEED."""
    from seed.bench.turns import measure_turns
    seed_batch = sizing.inference_batch_size(config)
    lockstep = lockstep_serve(config.num_envs, config.actors, cores, frames_per_step, sim,
                              inference_s_per_call, data_path)
    lockstep["fraction_of_serve_ceiling"] = lockstep["frames_per_s"] / serve_ceiling
    echo(f"[roofline] SEED's lock-step turns without SEED: batch {seed_batch} inference, "
         f"then {config.actors} process(es) stepping their envs once, {seconds:g}s")
    turns = measure_turns(config, agent, inference_inputs(agent, obs_space, seed_batch),
                          frames_per_step, seconds)
    # the data path's cycle carries the hand-offs: the pipes' are left out
    turns["with_data_path_frames_per_s"] = (config.num_envs * frames_per_step / (
        turns["inference_wall_s"] + turns["stepping_wall_s"] + lockstep["data_path_wall_s"]))
    lockstep["turns"] = turns
    return lockstep


def _with_data_path(data_path: dict, cores: int, costs: dict) -> None:
    """What SEED could reach with its data path's CPU counted too (not a ceiling of the
    formula), into ``data_path``."""
    data_path_cost = data_path["learner_cpu_s_per_frame"] + data_path["actor_cpu_s_per_frame"]
    seed_serve = costs["sim"] + costs["inf_seed"] + data_path_cost
    data_path["seed_serve_with_data_path"] = cores / seed_serve
    data_path["seed_train_with_data_path"] = cores / (seed_serve + costs["train"])


def _measure_all(config: Config, seconds: float, processes: int | None, echo) -> Roofline:
    from seed.bench.compare import check_runnable
    from seed.bench.data_path import measure_data_path
    from seed.runtime import architectures
    from seed.metrics.cpu_facts import with_effective_compute_dtype
    architectures.validate(config)
    config = with_effective_compute_dtype(config, echo)  # the dtype this CPU computes in
    check_runnable(config.env, config.env_kwargs, config.network)
    cores = usable_cores()
    seed_batch, impala_batch = sizing.inference_batch_size(config), config.envs_per_actor
    batches = sorted({1, impala_batch, seed_batch})
    echo(f"[roofline] simulation: {config.env}, {processes or cores} process(es), {seconds:g}s")
    sim = measure_simulation(config.env, config.env_kwargs, seconds, processes or cores)
    frames_per_step = sim["frames_per_step"]
    agent, spec = build_agent(config)
    obs_space = spec.observation_space
    inference = {}
    for b in batches:
        echo(f"[roofline] inference: {config.network}, batch {b}, {seconds:g}s")
        inference[str(b)] = measure_inference(agent, obs_space, b, seconds, frames_per_step)
    vs_bare = _inference_vs_bare(agent, config, obs_space, batches, frames_per_step, seconds,
                                 echo)
    training, bare = _training(agent, config, obs_space, frames_per_step, seconds, echo)
    flops = bench_flops.achieved(bench_flops.count(agent, config, obs_space), config,
                                 frames_per_step, cores, inference, training)
    echo(f"[roofline] SEED data path alone: {config.actors} actor stream(s) x "
         f"{config.envs_per_actor} envs, no inference, no envs, {seconds:g}s")
    data_path = measure_data_path(config, agent, spec, seconds)
    costs = {"sim": sim["cpu_s_per_frame"],
             "inf_seed": inference[str(seed_batch)]["cpu_s_per_frame"],
             "inf_impala": inference[str(impala_batch)]["cpu_s_per_frame"],
             "train": training["cpu_s_per_frame"]}
    ceil = ceilings(cores, costs["sim"],
                    {"seed": costs["inf_seed"], "impala": costs["inf_impala"]}, costs["train"])
    _with_data_path(data_path, cores, costs)
    lockstep = None
    if sizing.serve_runs_in_lockstep(config):
        lockstep = _lockstep(config, agent, obs_space, cores, frames_per_step, sim,
                             inference[str(seed_batch)]["wall_s_per_call"], data_path,
                             ceil["seed_serve"], seconds, echo)
    from seed.metrics.machine import machine_facts
    return Roofline(
        env=config.env, network=config.network, network_kwargs=config.network_kwargs,
        agent=config.agent, config=_shape(config), seed_batch=seed_batch,
        impala_batch=impala_batch, cores=cores, frames_per_step=frames_per_step,
        seconds_per_measurement=seconds, simulation=sim, inference=inference,
        inference_vs_bare=vs_bare, training=training, bare_training=bare,
        seed_data_path=data_path, seed_lockstep_serve=lockstep,
        costs_cpu_s_per_frame=costs, ceilings=ceil, formula=FORMULA, flops=flops,
        machine=machine_facts(), measured_at=time.strftime("%Y-%m-%dT%H:%M:%S"))


def _shape(config: Config) -> dict:
    """The config fields a roofline was measured for (what ``seed compare`` checks)."""
    return ({k: getattr(config, k) for k in ("actors", "envs_per_actor", "unroll_length",
                                             "batch_size", "env_kwargs", "cpu_idle_poll",
                                             "compute_dtype", "jit_inference")}
            | {k: getattr(config.transport, k) for k in ("actor_splits", "inference_batch_size")})


def write_roofline(result: Roofline, out: str | Path | None) -> Path:
    """``result`` into ``out``, by default ``results/roofline/<env>_<network>[...].json``."""
    from seed.bench.ceilings import roofline_path
    return results_roofline.write_roofline(result, Path(out) if out else roofline_path(
        result.env, result.network, result.config.get("cpu_idle_poll", False),
        result.config.get("compute_dtype", "float32")))


if __name__ == "__main__":  # pragma: no cover - use ``seed roofline``
    raise SystemExit("use: seed roofline --env ENV --network NET")
