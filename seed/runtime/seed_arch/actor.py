"""The SEED actor: steps its envs and nothing else. It never holds a model.

The actor's envs are split into ``actor_splits`` groups (one by default, as
upstream SEED), each with its own long-lived StreamSteps call. With two, while
the learner infers actions for one group the actor steps the other (Sample
Factory's double-buffered sampling), so env simulation overlaps central
inference instead of taking turns with it. One group = one request per step,
carrying all of its envs.

Each request reports the group's *action latency* of its previous step: from the moment the
actor had the observations (the env step returned) to the moment it had their actions and
began stepping with them. That is the span the IMPALA actor reports too (there: local
inference and what else it does before stepping), so the two architectures' figures compare.

When the learner goes away the actor backs off and reconnects; its envs then
start fresh episodes under a new run id, so the learner drops their
half-built unrolls instead of mixing two runs.
"""

from __future__ import annotations

import logging
import queue
import time
import uuid

import numpy as np

from seed.metrics import timeline as timeline_lib
from seed.runtime.actor_envs import ActorEnvs
from seed.runtime.actor_process import actor_envs_for, run_actor_loop, spec_config
from seed.runtime.seed_arch import sizing
from seed.transport import tensor as wire
from seed.transport.proto import pb2

log = logging.getLogger(__name__)

_END = object()


def run_actor(address: str, task: int, max_steps: int = 0, log_interval_s: float = 30.0,
              security=None) -> int:
    """Run actor ``task`` against the learner at ``address`` until stopped.

    ``security``: a ClientSecurity (auth token, TLS CA) or None."""
    steps = {"n": 0}
    # The recorder this actor stamps into (an ActorTimeline with config.timeline, else OFF),
    # and the run dir to write it to.
    recorded = {"timeline": timeline_lib.OFF, "logdir": ""}

    def build(spec):
        config = spec_config(spec)
        splits = sizing.actor_splits(config)
        if config.timeline:
            recorded.update(logdir=config.logdir, timeline=timeline_lib.ActorTimeline(
                task, {"actor_splits": splits, "envs_per_actor": config.envs_per_actor},
                max_steps=timeline_lib.MAX_BATCHES * splits))
        return {"envs": actor_envs_for(spec, task), "splits": splits}

    def session(stub, parts):
        try:
            _stream(stub, task, parts["envs"], parts["splits"], steps, max_steps,
                    log_interval_s, recorded["timeline"])
        finally:  # the stream ended (the learner stopped first): a later kill loses nothing
            recorded["timeline"].write_into(recorded["logdir"])

    return run_actor_loop(address, task, "seed", build, session, security)


class _GroupStream:
    """One env group's StreamSteps call: put a request, take its reply, in order.

    ``rtt_ms``: the last request's round trip, sent to reply received (what
    seed/bench/data_path.py measures); ``observed_at`` / ``action_latency_ms``: when the
    actor had the group's current observations, and the previous step's action latency."""

    def __init__(self, stub, indices, env_ids):
        self.indices = indices
        self.env_ids = env_ids
        self.rtt_ms = 0.0
        self.observed_at = 0.0
        self.action_latency_ms = 0.0
        self._sent_at = 0.0
        self._requests: queue.Queue = queue.Queue(maxsize=2)
        self._responses = stub.StreamSteps(self._request_iter())

    def _request_iter(self):
        while True:
            item = self._requests.get()
            if item is _END:
                return
            yield item

    def send(self, request) -> None:
        self._sent_at = time.perf_counter()
        self._requests.put(request)

    def receive_actions(self) -> np.ndarray:
        response = next(self._responses)
        self.rtt_ms = (time.perf_counter() - self._sent_at) * 1000.0
        return wire.decode(response.action, dtype="int32", shape=(len(self.env_ids),),
                           name="action")

    def close(self) -> None:
        self._requests.put(_END)
        self._responses.cancel()


def _stream(stub, task, actor_envs: ActorEnvs, splits: int, steps, max_steps, log_interval_s,
            timeline=timeline_lib.OFF):
    run_id = uuid.uuid4().hex
    groups = []
    try:
        # Envs first, then the streams: a stream that waits on a slow reset looks idle.
        reward, done, obs = actor_envs.reset_all()
        observed_at = time.perf_counter()
        for indices in np.array_split(np.arange(len(actor_envs)), splits):
            indices = indices.tolist()
            groups.append(_GroupStream(stub, indices,
                                       [actor_envs.env_ids[i] for i in indices]))
            groups[-1].observed_at = observed_at

        def request(group, reward, done, obs, episodes):
            return pb2.StepRequest(
                actor_id=task, run_id=run_id, env_ids=group.env_ids,
                reward=wire.encode(reward), done=wire.encode(done),
                observation=wire.encode(obs), last_action_latency_ms=group.action_latency_ms,
                episodes=[pb2.EpisodeSummary(env_id=e, episode_return=r, episode_length=n)
                          for e, r, n in episodes])

        for group in groups:  # every group's first request goes out at once
            group.send(request(group, reward[group.indices], done[group.indices],
                               obs[group.indices], []))
            timeline.step(group.env_ids[0], np.nan, np.nan)
        t_log, steps_at_log = time.monotonic(), steps["n"]
        while not max_steps or steps["n"] < max_steps:
            for group in groups:  # step one group while the others wait on the learner
                actions = group.receive_actions()
                received = time.perf_counter()
                group.action_latency_ms = (received - group.observed_at) * 1000.0
                reward, done, obs, episodes = actor_envs.step(actions, group.indices)
                group.observed_at = time.perf_counter()
                group.send(request(group, reward, done, obs, episodes))
                timeline.step(group.env_ids[0], received, group.observed_at)
                steps["n"] += len(group.indices)
            now = time.monotonic()
            if now - t_log >= log_interval_s:
                log.info("actor %d: %.0f env steps/s", task,
                         (steps["n"] - steps_at_log) / (now - t_log))
                t_log, steps_at_log = now, steps["n"]
    finally:
        for group in groups:
            group.close()
