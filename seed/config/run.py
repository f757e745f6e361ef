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

from seed.config.agents import AGENT_CONFIGS, AgentConfig, check_agent_name
from seed.config.errors import ConfigError
from seed.config.transport import TransportConfig


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

    # What the learner trains on and how it infers.
    unroll_length: int = 20  # T
    batch_size: int = 8  # unrolls per train step
    jit_inference: bool = False  # XLA-compile the policy's forward pass on the inference path
    #                              (SEED learner and IMPALA actors alike); batches padded to
    #                              powers of two so XLA compiles a few shapes, not every size
    train: bool = True  # False: serve mode, inference only (throughput of the data path)

    # Logging, checkpoints and instrumentation.
    logdir: str = ""
    log_interval_s: float = 5.0
    checkpoint_interval_s: float = 600.0
    progress: bool = True
    timeline: bool = False  # SEED: the learner and each actor stamp every step and write
    #                         timeline-*.npz into the run dir at the end (`seed timeline DIR`)

    # Where the actors run.
    launcher: str = "local"  # local | ray | none
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
        cls = AGENT_CONFIGS.get(self.agent)
        if cls is None:
            return  # validate() names the unknown agent
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
        ``arch`` names (the name itself, the agents it runs, its transport)."""
        check_agent_name(self.agent)
        for name in ("actors", "envs_per_actor", "unroll_length", "batch_size"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.frames <= 0 and self.seconds <= 0:
            raise ConfigError("give a budget: --frames or --seconds must be positive")
        if self.learner_on_gpu_node and self.launcher != "ray":
            raise ConfigError("learner_on_gpu_node needs --launcher ray")
        self.transport.validate(self)
        self.agent_config.validate(self)

    def to_json(self) -> dict:
        """The config as saved in ``config.json``: the run's fields, then ``transport`` and
        the agent's settings as nested mappings, the latter under the agent's name
        (``"vtrace": {...}``), as a user writes them."""
        out = dataclasses.asdict(self)
        out[self.agent] = out.pop("agent_config")
        return out
