"""Run configuration: one dataclass, loaded from an experiment YAML and overridden by flags."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any


@dataclasses.dataclass
class Config:
    # What to run.
    env: str = "toy:catch"
    env_kwargs: dict = dataclasses.field(default_factory=dict)
    arch: str = "seed"  # seed | impala: seed/runtime/architectures.py
    agent: str = "vtrace"  # vtrace | r2d2 | one seed.agents.register_agent added
    network: str = "mlp"  # mlp | nature_cnn | impala_resnet | football | ...
    network_kwargs: dict = dataclasses.field(default_factory=dict)
    benchmark: str = ""  # name of the experiments/ config, if any

    # Scale and budget.
    actors: int = 2
    envs_per_actor: int = 4
    frames: int = 100_000  # env frames (steps x frame skip)
    seconds: float = 0.0  # wall-clock budget; 0 = none
    seed: int = 0

    # Data path.
    unroll_length: int = 20  # T
    batch_size: int = 8  # unrolls per train step
    inference_batch_size: int = 0  # envs per inference batch; 0 = one request per actor stream
    actor_splits: int = 1  # SEED: each actor's envs in this many groups, each with a request
    #                        in flight, so env stepping overlaps inference (double buffering).
    #                        Opt-in: on 2 cores it lost to 1 on Catch and on Pong, where the
    #                        smaller learner batch cost more than the overlap gained
    inference_timeout_ms: float = 2.0
    jit_inference: bool = False  # XLA-compile the policy's forward pass on the inference path
    #                              (SEED learner and IMPALA actors alike); batches padded to
    #                              powers of two so XLA compiles a few shapes, not every size
    queue_capacity: int = 0  # unrolls; 0 = 2 x batch_size
    train: bool = True  # False: serve mode, inference only (throughput of the data path)

    # Optimizer. Loss convention: every loss term is a mean over the T x B steps of a batch
    # (loss_reduction "mean", upstream SEED's), paired with Adam; see seed/agents/vtrace.py.
    loss_reduction: str = "mean"  # mean | sum (V-trace only: the IMPALA paper's code sums)
    optimizer: str = "adam"  # adam | rmsprop
    learning_rate: float = 1e-3
    lr_decay_to_zero: bool = False  # linear decay over the frame budget
    adam_epsilon: float = 1e-8
    adam_beta1: float = 0.9  # upstream SEED's DMLab runs use 0
    rms_epsilon: float = 1e-7
    rms_decay: float = 0.99
    rms_momentum: float = 0.0
    grad_clip_norm: float = 40.0

    # V-trace / actor-critic.
    discounting: float = 0.99
    baseline_cost: float = 0.5
    entropy_cost: float = 0.01
    lambda_: float = 1.0
    max_abs_reward: float = 0.0  # 0 = no clipping

    # R2D2.
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

    # Logging and checkpoints.
    logdir: str = ""
    log_interval_s: float = 5.0
    checkpoint_interval_s: float = 600.0
    progress: bool = True

    # Transport.
    server: str = ""  # address; "" = a fresh unix socket in logdir (local) / 127.0.0.1:0
    launcher: str = "local"  # local | ray
    ray_address: str = ""
    learner_on_gpu_node: bool = False  # with launcher ray: the learner as a Ray actor, 1 GPU
    stream_idle_timeout_s: float = 120.0  # SEED: close a stream that sent nothing this long
    #                                       (0 = never); its actor reconnects on a new run id
    # Who may connect (seed/transport/security.py): paths only, never the token itself.
    auth_token_file: str = ""  # token file; "" = $SEED_AUTH_TOKEN if set, else no token
    tls_cert_file: str = ""  # learner: PEM certificate chain; with tls_key_file, serve TLS
    tls_key_file: str = ""  # learner: PEM private key
    tls_ca_file: str = ""  # actors: PEM roots to verify the learner; "" = tls_cert_file

    @property
    def num_envs(self) -> int:
        return self.actors * self.envs_per_actor

    def effective_queue_capacity(self) -> int:
        return self.queue_capacity or 2 * self.batch_size

    def validate(self) -> None:
        """Fail early, with one clear line, on a config that cannot work under any
        architecture; ``seed.runtime.architectures.validate`` adds the checks of the one
        ``arch`` names (the name itself, the agents it runs, its transport)."""
        from seed.agents import agent_names
        if self.agent not in agent_names():
            raise ConfigError(f"--agent must be {' or '.join(agent_names())}, "
                              f"not {self.agent!r}")
        for name in ("actors", "envs_per_actor", "unroll_length", "batch_size"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.inference_batch_size > self.num_envs:
            raise ConfigError(
                f"inference batch size {self.inference_batch_size} is larger than the "
                f"{self.num_envs} envs ({self.actors} actors x {self.envs_per_actor}): "
                "a batch could never fill")
        if self.inference_batch_size < 0:
            raise ConfigError("inference_batch_size must be >= 0")
        if self.actor_splits < 1:
            raise ConfigError(f"actor_splits must be >= 1, got {self.actor_splits}")
        if not self.stream_idle_timeout_s >= 0:
            raise ConfigError(f"stream_idle_timeout_s must be >= 0 (0: no limit), "
                              f"got {self.stream_idle_timeout_s}")
        if bool(self.tls_cert_file) != bool(self.tls_key_file):
            raise ConfigError("TLS needs both --tls-cert-file and --tls-key-file")
        if not self.replay_ratio >= 0:
            raise ConfigError(f"replay_ratio must be >= 0 (0: no limit), got {self.replay_ratio}")
        if self.agent == "r2d2" and not 1 <= self.replay_min_size <= self.replay_capacity:
            raise ConfigError(f"replay_min_size must be in [1, replay_capacity "
                              f"({self.replay_capacity})], got {self.replay_min_size}")
        if self.eval_envs >= self.num_envs:
            raise ConfigError(f"eval_envs {self.eval_envs} leaves no env to train on")
        self._validate_optimizer()
        if self.frames <= 0 and self.seconds <= 0:
            raise ConfigError("give a budget: --frames or --seconds must be positive")

    def _validate_optimizer(self) -> None:
        if self.optimizer not in ("adam", "rmsprop"):
            raise ConfigError(f"optimizer must be adam or rmsprop, not {self.optimizer!r}")
        if self.loss_reduction not in ("mean", "sum"):
            raise ConfigError(f"loss_reduction must be mean or sum, not {self.loss_reduction!r}")
        if self.loss_reduction == "sum" and self.agent != "vtrace":
            raise ConfigError("loss_reduction sum applies to the vtrace agent only")
        epsilon = "adam_epsilon" if self.optimizer == "adam" else "rms_epsilon"
        for name in ("learning_rate", epsilon):
            value = getattr(self, name)
            if not value > 0:  # also refuses NaN
                raise ConfigError(f"{name} must be positive, got {value}")
        if not 0 <= self.adam_beta1 < 1:
            raise ConfigError(f"adam_beta1 must be in [0, 1), got {self.adam_beta1}")
        if not 0 <= self.rms_decay < 1:
            raise ConfigError(f"rms_decay must be in [0, 1), got {self.rms_decay}")
        if not self.grad_clip_norm >= 0:
            raise ConfigError(f"grad_clip_norm must be >= 0 (0: no clipping), "
                              f"got {self.grad_clip_norm}")

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


class ConfigError(ValueError):
    """A configuration that cannot work."""


FIELDS = {f.name: f for f in dataclasses.fields(Config)}


def file_values(path: str) -> dict[str, Any]:
    """The fields a YAML/JSON experiment file sets (plus ``benchmark``, its stem, by default)."""
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"config file {path} does not exist")
    text = p.read_text()
    if p.suffix == ".json":
        values = json.loads(text)
    else:
        import yaml
        values = yaml.safe_load(text) or {}
        if not isinstance(values, dict):
            raise ConfigError(f"{path}: expected a mapping of config fields")
    values.setdefault("benchmark", p.stem)
    return values


def given_values(path: str | None = None, overrides: dict[str, Any] | None = None
                 ) -> dict[str, Any]:
    """The fields a user gave: a file's, then overrides (None values skipped)."""
    values = file_values(path) if path else {}
    values.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return values


def check_known(values, what: str = "unknown config field(s)") -> None:
    """ConfigError naming every key of ``values`` that is no Config field."""
    unknown = sorted(set(values) - set(FIELDS))
    if unknown:
        raise ConfigError(f"{what}: {', '.join(unknown)}")


def load(path: str | None = None, overrides: dict[str, Any] | None = None) -> Config:
    """Config from defaults, then a YAML/JSON file, then overrides (None values skipped)."""
    values = given_values(path, overrides)
    check_known(values)
    return Config(**values)


def from_saved(values: dict[str, Any]) -> Config:
    """The Config a run saved as a dict (``config.json``'s ``"config"``, an actor's spec).

    The one way back from a saved dict. Every committed run directory holds only fields
    Config still has; a field this version does not know is refused by name, not dropped,
    so that a setting never silently stops applying.
    """
    check_known(values, "saved config has field(s) this version does not know")
    return Config(**values)
