"""One config per agent: its optimizer settings, its loss and its buffer.

Each is the ``agent_config`` component of a run of its agent (a run holds no other
agent's settings) and checks its own fields in ``validate(run)``; ``run`` gives
the run's shape where a rule needs it. :data:`AGENT_CONFIGS` maps every agent name
to its config class: the built-in ones here, and any that
:func:`seed.agents.register_agent` adds.
"""

from __future__ import annotations

import dataclasses

from seed.config.errors import ConfigError


@dataclasses.dataclass
class OptimizerSettings:
    """What every agent's optimizer takes (:func:`seed.agents.optimizers.make_optimizer`).

    Loss convention: every loss term is a mean over the T x B steps of a batch, paired
    with Adam (upstream SEED's); see seed/agents/vtrace.py.
    """

    optimizer: str = "adam"  # adam | rmsprop
    learning_rate: float = 1e-3
    lr_decay_to_zero: bool = False  # linear decay over the frame budget
    adam_epsilon: float = 1e-8
    adam_beta1: float = 0.9  # upstream SEED's DMLab runs use 0
    rms_epsilon: float = 1e-7
    rms_decay: float = 0.99
    rms_momentum: float = 0.0
    grad_clip_norm: float = 40.0

    def validate(self, run) -> None:
        del run
        if self.optimizer not in ("adam", "rmsprop"):
            raise ConfigError(f"optimizer must be adam or rmsprop, not {self.optimizer!r}")
        epsilon = "adam_epsilon" if self.optimizer == "adam" else "rms_epsilon"
        if not getattr(self, epsilon) > 0:  # also refuses NaN
            raise ConfigError(f"{epsilon} must be positive, got {getattr(self, epsilon)}")
        # 0 is allowed: a learner that never moves its weights (the recurrent path's check,
        # tests/e2e/test_recurrent_path.py, holds the learner's policy to the actors' so).
        if not self.learning_rate >= 0:
            raise ConfigError(f"learning_rate must be >= 0, got {self.learning_rate}")
        if not 0 <= self.adam_beta1 < 1:
            raise ConfigError(f"adam_beta1 must be in [0, 1), got {self.adam_beta1}")
        if not 0 <= self.rms_decay < 1:
            raise ConfigError(f"rms_decay must be in [0, 1), got {self.rms_decay}")
        if not self.grad_clip_norm >= 0:
            raise ConfigError(f"grad_clip_norm must be >= 0 (0: no clipping), "
                              f"got {self.grad_clip_norm}")


@dataclasses.dataclass
class VTraceConfig(OptimizerSettings):
    """The V-trace actor-critic agent (seed/agents/vtrace_agent.py)."""

    discounting: float = 0.99
    baseline_cost: float = 0.5
    entropy_cost: float = 0.01
    lambda_: float = 1.0
    max_abs_reward: float = 0.0  # 0 = no clipping
    loss_reduction: str = "mean"  # mean | sum (the IMPALA paper's code sums)
    queue_capacity: int = 0  # unrolls the FIFO holds; 0 = 2 x batch_size

    def effective_queue_capacity(self, batch_size: int) -> int:
        return self.queue_capacity or 2 * batch_size

    def validate(self, run) -> None:
        super().validate(run)
        if self.loss_reduction not in ("mean", "sum"):
            raise ConfigError(f"loss_reduction must be mean or sum, not {self.loss_reduction!r}")
        if self.queue_capacity < 0:
            raise ConfigError(f"queue_capacity must be >= 0 (0: 2 x batch_size), "
                              f"got {self.queue_capacity}")


@dataclasses.dataclass
class R2D2Config(OptimizerSettings):
    """The R2D2 agent (seed/agents/r2d2_agent.py): prioritized replay of sequences."""

    discounting: float = 0.99
    replay_capacity: int = 10_000  # unrolls (sequences)
    replay_min_size: int = 100  # sequences before training starts
    replay_ratio: float = 0.0  # sequences trained per inserted, held both ways; 0 = no limit
    burn_in: int = 0
    n_steps: int = 5
    target_update_period: int = 100  # learner steps
    priority_exponent: float = 0.9
    importance_sampling_exponent: float = 0.6
    priority_eta: float = 0.9  # priority = eta * max|td| + (1 - eta) * mean|td|
    epsilon_base: float = 0.4  # Ape-X per-env epsilon: base ** (1 + alpha * i / (N - 1))
    epsilon_alpha: float = 7.0
    eval_epsilon: float = 0.01
    eval_envs: int = 0  # envs (taken from the last ones) that only evaluate
    value_rescale_eps: float = 1e-3

    def validate(self, run) -> None:
        super().validate(run)
        if not 0 <= self.burn_in < run.unroll_length:
            raise ConfigError(
                f"burn_in ({self.burn_in}) must be in [0, unroll_length "
                f"({run.unroll_length})): an unroll of {run.unroll_length + 1} steps "
                "needs at least one step to learn on after the burn-in")
        if self.n_steps < 1:
            raise ConfigError(f"n_steps must be >= 1, got {self.n_steps}")
        if self.target_update_period < 1:
            raise ConfigError(f"target_update_period must be >= 1, "
                              f"got {self.target_update_period}")
        if not self.replay_ratio >= 0:
            raise ConfigError(f"replay_ratio must be >= 0 (0: no limit), got {self.replay_ratio}")
        if not 1 <= self.replay_min_size <= self.replay_capacity:
            raise ConfigError(f"replay_min_size must be in [1, replay_capacity "
                              f"({self.replay_capacity})], got {self.replay_min_size}")
        if not 0 <= self.eval_envs < run.num_envs:
            raise ConfigError(f"eval_envs {self.eval_envs} must be in [0, {run.num_envs}): "
                              "at least one env must train")


#: Agent name -> its config class, which ``config.agent_config`` is in a run of that agent.
AGENT_CONFIGS: dict[str, type] = {"vtrace": VTraceConfig, "r2d2": R2D2Config}


def check_agent_name(agent) -> None:
    """Refuse, in one line, an agent name no config class is known for."""
    if agent not in AGENT_CONFIGS:
        raise ConfigError(f"--agent must be {' or '.join(AGENT_CONFIGS)}, not {agent!r}")
