"""One config per agent: its optimizer settings, its loss and its buffer.

Each is the ``agent_config`` component of a run of its agent (a run holds no other
agent's settings). Each field declares its type and bounds (:mod:`seed.config.fields`);
``validate(run)`` checks the rules between fields, ``run`` giving the run's shape where a
rule needs it.

:data:`AGENTS` is the one registry of agents: per name, an :class:`AgentEntry` holding its
config class and how its agent is built (the built-in ones here, and any that
:func:`seed.agents.register_agent` adds); :data:`AGENT_CONFIGS` reads the config classes
from it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from typing import Annotated, Literal

from seed.config.errors import ConfigError
from seed.config.fields import (BelowOne, Checked, Count, CountOrZero, NonNegative, OneOf,
                                Positive, UnitInterval, refusal)


@dataclasses.dataclass
class OptimizerSettings(Checked):
    """What every agent's optimizer takes (:func:`seed.agents.optimizers.make_optimizer`).

    Loss convention: every loss term is a mean over the T x B steps of a batch, paired
    with Adam (upstream SEED's); see seed/agents/vtrace.py.
    """

    optimizer: Literal["adam", "rmsprop"] = "adam"
    learning_rate: NonNegative = 1e-3  # 0: a learner that never moves its weights (the
    #                                    recurrent path's check, tests/e2e/test_recurrent_path.py)
    lr_decay_to_zero: bool = False  # linear decay over the frame budget
    adam_epsilon: Positive = 1e-8
    adam_beta1: BelowOne = 0.9  # upstream SEED's DMLab runs use 0
    rms_epsilon: Positive = 1e-7
    rms_decay: BelowOne = 0.99
    rms_momentum: BelowOne = 0.0
    grad_clip_norm: NonNegative = 40.0  # 0 = no clipping

    @classmethod
    def key(cls, name: str) -> str:
        """``agent.name`` under the name the class is registered as (``vtrace.discounting``)."""
        agent = next((e.name for e in AGENTS.values() if e.config_class is cls), None)
        return f"{agent}.{name}" if agent else name

    def validate(self, run) -> None:
        """The rules between this agent's fields and the run's (each field's own bounds are
        checked when it is built)."""
        del run


@dataclasses.dataclass
class AgentConfig(OptimizerSettings):
    """An agent's settings, ``config.agent_config`` in a run of it: its optimizer's (every
    agent has one, :class:`OptimizerSettings`), then its loss's and its buffer's (a
    subclass's fields). Every agent's config class derives it."""


@dataclasses.dataclass
class VTraceConfig(AgentConfig):
    """The V-trace actor-critic agent (seed/agents/vtrace_agent.py)."""

    discounting: UnitInterval = 0.99
    baseline_cost: NonNegative = 0.5
    entropy_cost: NonNegative = 0.01
    lambda_: UnitInterval = 1.0
    max_abs_reward: NonNegative = 0.0  # 0 = no clipping
    loss_reduction: Literal["mean", "sum"] = "mean"  # the IMPALA paper's code sums
    queue_capacity: CountOrZero = 0  # unrolls the FIFO holds; 0 = 2 x batch_size

    def effective_queue_capacity(self, batch_size: int) -> int:
        return self.queue_capacity or 2 * batch_size

    def validate(self, run) -> None:
        super().validate(run)
        if self.effective_queue_capacity(run.batch_size) < run.batch_size:
            raise ConfigError(
                f"queue_capacity {self.queue_capacity} is smaller than batch_size "
                f"{run.batch_size}: a train step takes its batch from the queue at once "
                "(0: 2 x batch_size)")


@dataclasses.dataclass
class R2D2Config(AgentConfig):
    """The R2D2 agent (seed/agents/r2d2_agent.py): prioritized replay of sequences."""

    discounting: UnitInterval = 0.99
    replay_capacity: Count = 10_000  # unrolls (sequences)
    replay_min_size: Count = 100  # sequences before training starts
    replay_ratio: NonNegative = 0.0  # sequences trained per inserted, held both ways;
    #                                  0 = no limit
    burn_in: CountOrZero = 0
    n_steps: Count = 5
    target_update_period: Count = 100  # learner steps
    priority_exponent: UnitInterval = 0.9
    importance_sampling_exponent: UnitInterval = 0.6
    priority_eta: UnitInterval = 0.9  # priority = eta * max|td| + (1 - eta) * mean|td|
    epsilon_base: UnitInterval = 0.4  # Ape-X per-env epsilon: base ** (1 + alpha * i / (N - 1))
    epsilon_alpha: NonNegative = 7.0
    eval_epsilon: UnitInterval = 0.01
    eval_envs: CountOrZero = 0  # envs (taken from the last ones) that only evaluate
    value_rescale_eps: NonNegative = 1e-3  # h(x) = sign(x)(sqrt(|x| + 1) - 1) + eps x

    def validate(self, run) -> None:
        super().validate(run)
        if self.burn_in >= run.unroll_length:
            raise ConfigError(
                f"burn_in ({self.burn_in}) must be in [0, unroll_length "
                f"({run.unroll_length})): an unroll of {run.unroll_length + 1} steps "
                "needs at least one step to learn on after the burn-in")
        if self.replay_min_size > self.replay_capacity:
            raise ConfigError(f"replay_min_size must be in [1, replay_capacity "
                              f"({self.replay_capacity})], got {self.replay_min_size}")
        if self.eval_envs >= run.num_envs:
            raise ConfigError(f"eval_envs {self.eval_envs} must be in [0, {run.num_envs}): "
                              "at least one env must train")


@dataclasses.dataclass(frozen=True)
class AgentEntry:
    """One agent a run may name (``config.agent``): the class of its settings
    (``config.agent_config`` in a run of it) and what builds it, ``factory(config,
    observation_space, action_space)``: the callable itself, or ``"module:name"`` for one
    imported when an agent is first built (the built-in agents' modules import TensorFlow,
    which reading a config must not)."""

    name: str
    config_class: type[AgentConfig]
    factory: Callable | str
    built_in: bool = False


#: Agent name -> its entry: the built-in agents, then the registered ones.
AGENTS: dict[str, AgentEntry] = {e.name: e for e in (
    AgentEntry("vtrace", VTraceConfig, "seed.agents.vtrace_agent:VTraceAgent", built_in=True),
    AgentEntry("r2d2", R2D2Config, "seed.agents.r2d2_agent:R2D2Agent", built_in=True),
)}


class _ConfigClasses(Mapping):
    """Agent name -> its config class, read from :data:`AGENTS` (never kept apart)."""

    def __getitem__(self, name: str) -> type[AgentConfig]:
        return AGENTS[name].config_class

    def __iter__(self) -> Iterator[str]:
        return iter(AGENTS)

    def __len__(self) -> int:
        return len(AGENTS)


#: Agent name -> its config class, which ``config.agent_config`` is in a run of that agent.
AGENT_CONFIGS: Mapping[str, type[AgentConfig]] = _ConfigClasses()


#: What ``Config.agent`` takes: a name in AGENT_CONFIGS, as it is when checked.
AgentName = Annotated[str, OneOf(AGENT_CONFIGS)]


def check_agent_name(agent) -> None:
    """Refuse, in one line, an agent name no config class is known for (before the keys of a
    run of it can be read)."""
    if not (isinstance(agent, str) and agent in AGENT_CONFIGS):
        raise ConfigError(refusal("agent", agent, AgentName))
