"""The SEED learner's gRPC service: central, batched inference over every actor's envs."""

from __future__ import annotations

import logging
import time

import grpc
import numpy as np

from seed.inference.batcher import Batch, BatcherClosed, InferenceBatcher
from seed.inference.env_runs import EnvRuns
from seed.metrics import timeline as timeline_lib
from seed.runtime.learner_core import LearnerCore
from seed.runtime.seed_arch import sizing
from seed.runtime.service import LearnerService
from seed.transport import limits as limits_lib
from seed.transport import tensor as wire
from seed.transport.channel import reject_undecodable
from seed.transport.proto import pb2
from seed.transport.streams import StreamRegistry
from seed.types import EnvOutput
from seed.unroll_spec import UnrollSpec
from seed.unrolls import UnrollBuilder

log = logging.getLogger(__name__)


class ActorStep:
    """One validated StepRequest: a single actor's envs at one step."""

    __slots__ = ("actor_id", "run_id", "env_ids", "reward", "done", "observation",
                 "timeline_index")

    def __init__(self, actor_id, run_id, env_ids, reward, done, observation):
        self.actor_id = actor_id
        self.run_id = run_id
        self.env_ids = env_ids
        self.reward = reward
        self.done = done
        self.observation = observation
        self.timeline_index = -1  # its row in the learner's timeline (-1: none recorded)


class SeedLearnerService(LearnerService):
    def __init__(self, core: LearnerCore):
        self.core = core
        config = core.config
        self.num_envs = config.num_envs
        obs = core.env_spec.observation_space
        self._obs_dtype = np.dtype(obs.dtype).name
        self._obs_shape = tuple(obs.shape)
        self.runs = EnvRuns(self.num_envs)
        self.builder = UnrollBuilder(UnrollSpec.of(core.agent, obs), self.num_envs,
                                     core.agent.unroll_overlap)
        self._is_eval_env = core.agent.is_eval_env
        self.batcher = InferenceBatcher(self._serve_batch, sizing.inference_batch_size(config),
                                        config.transport.inference_timeout_ms / 1000.0)
        self.limits = self._message_limits()
        self.spec = core.spec_message(self.limits)
        self.streams = StreamRegistry(sizing.max_streams(config),
                                      config.transport.stream_idle_timeout_s,
                                      what="StreamSteps stream")
        # Stamps go to a recorder always there: timeline_lib.OFF unless config.timeline
        self.timeline = self._new_timeline(config) if config.timeline else timeline_lib.OFF

    def _new_timeline(self, config) -> timeline_lib.LearnerTimeline:
        splits = sizing.actor_splits(config)
        return timeline_lib.LearnerTimeline(
            {"actors": config.actors, "envs_per_actor": config.envs_per_actor,
             "actor_splits": splits,
             "inference_batch_size": sizing.inference_batch_size(config),
             "lockstep": sizing.serve_runs_in_lockstep(config), "train": config.train,
             "frames_per_step": self.core.env_spec.frames_per_step},
            requests_per_batch=config.actors * splits)

    def _message_limits(self) -> limits_lib.MessageLimits:
        """A StepRequest carries at most one actor's envs; replies are actions and the spec."""
        k = self.core.config.envs_per_actor
        return limits_lib.learner_limits(
            {"StreamSteps": limits_lib.step_request_bytes(k, self._obs_dtype, self._obs_shape)},
            [limits_lib.step_response_bytes(k),
             limits_lib.spec_bytes(self.core.spec_message())])

    # -- gRPC ------------------------------------------------------------------
    def SendUnroll(self, request, context):
        context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                      "this learner runs the SEED architecture: use StreamSteps")

    def GetParameters(self, request, context):
        context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                      "this learner runs the SEED architecture: parameters never leave it")

    def StreamSteps(self, request_iterator, context):
        slot = self.streams.admit(context)
        if slot is None:
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                          f"the learner already serves {self.streams.max_streams} streams, "
                          "every one of them live; retry later")
        try:
            yield from self._serve_stream(slot, request_iterator, context)
        except grpc.RpcError:
            return  # cancelled: superseded, idle, or the peer went away

    def _serve_stream(self, slot, request_iterator, context):
        stats, tl = self.core.stats, self.timeline
        for request in self.streams.requests(slot, request_iterator):
            t_in = tl.now()
            reject_undecodable(request, context)
            try:
                step = self._decode(request)
            except wire.WireError as e:
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
            step.timeline_index = tl.request(step.actor_id, step.env_ids[0], t_in)
            if slot.keys is None:
                self.streams.claim(slot, step.env_ids.tolist())
            # 0 on a stream's first request: no step before it
            stats.add_action_latencies((request.last_action_latency_ms,))
            for ep in request.episodes:
                stats.add_episode(ep.env_id, request.actor_id, ep.episode_return,
                                  ep.episode_length, self._is_eval_env(ep.env_id))
            tl.mark(step.timeline_index, "submitted")
            try:
                actions = self.batcher(step, len(step.env_ids))
            except BatcherClosed:
                context.abort(grpc.StatusCode.UNAVAILABLE, "the learner is shutting down")
            tl.mark(step.timeline_index, "woken")
            response = pb2.StepResponse(action=wire.encode(actions))
            tl.mark(step.timeline_index, "yielded")
            yield response

    def _decode(self, request) -> ActorStep:
        env_ids = np.asarray(request.env_ids, np.int64)
        k = len(env_ids)
        if k == 0:
            raise wire.WireError("a StepRequest needs at least one env id")
        if k > self.batcher.max_batch_size:
            raise wire.WireError(f"{k} envs in one request exceed the inference batch size "
                                 f"{self.batcher.max_batch_size}")
        if env_ids.min() < 0 or env_ids.max() >= self.num_envs:
            raise wire.WireError(f"env id out of range [0, {self.num_envs}): {env_ids.tolist()}")
        if len(np.unique(env_ids)) != k:
            raise wire.WireError(f"duplicate env ids in one request: {env_ids.tolist()}")
        if not request.run_id:
            raise wire.WireError("run_id must be set")
        reward = wire.decode(request.reward, dtype="float32", shape=(k,), name="reward")
        done = wire.decode(request.done, dtype="bool", shape=(k,), name="done")
        obs = wire.decode(request.observation, dtype=self._obs_dtype,
                          shape=(k,) + self._obs_shape, name="observation")
        return ActorStep(request.actor_id, request.run_id, env_ids, reward, done, obs)

    # -- inference thread --------------------------------------------------------
    def _serve_batch(self, batch: Batch) -> None:
        """Infer one batch of actor steps, answer the actors, then extend the unrolls."""
        steps: list[ActorStep] = batch.requests
        agent, tl = self.core.agent, self.timeline
        stamps = tl.open_batch()  # the batcher released the batch to this thread
        fresh = [self.runs.begin(s.env_ids, s.run_id) for s in steps]
        fresh = np.concatenate(fresh) if len(fresh) > 1 else fresh[0]
        if len(fresh):  # a new run: its envs start from the initial state, no half unroll
            agent.reset_core_state(fresh)
            for env_id in fresh.tolist():
                self.builder.reset(env_id)
        env_ids, env_output = _concatenate(steps)
        prev_action = self.runs.prev_action[env_ids]
        # The core state before this step, of the envs an unroll can start at.
        first = self.builder.rows_wanting_state(env_ids, skip=self._is_eval_env)
        first_state = agent.read_core_state(env_ids[first]) if first.any() else ()
        t0 = time.perf_counter()
        action, agent_output = agent.infer(env_ids, prev_action, env_output)
        t1 = time.perf_counter()
        self.core.stats.add_learner_inference_time((t1 - t0) * 1000.0)
        tl.mark_batch(stamps, "infer_start", t0)
        tl.mark_batch(stamps, "infer_end", t1)
        action = np.asarray(action, np.int32)
        self.runs.prev_action[env_ids] = action

        bounds = np.cumsum([len(s.env_ids) for s in steps])[:-1]
        replies = np.split(action, bounds)  # each actor its own envs' actions
        tl.mark_batch(stamps, "reply_start")
        batch.reply(replies)
        tl.mark_batch(stamps, "replied")

        try:  # the actors have their actions: count the steps, extend the unrolls
            self.core.stats.add_env_steps(len(env_ids))
            for _, unroll in self.builder.append_batch(env_ids, first_state, prev_action,
                                                       env_output, agent_output, action,
                                                       skip=self._is_eval_env):
                self.core.enqueue(unroll)
        except BaseException as e:
            self.core.fail("unroll assembly", e)
            raise
        tl.close_batch(stamps, (s.timeline_index for s in steps), len(env_ids))

    def take_batch_stats(self) -> float | None:
        """Mean envs per inference batch since the last call."""
        batches, rows = self.batcher.take_stats()
        return rows / batches if batches else None

    def close(self) -> None:
        """Stop serving; then write the timeline, if one was recorded, into the run dir."""
        self.streams.close()
        self.batcher.close()
        self.timeline.write_into(self.core.config.logdir)


def _concatenate(steps: list[ActorStep]) -> tuple[np.ndarray, EnvOutput]:
    """The env ids and env outputs of a batch's requests, one row per env, in request order."""
    if len(steps) == 1:
        s = steps[0]
        return s.env_ids, EnvOutput(s.reward, s.done, s.observation)
    return np.concatenate([s.env_ids for s in steps]), EnvOutput(
        reward=np.concatenate([s.reward for s in steps]),
        done=np.concatenate([s.done for s in steps]),
        observation=np.concatenate([s.observation for s in steps]))
