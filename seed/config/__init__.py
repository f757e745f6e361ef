"""Run configuration: a config per component, loaded from an experiment YAML and flags.

- :class:`Config` (:mod:`seed.config.run`): the run's own fields (env, scale,
  budget, logging, where the actors run), with its components:
- ``config.transport`` (:class:`TransportConfig`): server, inference batching,
  streams, token and TLS;
- ``config.agent_config`` (:mod:`seed.config.agents`): the run's agent's
  optimizer, loss and buffer settings (a :class:`VTraceConfig`, an
  :class:`R2D2Config`, or a registered agent's), written under the agent's name.

Every field declares its type and bounds, checked when its part is built
(:mod:`seed.config.fields`; :mod:`seed.config.reference` lists them); each part's
``validate(run)`` checks the rules between fields, and ``Config.validate`` runs them
all. Keys are written plainly, dotted or nested (:mod:`seed.config.keys`); :func:`load`
reads a file and flags, :func:`make_config` takes keyword values, :func:`from_saved` reads back
what a run saved, old flat ``config.json`` files included.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from seed.config.agents import (AGENT_CONFIGS, AgentConfig, OptimizerSettings, R2D2Config,
                                 VTraceConfig)
from seed.config.errors import ConfigError
from seed.config.keys import (allowed_values, config_paths, field_values, from_paths,
                              from_saved, make_config, paths, read_value, replaced,
                              saved_fields)
from seed.config.run import Config
from seed.config.transport import TransportConfig

__all__ = ["AGENT_CONFIGS", "AgentConfig", "Config", "ConfigError", "OptimizerSettings",
           "R2D2Config", "TransportConfig", "VTraceConfig", "allowed_values", "config_paths",
           "field_values", "file_values", "from_paths", "from_saved", "given_values", "load",
           "make_config", "paths", "read_value", "replaced", "saved_fields"]


def file_values(path: str) -> dict[str, Any]:
    """The keys a YAML/JSON experiment file sets (plus ``benchmark``, its stem, by default)."""
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
    """What a user gave, by path: a file's keys, then overrides (None values skipped).
    A key no component has, or one of an agent the run does not use, is refused."""
    values = file_values(path) if path else {}
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    agent = given.get("agent", values.get("agent"))
    return {**paths(values, agent), **paths(given, agent)}


def load(path: str | None = None, overrides: dict[str, Any] | None = None) -> Config:
    """Config from defaults, then a YAML/JSON file, then overrides (None values skipped)."""
    return from_paths(given_values(path, overrides))
