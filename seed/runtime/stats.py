"""Thread-safe counters that the data path updates and the metrics loop drains."""

from __future__ import annotations

import math
import threading

from typing import NamedTuple

import numpy as np


class Episode(NamedTuple):
    """One finished episode as the metrics loop logs it. ``evaluation``: from an env that acts
    greedily and is never trained on (R2D2's eval envs)."""
    env_id: int
    actor: int
    episode_return: float
    length: int
    evaluation: bool


#: A train metric whose name starts so is logged as its max over the interval, not its mean.
MAX_PREFIX = "max_"


class RunStats:
    #: The totals a checkpoint keeps and a resume restores (:meth:`counters`, :meth:`restore`).
    COUNTERS = ("env_steps", "learner_steps", "env_steps_trained", "episodes_total")

    def __init__(self):
        self._lock = threading.Lock()
        # Totals (survive a resume through the checkpoint).
        self.env_steps = 0
        self.learner_steps = 0
        self.env_steps_trained = 0
        self.episodes_total = 0
        # Per-interval samples, drained by take_interval().
        self._episodes: list[Episode] = []
        # Action latency: an actor's time from having a step's observations to having their
        # actions (both architectures, one sample per actor step and env group).
        self._action_latencies_ms: list[float] = []
        self._pull_ms: list[float] = []
        # One inference call's time where it runs: a batch on the SEED learner, an IMPALA
        # actor's local step (as the actor reports it, one mean per unroll).
        self._learner_inference_ms: list[float] = []
        self._actor_inference_ms: list[float] = []
        # Per metric: its sum and the number of steps that reported it (a diagnostics
        # metric comes from sampled steps only, seed/agents/diagnostics.py); a ``max_*``
        # metric keeps its largest value instead of a sum.
        self._train_sums: dict[str, float] = {}
        self._train_counts: dict[str, int] = {}
        self._train_maxima: dict[str, float] = {}

    def counters(self) -> dict[str, int]:
        """The :data:`COUNTERS` as they stand, read together."""
        with self._lock:
            return {name: getattr(self, name) for name in self.COUNTERS}

    def restore(self, counters: dict) -> None:
        """Set the :data:`COUNTERS` from what :meth:`counters` gave (a resume's checkpoint);
        other keys (the run's wall time) are not the stats' and are left."""
        with self._lock:
            for name in self.COUNTERS:
                setattr(self, name, int(counters[name]))

    def add_env_steps(self, n: int) -> None:
        with self._lock:
            self.env_steps += n

    def add_episode(self, env_id: int, actor: int, episode_return: float, length: int,
                    evaluation: bool = False) -> None:
        with self._lock:
            self._episodes.append(Episode(int(env_id), int(actor), float(episode_return),
                                          int(length), bool(evaluation)))
            self.episodes_total += 1

    def add_action_latencies(self, ms) -> None:
        """Action latencies as actors report them, in ms. Only positive, finite figures count:
        0 means "no step yet", and a negative or infinite one measures nothing."""
        kept = [float(x) for x in ms if 0.0 < x < math.inf]
        with self._lock:
            self._action_latencies_ms.extend(kept)

    def add_parameter_pull(self, ms: float) -> None:
        with self._lock:
            self._pull_ms.append(ms)

    def add_learner_inference_time(self, ms: float) -> None:
        with self._lock:
            self._learner_inference_ms.append(ms)

    def add_actor_inference_time(self, ms: float) -> None:
        with self._lock:
            self._actor_inference_ms.append(ms)

    def add_train_step(self, metrics: dict) -> None:
        with self._lock:
            self.learner_steps += 1
            self.env_steps_trained += int(metrics.get("env_steps_trained", 0))
            for k, v in metrics.items():
                if k.startswith(MAX_PREFIX):
                    self._train_maxima[k] = max(self._train_maxima.get(k, -math.inf), float(v))
                    continue
                self._train_sums[k] = self._train_sums.get(k, 0.0) + float(v)
                self._train_counts[k] = self._train_counts.get(k, 0) + 1

    def take_interval(self) -> dict:
        """Everything sampled since the last call, plus current totals."""
        with self._lock:
            out = {
                **{name: getattr(self, name) for name in self.COUNTERS},
                "episodes": self._episodes,
                "action_latencies_ms": np.asarray(self._action_latencies_ms, np.float64),
                "pull_ms": np.asarray(self._pull_ms, np.float64),
                "learner_inference_ms": np.asarray(self._learner_inference_ms, np.float64),
                "actor_inference_ms": np.asarray(self._actor_inference_ms, np.float64),
                # Each train metric's mean over the interval's steps that reported it, a
                # max_* metric's max ({} if none ran).
                "train": {**{k: v / self._train_counts[k] for k, v in self._train_sums.items()},
                          **self._train_maxima},
            }
            self._episodes, self._action_latencies_ms, self._pull_ms = [], [], []
            self._learner_inference_ms, self._actor_inference_ms = [], []
            self._train_sums, self._train_counts, self._train_maxima = {}, {}, {}
        return out
