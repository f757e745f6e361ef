"""The run's config: what to run, its scale and budget, logging; its components.

Its fields are the run's own. ``transport`` (:class:`TransportConfig`) says how
actors and learner talk (every run carries all of its fields, the SEED-only ones too:
an IMPALA run leaves them at their defaults and they do not act on it), and
``agent_config`` holds the settings of the run's agent alone (a :class:`VTraceConfig`
in a run of ``vtrace``, :mod:`seed.config.agents`): no other agent's settings are set
on it. Build one from the keys a user writes with :func:`seed.config.make_config`.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Literal

from pydantic import Field

import envs
from seed import networks
from seed.config.agents import AGENT_CONFIGS, AgentConfig, AgentName
from seed.config.errors import ConfigError
from seed.config.fields import (Checked, Count, CountOrZero, Kwargs, NonNegative, OneOf,
                                Positive)
from seed.config.transport import TransportConfig


@dataclasses.dataclass
class Config(Checked):
    # What to run.
    env: str = "toy:catch"
    env_kwargs: Kwargs = dataclasses.field(default_factory=dict)
    arch: Literal["seed", "impala"] = "seed"  # seed/runtime/architectures.py
    agent: AgentName = "vtrace"  # seed.agents.register_agent adds more
    network: Annotated[str, OneOf(networks.REGISTRY)] = "mlp"
    network_kwargs: Kwargs = dataclasses.field(default_factory=dict)
    benchmark: str = ""  # name of the experiments/ config, if any

    # Scale and budget.
    actors: Count = 2
    envs_per_actor: Count = 4
    frames: CountOrZero = 100_000  # env frames (steps x frame skip); 0 = none
    seconds: NonNegative = 0.0  # wall-clock budget; 0 = none
    seed: Annotated[int, Field(ge=0, lt=2**63)] = 0  # TensorFlow's generators take int64

    # What the learner trains on and how it infers.
    unroll_length: Count = 20  # T
    batch_size: Count = 8  # unrolls per train step
    jit_inference: bool = False  # XLA-compile the policy's forward pass on the inference path
    #                              (SEED learner and IMPALA actors alike); batches padded to
    #                              powers of two so XLA compiles a few shapes, not every size
    compute_dtype: networks.ComputeDtype = "float32"  # the networks' torsos;
    #                                                   bfloat16_train: the train step in
    #                                                   bfloat16, inference in float32;
    #                                                   variables, heads and loss stay
    #                                                   float32. On a CPU without bfloat16
    #                                                   a run computes in float32 and saves
    #                                                   that here
    train: bool = True  # False: serve mode, inference only (throughput of the data path)

    # Logging, checkpoints and instrumentation.
    logdir: str = ""
    log_interval_s: Positive = 5.0
    checkpoint_interval_s: Positive = 600.0
    progress: bool = True
    timeline: bool = False  # SEED: the learner and each actor stamp every step and write
    #                         timeline-*.npz into the run dir at the end (`seed timeline DIR`)

    # Where the actors run.
    launcher: Literal["local", "ray", "none"] = "local"
    ray_address: str = ""
    learner_on_gpu_node: bool = False  # with launcher ray: the learner as a Ray actor, 1 GPU

    # The machine.
    cpu_idle_poll: bool = False  # hold a CPU wake-up latency request of 0 us for the run
    #                              (/dev/cpu_dma_latency, root): idle cores poll instead of
    #                              halting, machine-wide; seed/runtime/cpu_idle.py

    # Components.
    transport: TransportConfig = dataclasses.field(default_factory=TransportConfig)
    # The run's agent's settings, of its class in AGENT_CONFIGS; None: that class's defaults.
    agent_config: AgentConfig | None = None

    def __post_init__(self):
        super().__post_init__()
        cls = AGENT_CONFIGS[self.agent]
        if self.agent_config is None:
            self.agent_config = cls()
        elif type(self.agent_config) is not cls:
            raise ConfigError(f"a run of the {self.agent} agent takes a {cls.__name__}, "
                              f"not a {type(self.agent_config).__name__}")

    @property
    def num_envs(self) -> int:
        return self.actors * self.envs_per_actor

    # -- checks and saving ---------------------------------------------------------------

    def validate(self) -> None:
        """Fail early, with one clear line, on a config that cannot work under any
        architecture; ``seed.runtime.architectures.validate`` adds the checks of the one
        ``arch`` names (the agents it runs, its transport). Each field's own type and
        bounds were checked when the config was built (:mod:`seed.config.fields`)."""
        if self.frames == 0 and self.seconds == 0:
            raise ConfigError("give a budget: --frames or --seconds must be positive")
        if self.learner_on_gpu_node and self.launcher != "ray":
            raise ConfigError("learner_on_gpu_node needs --launcher ray")
        self._check_network_reads_env()
        self.transport.validate(self)
        self.agent_config.validate(self)

    def _check_network_reads_env(self) -> None:
        """The network is made for the observations the env gives (``envs.observation_kind``
        against ``seed.networks.OBSERVATIONS``); an unknown env kind is refused here too."""
        observes = envs.observation_kind(self.env, **self.env_kwargs)
        reads = networks.OBSERVATIONS.get(self.network, observes)  # one registered later
        if reads != observes:
            fits = [n for n, kind in networks.OBSERVATIONS.items() if kind == observes]
            raise ConfigError(
                f"network {self.network} reads {reads}, but {self.env} gives {observes} "
                f"({envs.OBSERVATION_KINDS[observes]}): use network {', '.join(fits)}")

    def to_json(self) -> dict:
        """The config as saved in ``config.json``: the run's fields, then ``transport`` and
        the agent's settings as nested mappings, the latter under the agent's name
        (``"vtrace": {...}``), as a user writes them."""
        out = dataclasses.asdict(self)
        out[self.agent] = out.pop("agent_config")
        return out
