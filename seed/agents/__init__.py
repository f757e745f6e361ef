"""Agents: losses and learner steps, independent of the runtime architecture.

``make_agent(config, observation_space, action_space)`` builds the agent named
by ``config.agent``: an :class:`seed.agents.base.Agent`. The names are the
built-in ``vtrace`` and ``r2d2`` and any that :func:`register_agent` added in
this process (an agent kept out of the package, e.g. a test's toy agent, which
a run with its learner in that process can then name).
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


def register_agent(name: str, factory: Callable) -> None:
    """Let ``config.agent = name`` build ``factory(config, observation_space, action_space)``
    (an agent class, say) in this process; a name already taken is refused."""
    if name in agent_names():
        raise ValueError(f"an agent named {name!r} exists already")
    _registered[name] = factory


def unregister_agent(name: str) -> None:
    """Forget an agent :func:`register_agent` added (a test's, at its end)."""
    if name not in _registered:
        raise ValueError(f"no registered agent named {name!r}")
    del _registered[name]


def make_agent(config, observation_space, action_space) -> Agent:
    factory = _BUILT_IN.get(config.agent) or _registered.get(config.agent)
    if factory is None:
        raise ValueError(f"unknown agent {config.agent!r}: choose "
                         f"{' or '.join(agent_names())}")
    return factory(config, observation_space, action_space)
