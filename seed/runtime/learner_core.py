"""What both learners share: the agent, its buffer, the training thread, the spec.

SEED feeds the buffer from central inference; IMPALA from unrolls that actors
send. Training is the same: a thread that calls ``agent.train_step(buffer)``
on the very variables inference reads (SEED) or actors pull (IMPALA).
"""

from __future__ import annotations

import json
import logging
import threading

import numpy as np

from seed.buffers.unroll_queue import QueueClosed
from seed.runtime.stats import RunStats
from seed.transport.limits import MessageLimits
from seed.transport.proto import pb2

log = logging.getLogger(__name__)


class EnvSpec:
    """Spaces and frame count of the run's env, read once from a local instance."""

    def __init__(self, observation_space, action_space, frames_per_step: int):
        self.observation_space = observation_space
        self.action_space = action_space
        self.frames_per_step = int(frames_per_step)

    @classmethod
    def probe(cls, env_name: str, env_kwargs: dict) -> "EnvSpec":
        import envs
        env = envs.make(env_name, **env_kwargs)
        try:
            return cls(env.observation_space, env.action_space, env.frames_per_step)
        finally:
            env.close()


class LearnerCore:
    """The run's agent, its buffer, the training thread and the counters, for either
    architecture's learner service (:mod:`seed.runtime.service`) to serve from.

    A service reads the core (``config``, ``env_spec``, ``agent``, ``stats``), hands it
    complete unrolls (:meth:`enqueue`) and its failures (:meth:`fail`), builds its spec
    with its message limits (:meth:`spec_message`), and changes the core only through
    :meth:`after_each_train_step`.
    """

    def __init__(self, config, env_spec: EnvSpec, agent=None):
        from seed.agents import make_agent

        self.config = config
        self.env_spec = env_spec
        self.agent = agent or make_agent(config, env_spec.observation_space,
                                         env_spec.action_space)
        self.buffer = self.agent.new_buffer()
        self.stats = RunStats()
        self._stop = threading.Event()
        self._train_thread: threading.Thread | None = None
        self.error: BaseException | None = None  # a learner thread's failure; ends the run
        self._train_step_hooks: list = []  # called with each train step's metrics

    # -- spec --------------------------------------------------------------
    def spec_message(self, limits: MessageLimits | None = None) -> "pb2.Spec":
        """The Spec an actor fetches: the run's config, env and, when given, the learner's
        message ``limits`` (0 without: a channel of gRPC's default sizes)."""
        c = self.config
        obs = self.env_spec.observation_space
        return pb2.Spec(
            arch=c.arch, env=c.env, env_kwargs_json=json.dumps(c.env_kwargs),
            observation=pb2.TensorSpec(dtype=np.dtype(obs.dtype).name, shape=list(obs.shape)),
            num_actions=int(self.env_spec.action_space.n),
            envs_per_actor=c.envs_per_actor, num_actors=c.actors,
            config_json=json.dumps(c.to_json()),
            frames_per_step=self.env_spec.frames_per_step,
            max_request_bytes=limits.max_request if limits else 0,
            max_response_bytes=limits.response if limits else 0,
        )

    # -- buffer ------------------------------------------------------------
    def enqueue(self, unroll) -> bool:
        """Hand a complete unroll to training; blocks while the queue is full.

        Returns False when the run is stopping (the unroll is dropped).
        """
        if not self.config.train:
            return True  # serve mode: the data path alone, unrolls are not trained on
        while not self._stop.is_set():
            try:
                if self.buffer.put(unroll, timeout=0.5):
                    return True
            except QueueClosed:
                return False
        return False

    # -- training ------------------------------------------------------------
    def after_each_train_step(self, hook) -> None:
        """Call ``hook(metrics)`` on the training thread after every train step, before the
        next one starts (the IMPALA service snapshots the parameters there, so a pull never
        sees half an update). Add hooks before :meth:`start_training`."""
        self._train_step_hooks.append(hook)

    def start_training(self) -> None:
        if not self.config.train:
            return
        self._train_thread = threading.Thread(target=self._train_loop, name="train", daemon=True)
        self._train_thread.start()

    def _train_loop(self) -> None:
        try:
            while not self._stop.is_set():
                metrics = self.agent.train_step(self.buffer)
                if metrics is None:
                    break
                self.stats.add_train_step(metrics)
                for hook in self._train_step_hooks:
                    hook(metrics)
        except BaseException as e:
            self.fail("training", e)

    def fail(self, what: str, error: BaseException) -> None:
        """A learner thread failed: keep the error; the run loop stops the run with it."""
        log.error("%s failed", what, exc_info=error)
        if self.error is None:
            self.error = RuntimeError(f"{what} failed: {error!r}")
            self.error.__cause__ = error

    def stop(self) -> None:
        self._stop.set()
        self.buffer.close()
        if self._train_thread is not None:
            self._train_thread.join(timeout=30)
