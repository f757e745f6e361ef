"""The SEED actor: steps its envs and nothing else. It never holds a model.

One long-lived StreamSteps call carries all ``envs_per_actor`` envs per step.
When the learner goes away the actor backs off and reconnects; its envs then
start fresh episodes under a new run id, so the learner drops their
half-built unrolls instead of mixing two runs.
"""

from __future__ import annotations

import json
import logging
import queue
import time
import uuid

from seed.runtime.actor_envs import ActorEnvs
from seed.runtime.actor_process import fetch_spec, run_with_reconnect
from seed.transport import tensor as wire
from seed.transport.proto import pb2

log = logging.getLogger(__name__)

_END = object()


def run_actor(address: str, task: int, max_steps: int = 0, log_interval_s: float = 30.0) -> int:
    """Run actor ``task`` against the learner at ``address`` until stopped."""
    state = {"envs": None, "steps": 0}

    def loop_once():
        channel, stub, spec = fetch_spec(address, task)
        try:
            k = spec.envs_per_actor
            if task < 0 or task >= spec.num_actors:
                raise SystemExit(f"actor task {task} out of range: the learner expects "
                                 f"{spec.num_actors} actors")
            if state["envs"] is None:
                config = json.loads(spec.config_json)
                state["envs"] = ActorEnvs(spec.env, json.loads(spec.env_kwargs_json),
                                          list(range(task * k, (task + 1) * k)),
                                          seed=int(config.get("seed", 0)))
            _stream(stub, task, state, max_steps, log_interval_s)
        finally:
            channel.close()

    try:
        return run_with_reconnect(loop_once, task, "seed")
    finally:
        if state["envs"] is not None:
            state["envs"].close()


def _stream(stub, task, state, max_steps, log_interval_s):
    actor_envs: ActorEnvs = state["envs"]
    run_id = uuid.uuid4().hex
    env_ids = actor_envs.env_ids
    requests: queue.Queue = queue.Queue(maxsize=2)

    def request_iter():
        while True:
            item = requests.get()
            if item is _END:
                return
            yield item

    responses = stub.StreamSteps(request_iter())
    try:
        reward, done, obs = actor_envs.reset_all()
        episodes: list = []
        rtt_ms = 0.0
        t_log, steps_at_log = time.monotonic(), state["steps"]
        while not max_steps or state["steps"] < max_steps:
            request = pb2.StepRequest(
                actor_id=task, run_id=run_id, env_ids=env_ids,
                reward=wire.encode(reward), done=wire.encode(done),
                observation=wire.encode(obs), last_round_trip_ms=rtt_ms,
                episodes=[pb2.EpisodeSummary(env_id=e, episode_return=r, episode_length=n)
                          for e, r, n in episodes])
            t0 = time.perf_counter()
            requests.put(request)
            response = next(responses)
            rtt_ms = (time.perf_counter() - t0) * 1000.0
            actions = wire.decode(response.action, dtype="int32", shape=(len(env_ids),),
                                  name="action")
            reward, done, obs, episodes = actor_envs.step(actions)
            state["steps"] += len(env_ids)
            now = time.monotonic()
            if now - t_log >= log_interval_s:
                log.info("actor %d: %.0f env steps/s", task,
                         (state["steps"] - steps_at_log) / (now - t_log))
                t_log, steps_at_log = now, state["steps"]
    finally:
        requests.put(_END)
        responses.cancel()
