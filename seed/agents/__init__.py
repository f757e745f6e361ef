"""Agents: losses and learner steps, independent of the runtime architecture.

``make_agent(config, observation_space, action_space)`` builds the agent named
by ``config.agent``: an :class:`seed.agents.base.Agent`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from seed.agents.base import Agent


def make_agent(config, observation_space, action_space) -> Agent:
    if config.agent == "vtrace":
        from seed.agents.vtrace_agent import VTraceAgent
        return VTraceAgent(config, observation_space, action_space)
    if config.agent == "r2d2":
        from seed.agents.r2d2_agent import R2D2Agent
        return R2D2Agent(config, observation_space, action_space)
    raise ValueError(f"unknown agent {config.agent!r}: choose vtrace or r2d2")
