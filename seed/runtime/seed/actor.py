"""The SEED actor: steps its envs and nothing else. It never holds a model.

One long-lived StreamSteps call carries all ``envs_per_actor`` envs per step.
When the learner goes away the actor backs off and reconnects; its envs then
start fresh episodes under a new run id, so the learner drops their
half-built unrolls instead of mixing two runs.
"""

from __future__ import annotations

import logging
import queue
import time
import uuid

from seed.runtime.actor_envs import ActorEnvs
from seed.runtime.actor_process import actor_envs_for, run_actor_loop
from seed.transport import tensor as wire
from seed.transport.proto import pb2

log = logging.getLogger(__name__)

_END = object()


def run_actor(address: str, task: int, max_steps: int = 0, log_interval_s: float = 30.0) -> int:
    """Run actor ``task`` against the learner at ``address`` until stopped."""
    steps = {"n": 0}

    def build(spec):
        return {"envs": actor_envs_for(spec, task)}

    def session(stub, parts):
        _stream(stub, task, parts["envs"], steps, max_steps, log_interval_s)

    return run_actor_loop(address, task, "seed", build, session)


def _stream(stub, task, actor_envs: ActorEnvs, steps, max_steps, log_interval_s):
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
        t_log, steps_at_log = time.monotonic(), steps["n"]
        while not max_steps or steps["n"] < max_steps:
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
            steps["n"] += len(env_ids)
            now = time.monotonic()
            if now - t_log >= log_interval_s:
                log.info("actor %d: %.0f env steps/s", task,
                         (steps["n"] - steps_at_log) / (now - t_log))
                t_log, steps_at_log = now, steps["n"]
    finally:
        requests.put(_END)
        responses.cancel()
