"""SEED's data path alone: the learner service and actor streams, without inference or envs.

The roofline's ceilings count simulation and inference only. What SEED adds per frame
on top of them -- request building and encoding on the actor, gRPC both ways, decoding,
batching, reading an unroll's first core state, unroll assembly, the reply -- is measured here in
isolation: the real :class:`SeedLearnerService` in this process, whose agent answers
every batch with action 0 at once (:class:`NoInference`, the real agent's state and
output shapes), and ``actors`` client processes that each send the config's
``envs_per_actor`` envs of constant observations through the same streaming client a
SEED actor uses, one request per reply, as fast as they are answered (one stream per
actor, as with ``actor_splits: 1``).

CPU seconds per frame of the learner process and of the actor processes, over the same
wall-clock window, then say how much of a SEED run's CPU the data path takes (the
actors' client side is counted per frame like the rest of the roofline: frames = env
steps x frames per step). The clients run as spawned processes: they never load
TensorFlow.
"""

from __future__ import annotations

import multiprocessing as mp
import time
import uuid

import numpy as np

WARMUP_S = 2.0  # streams open, the first batches go through; not measured


class NoInference:
    """``agent`` with a forward pass that costs nothing: every env gets action 0, and the
    agent outputs the unrolls store are zeros of the real agent's output spec."""

    def __init__(self, agent):
        self._agent = agent
        self.unroll_length = agent.unroll_length
        self.unroll_overlap = agent.unroll_overlap
        self._outputs = dict(agent.output_spec())
        self._initial_row = tuple(np.asarray(s)[0] for s in agent.initial_state(1))

    def output_spec(self):
        return dict(self._outputs)

    def initial_state(self, batch_size):
        return self._agent.initial_state(batch_size)

    def is_eval_env(self, env_id) -> bool:
        del env_id
        return False

    def new_buffer(self):
        return self._agent.new_buffer()

    def read_core_state(self, env_ids):
        """The initial state's rows: the learner still copies an unroll's first state."""
        return tuple(np.repeat(row[None], len(env_ids), axis=0) for row in self._initial_row)

    def reset_core_state(self, env_ids):
        del env_ids

    def infer(self, env_ids, prev_action, env_output):
        del prev_action, env_output
        n = len(env_ids)
        outputs = {k: np.zeros((n,) + tuple(spec.shape), spec.dtype)
                   for k, spec in self._outputs.items()}
        return outputs["action"], outputs


def _client(address: str, spec_bytes: bytes, actor_id: int, env_ids: list, start: float,
            stop: float, out) -> None:
    """One actor's stream: build, send, await, until ``stop``; CPU and steps in
    [``start``, ``stop``] go to ``out``."""
    try:
        out.put(_client_loop(address, spec_bytes, actor_id, env_ids, start, stop))
    except Exception as e:  # reported by the parent as one line
        out.put({"error": f"actor {actor_id}: {type(e).__name__}: {e}"})


def _client_loop(address, spec_bytes, actor_id, env_ids, start, stop) -> dict:
    from seed.runtime.seed_arch.actor import _GroupStream
    from seed.transport import tensor as wire
    from seed.transport.channel import connect
    from seed.transport.proto import pb2
    spec = pb2.Spec.FromString(spec_bytes)
    channel, stub = connect(address, spec)
    k = len(env_ids)
    obs = np.zeros((k,) + tuple(spec.observation.shape), np.dtype(spec.observation.dtype))
    reward, done = np.zeros(k, np.float32), np.zeros(k, bool)
    run_id = uuid.uuid4().hex
    stream = _GroupStream(stub, list(range(k)), list(env_ids))
    steps, rtts, cpu0 = 0, [], None
    try:
        while True:
            now = time.time()
            if cpu0 is None and now >= start:
                cpu0, steps, rtts = time.process_time(), 0, []
            if now >= stop:
                break
            # No envs here: the round trip stands for the actor's action latency, which a
            # request carries (so it is as large as an actor's, and the learner counts it).
            stream.send(pb2.StepRequest(
                actor_id=actor_id, run_id=run_id, env_ids=env_ids,
                reward=wire.encode(reward), done=wire.encode(done),
                observation=wire.encode(obs), last_action_latency_ms=stream.rtt_ms))
            stream.receive_actions()
            steps += 1
            rtts.append(stream.rtt_ms)
    finally:
        stream.close()
        channel.close()
    if cpu0 is None:
        raise RuntimeError("the measured window never started")
    return {"steps": steps, "env_steps": steps * k, "cpu_s": time.process_time() - cpu0,
            "rtt_ms": rtts}


def measure_data_path(config, agent, env_spec, seconds: float) -> dict:
    """Run the SEED learner service on ``agent``'s shapes with :class:`NoInference` and
    ``config.actors`` client processes for ``seconds`` (after ``WARMUP_S``); ``env_spec``
    is the config's :class:`seed.runtime.learner_core.EnvSpec`."""
    from seed.config import replaced
    from seed.runtime.architectures import architecture
    from seed.runtime.learner_core import LearnerCore
    from seed.transport.channel import start_server

    # One stream per actor: with actor_splits > 1 an actor's groups take turns, which a
    # client that only waits on its replies has no reason to do.
    config = replaced(config, arch="seed", train=False, actor_splits=1)
    seed = architecture("seed")
    frames_per_step = int(env_spec.frames_per_step)
    core = LearnerCore(config, env_spec, agent=NoInference(agent))
    service = seed.service(core)
    server, address = start_server(service, "", max_workers=seed.grpc_workers(config))
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    k = int(config.envs_per_actor)
    start = time.time() + WARMUP_S + 3.0  # + the clients' own start-up (imports)
    stop = start + seconds
    procs = [ctx.Process(target=_client, daemon=True,
                         args=(address, service.spec.SerializeToString(), a,
                               list(range(a * k, (a + 1) * k)), start, stop, out))
             for a in range(int(config.actors))]
    try:
        for p in procs:
            p.start()
        time.sleep(max(0.0, start - time.time()))
        cpu0 = time.process_time()
        time.sleep(max(0.0, stop - time.time()))
        learner_cpu = time.process_time() - cpu0
        results = [out.get(timeout=60) for _ in procs]
    finally:
        for p in procs:
            p.join(timeout=10)
            if p.is_alive():
                p.terminate()
        service.close()
        core.stop()
        server.stop(0)
    return _summary(results, int(config.actors), k, seconds, frames_per_step, learner_cpu)


def _summary(results: list[dict], actors: int, envs_per_actor: int, seconds: float,
             frames_per_step: int, learner_cpu: float) -> dict:
    """The clients' results and the learner's CPU as the measurement; RuntimeError for a
    client's error or a window no step went through."""
    errors = [r["error"] for r in results if "error" in r]
    if errors:
        raise RuntimeError("; ".join(errors))
    frames = sum(r["env_steps"] for r in results) * frames_per_step
    actor_cpu = sum(r["cpu_s"] for r in results)
    rtts = np.concatenate([r["rtt_ms"] for r in results])
    if frames == 0:
        raise RuntimeError("no step went through the data path in the measured window")
    return {"actors": actors, "envs_per_actor": envs_per_actor, "seconds": seconds,
            "frames_per_s": frames / seconds,
            "learner_cpu_s_per_frame": learner_cpu / frames,
            "actor_cpu_s_per_frame": actor_cpu / frames,
            "round_trip_p50_ms": float(np.percentile(rtts, 50)),
            "round_trip_p99_ms": float(np.percentile(rtts, 99))}

