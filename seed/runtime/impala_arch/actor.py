"""The IMPALA actor: its own copy of the model, local inference, whole unrolls sent up.

Per step it runs the policy on its ``envs_per_actor`` envs in one batch on the
CPU (its agent keeps the envs' recurrent state) and builds each env's unroll with the
same UnrollBuilder the SEED learner uses. When its envs complete an unroll
(all at once: they step in lockstep) it sends them and pulls the learner's
parameters if a newer version exists, so it never acts with parameters more
than one unroll old.

It times each step's *action latency*: from having the observations (the env step
returned) to beginning the env step with their actions. That holds local inference, unroll
assembly and, on a step that completes unrolls, sending them and pulling parameters: all
an IMPALA actor does between an observation and its action, as a SEED actor's figure holds
the round trip through the learner. The latencies go up with the next round of unrolls.
"""

from __future__ import annotations

import logging
import time
import uuid

import numpy as np

from seed.runtime.actor_envs import ActorEnvs
from seed.runtime.actor_process import actor_envs_for, run_actor_loop, spec_config
from seed.transport import tensor as wire
from seed.transport.proto import pb2
from seed.transport.unroll_codec import UnrollCodec
from seed.types import EnvOutput
from seed.unroll_spec import UnrollSpec
from seed.unrolls import UnrollBuilder

log = logging.getLogger(__name__)


def _limit_tf_threads() -> None:
    import tensorflow as tf
    try:
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    except RuntimeError:
        pass  # already initialised


class LocalPolicy:
    """The agent's network and inference, with parameters pulled from the learner."""

    def __init__(self, config, envs: ActorEnvs, task: int):
        import dataclasses

        from seed.agents import make_agent
        env = envs.envs[0]
        # Each actor samples actions from its own random stream.
        config = dataclasses.replace(config, seed=config.seed * 1000 + 1 + task)
        self.agent = make_agent(config, env.observation_space, env.action_space)
        # What an unroll holds, from the agent's outputs: the unrolls are built by it, and
        # encoded by it for the learner, which decodes by the same.
        self.unroll_codec = UnrollCodec(UnrollSpec.of(self.agent, env.observation_space))
        self.params = self.agent.parameters()
        self.version = -1

    def pull(self, stub) -> float:
        """Fetch parameters if newer; returns the pull time in ms."""
        t0 = time.perf_counter()
        reply = stub.GetParameters(pb2.ParametersRequest(have_version=self.version), timeout=60)
        if reply.values:
            if len(reply.values) != len(self.params):
                raise RuntimeError(f"learner sent {len(reply.values)} tensors for "
                                   f"{len(self.params)} parameters: model mismatch")
            for var, t in zip(self.params, reply.values):
                var.assign(wire.decode(t, shape=tuple(var.shape)))
            self.version = reply.version
        return (time.perf_counter() - t0) * 1000.0


def run_actor(address: str, task: int, max_steps: int = 0, log_interval_s: float = 30.0,
              security=None) -> int:
    """Run actor ``task`` against the learner at ``address`` until stopped.

    ``security``: a ClientSecurity (auth token, TLS CA) or None."""
    _limit_tf_threads()
    steps = {"n": 0}

    def build(spec):
        envs = actor_envs_for(spec, task)
        return {"envs": envs, "policy": LocalPolicy(spec_config(spec), envs, task)}

    def session(stub, parts):
        _act(stub, task, parts["envs"], parts["policy"], steps, max_steps, log_interval_s)

    return run_actor_loop(address, task, "impala", build, session, security)


def _act(stub, task, actor_envs: ActorEnvs, policy: LocalPolicy, steps, max_steps,
         log_interval_s):
    agent = policy.agent
    run_id = uuid.uuid4().hex
    env_ids = np.asarray(actor_envs.env_ids, np.int64)
    k = len(env_ids)
    builder = UnrollBuilder(policy.unroll_codec.spec, k, agent.unroll_overlap)
    pull_ms = policy.pull(stub)
    agent.reset_core_state(env_ids)  # a new run: its envs start from the initial state
    prev_action = np.zeros(k, np.int32)
    reward, done, obs = actor_envs.reset_all()
    observed_at = time.perf_counter()
    pending_episodes: dict[int, list] = {i: [] for i in range(k)}
    inference_ms: list[float] = []
    action_latency_ms: list[float] = []  # one per step since the last round of unrolls
    t_log, steps_at_log = time.monotonic(), steps["n"]
    while not max_steps or steps["n"] < max_steps:
        env_output = EnvOutput(reward, done, obs)
        # The core state before this step, of the envs an unroll can start at.
        first = builder.rows_wanting_state(np.arange(k))
        first_state = agent.read_core_state(env_ids[first]) if first.any() else ()
        t0 = time.perf_counter()
        action, agent_output = agent.infer(env_ids, prev_action, env_output)
        inference_ms.append((time.perf_counter() - t0) * 1000.0)
        action = np.asarray(action, np.int32)
        completed = builder.append_batch(np.arange(k), first_state, prev_action, env_output,
                                         agent_output, action)
        for sent, (i, unroll) in enumerate(completed):
            stub.SendUnroll(policy.unroll_codec.encode(
                unroll, actor_id=task, run_id=run_id, env_id=int(env_ids[i]),
                parameter_version=policy.version, episodes=pending_episodes[i],
                inference_ms=float(np.mean(inference_ms)), parameter_pull_ms=pull_ms,
                # the round's step latencies ride on its first message only
                action_latency_ms=action_latency_ms if sent == 0 else ()),
                timeout=120)
            pending_episodes[i] = []
        if completed:
            inference_ms, action_latency_ms = [], []
            pull_ms = policy.pull(stub)
        prev_action = action
        action_latency_ms.append((time.perf_counter() - observed_at) * 1000.0)
        reward, done, obs, finished = actor_envs.step(action)
        observed_at = time.perf_counter()
        for env_id, ret, length in finished:
            pending_episodes[env_id - int(env_ids[0])].append((env_id, ret, length))
        steps["n"] += k
        now = time.monotonic()
        if now - t_log >= log_interval_s:
            log.info("actor %d: %.0f env steps/s (parameters v%d)", task,
                     (steps["n"] - steps_at_log) / (now - t_log), policy.version)
            t_log, steps_at_log = now, steps["n"]
