"""Agents: losses and learner steps, independent of the runtime architecture.

``make_agent(config, observation_space, action_space)`` builds the agent named
by ``config.agent``: an :class:`seed.agents.contract.Agent`. The names are the
built-in ``vtrace`` and ``r2d2`` and any that :func:`register_agent` added in
this process (an agent kept out of the package, e.g. a test's toy agent, which
a run with its learner in that process can then name). Each name has one entry in
:data:`seed.config.agents.AGENTS`: its config class (``config.agent_config``) and what
builds it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Callable

from seed.config.agents import AGENTS, AgentEntry

if TYPE_CHECKING:
    from seed.agents.contract import Agent


def agent_names() -> list[str]:
    """Every name ``config.agent`` may take: the built-in ones, then the registered."""
    return list(AGENTS)


def register_agent(name: str, factory: Callable, config_class: type) -> None:
    """Let ``config.agent = name`` build ``factory(config, observation_space, action_space)``
    (an agent class, say) in this process, its settings a ``config_class`` (a dataclass
    deriving :class:`seed.config.agents.AgentConfig`) under the key ``name``; a name
    already taken, or one a config key uses, is refused."""
    from seed.config.keys import RUN_FIELDS
    if name in AGENTS:
        raise ValueError(f"an agent named {name!r} exists already")
    if name in RUN_FIELDS or name in ("transport", "agent_config"):
        raise ValueError(f"{name!r} is a config key; name the agent otherwise")
    AGENTS[name] = AgentEntry(name, config_class, factory)


def unregister_agent(name: str) -> None:
    """Forget an agent :func:`register_agent` added (a test's, at its end)."""
    if name not in AGENTS or AGENTS[name].built_in:
        raise ValueError(f"no registered agent named {name!r}")
    del AGENTS[name]


def make_agent(config, observation_space, action_space) -> Agent:
    entry = AGENTS.get(config.agent)
    if entry is None:
        raise ValueError(f"unknown agent {config.agent!r}: choose "
                         f"{' or '.join(agent_names())}")
    factory = entry.factory
    if isinstance(factory, str):
        module, _, attr = factory.partition(":")
        factory = getattr(importlib.import_module(module), attr)
    return factory(config, observation_space, action_space)
