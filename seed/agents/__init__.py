"""Agents: losses and learner steps, independent of the runtime architecture.

``make_agent(config, observation_space, action_space)`` builds the agent named
by ``config.agent``: an :class:`seed.agents.base.Agent`. The names are the
built-in ``vtrace`` and ``r2d2`` and any that :func:`register_agent` added in
this process (an agent kept out of the package, e.g. a test's toy agent, which
a run with its learner in that process can then name). Each name has its config
class in :data:`seed.config.agents.AGENT_CONFIGS`: ``config.agent_config``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from seed.agents.base import Agent


def _vtrace(config, observation_space, action_space):
    from seed.agents.vtrace_agent import VTraceAgent
    return VTraceAgent(config, observation_space, action_space)


def _r2d2(config, observation_space, action_space):
    from seed.agents.r2d2_agent import R2D2Agent
    return R2D2Agent(config, observation_space, action_space)


_BUILT_IN = {"vtrace": _vtrace, "r2d2": _r2d2}
_registered: dict[str, Callable] = {}


def agent_names() -> list[str]:
    """Every name ``config.agent`` may take: the built-in ones, then the registered."""
    return [*_BUILT_IN, *_registered]


def register_agent(name: str, factory: Callable, config_class: type) -> None:
    """Let ``config.agent = name`` build ``factory(config, observation_space, action_space)``
    (an agent class, say) in this process, its settings a ``config_class`` (a dataclass
    deriving :class:`seed.config.agents.OptimizerSettings`) under the key ``name``; a name
    already taken, or one a config key uses, is refused."""
    from seed.config.agents import AGENT_CONFIGS
    from seed.config.keys import RUN_FIELDS
    if name in agent_names() or name in AGENT_CONFIGS:
        raise ValueError(f"an agent named {name!r} exists already")
    if name in RUN_FIELDS or name in ("transport", "agent_config"):
        raise ValueError(f"{name!r} is a config key; name the agent otherwise")
    _registered[name] = factory
    AGENT_CONFIGS[name] = config_class


def unregister_agent(name: str) -> None:
    """Forget an agent :func:`register_agent` added (a test's, at its end)."""
    from seed.config.agents import AGENT_CONFIGS
    if name not in _registered:
        raise ValueError(f"no registered agent named {name!r}")
    del _registered[name]
    del AGENT_CONFIGS[name]


def make_agent(config, observation_space, action_space) -> Agent:
    factory = _BUILT_IN.get(config.agent) or _registered.get(config.agent)
    if factory is None:
        raise ValueError(f"unknown agent {config.agent!r}: choose "
                         f"{' or '.join(agent_names())}")
    return factory(config, observation_space, action_space)
