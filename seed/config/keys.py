"""From the keys a user writes (a YAML file, flags, ``--set``) to a :class:`Config`, and back.

A key names a field three ways, all equal:

- plainly, ``entropy_cost``: the run's field, else the transport's, else the run's
  agent's; no field name is shared between those three;
- dotted, ``vtrace.entropy_cost`` or ``transport.server``;
- nested in a file, ``transport: {server: ...}``.

:func:`paths` turns them into *paths* (``frames``, ``transport.server``,
``vtrace.entropy_cost``), the one spelling the rest of this module and a resume's
report use. A key that no component has, or that belongs only to an agent the run
does not use (an R2D2 key in a V-trace run), is refused in one line that names the
key and where it could belong.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from seed.config.agents import AGENT_CONFIGS, check_agent_name
from seed.config.errors import ConfigError
from seed.config.fields import allowed, declared
from seed.config.run import Config
from seed.config.transport import TransportConfig

RUN_FIELDS = [f.name for f in dataclasses.fields(Config)
              if f.name not in ("transport", "agent_config")]


def _components() -> dict[str, type]:
    """Component name -> its config class: ``transport``, then every agent's (by its name;
    a run has only its own agent's)."""
    return {"transport": TransportConfig, **AGENT_CONFIGS}


def _fields(cls) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def _owners(name: str) -> list[str]:
    """The components with a field ``name`` ("run" for the run's own)."""
    return (["run"] if name in RUN_FIELDS else []) + [
        component for component, cls in _components().items() if name in _fields(cls)]


def _path(key: str, agent: str) -> str:
    components = _components()
    component, dot, name = key.partition(".")
    if dot:
        if component not in components or name not in _fields(components[component]):
            owners = _owners(name)
            where = f"; {name} is in {', '.join(owners)}" if owners else ""
            raise ConfigError(f"unknown config key {key}: {component} has no field {name} "
                              f"(components: {', '.join(components)}){where}")
        if component in AGENT_CONFIGS and component != agent:
            raise ConfigError(f"config key {key} belongs to the {component} agent, but this "
                              f"run's agent is {agent}")
        return key
    owners = _owners(key)
    if "run" in owners:
        return key
    if "transport" in owners:
        return f"transport.{key}"
    if agent in owners:
        return f"{agent}.{key}"
    if owners:
        raise ConfigError(f"config key {key} belongs to the {' and '.join(owners)} agent, "
                          f"but this run's agent is {agent}")
    raise ConfigError(f"unknown config key {key}: no component has it (run, "
                      f"{', '.join(components)})")


def _declaring(name: str) -> type:
    """The class of the first component with a field of plain name ``name``."""
    return {"run": Config, **_components()}[_owners(name)[0]]


def read_value(name: str, value) -> Any:
    """``value`` read as the field of plain name ``name`` declares it (a flag's text, say),
    whichever component has the field (an agent's, for every agent alike); a ConfigError
    naming ``name`` and what is allowed if it is not."""
    return _declaring(name).read(name, value, key=name)


def allowed_values(name: str) -> str:
    """What the field of plain name ``name`` allows, in words (``an integer >= 1``)."""
    return allowed(declared(_declaring(name))[name])


def _agent_of(values: dict[str, Any], default: str) -> str:
    agent = values.get("agent", default)
    check_agent_name(agent)
    return agent


def paths(values: dict[str, Any], agent: str | None = None) -> dict[str, Any]:
    """``values`` (plain, dotted or nested keys) by path, for a run of ``agent`` (by default
    ``values["agent"]``, else the default agent)."""
    agent = _agent_of({"agent": agent} if agent else values, Config.agent)
    out = {}
    for key, value in values.items():
        if key in _components() and isinstance(value, dict):
            out.update(paths({f"{key}.{k}": v for k, v in value.items()}, agent))
        else:
            out[_path(key, agent)] = value
    return out


def config_paths(config: Config) -> dict[str, Any]:
    """Every field of ``config`` by path (the other agent's left out)."""
    out = {name: getattr(config, name) for name in RUN_FIELDS}
    for component, part in (("transport", config.transport), (config.agent, config.agent_config)):
        out.update({f"{component}.{k}": getattr(part, k) for k in _fields(type(part))})
    return out


def from_paths(values: dict[str, Any]) -> Config:
    """A Config from values by path; a component's fields left out take its defaults."""
    agent = _agent_of(values, Config.agent)
    run = {k: v for k, v in values.items() if "." not in k}
    parts: dict[str, dict] = {}
    for key, value in values.items():
        component, dot, name = key.partition(".")
        if dot:
            parts.setdefault(component, {})[name] = value
    return Config(**run, transport=TransportConfig(**parts.pop("transport", {})),
                  agent_config=AGENT_CONFIGS[agent](**parts.pop(agent, {})))


def make_config(**values) -> Config:
    """A Config from keyword values in any of the three spellings (``make_config(env="atari:Pong",
    entropy_cost=0.01, server="unix:/tmp/s")``); the rest take their defaults."""
    return from_paths(paths(values))


def replaced(config: Config, **values) -> Config:
    """``config`` with ``values`` (any spelling) set; changing ``agent`` drops the old
    agent's settings for the new one's defaults."""
    agent = _agent_of(values, config.agent)
    kept = {k: v for k, v in config_paths(config).items()
            if not k.startswith(f"{config.agent}.") or agent == config.agent}
    return from_paths({**kept, **paths(values, agent)})


#: Fields that moved from a component to the run, by (component, name): a saved config that
#: has one where it was is read with it where it is (``transport.timeline`` is ``timeline``).
MOVED = (("transport", "timeline"),)


def _moved(values: dict[str, Any]) -> dict[str, Any]:
    """A saved config's nested values with each :data:`MOVED` field taken to the run."""
    values = dict(values)
    for component, name in MOVED:
        part = values.get(component)
        if isinstance(part, dict) and name in part:
            values[component] = {k: v for k, v in part.items() if k != name}
            values.setdefault(name, part[name])
    return values


def from_saved(values: dict[str, Any], *, unknown_agent_ok: bool = False) -> Config:
    """The Config a run saved (``config.json``'s ``"config"``, an actor's spec).

    The one way back from a saved dict, in both of its forms:

    - nested (``Config.to_json()`` since configs have components): read as written;
    - flat, as every run saved before: one mapping of every field of every part, both
      agents' included. Each field goes to the part that has it; the fields of the agent
      the run did not use are dropped, as they never applied to it.

    A field saved where it no longer is (:data:`MOVED`) is read where it is now.

    A field this version does not know is refused by name, not dropped, so that a setting
    never silently stops applying. With ``unknown_agent_ok``, a config whose agent this
    process does not know (one registered in the learner's process only) is read without
    the agent's settings (``agent_config`` None): what a SEED actor, which never builds the
    agent, needs of it.
    """
    values = _moved(values)
    agent = values.get("agent", Config.agent)
    if unknown_agent_ok and agent not in AGENT_CONFIGS:
        rest = {k: v for k, v in values.items() if k != agent}
        config = from_saved({**rest, "agent": Config.agent})
        config.agent, config.agent_config = agent, None  # set, not built: no check refuses it
        return config
    if agent not in AGENT_CONFIGS:
        raise ConfigError(f"saved config names an agent this process does not know: {agent!r} "
                          f"(known: {', '.join(AGENT_CONFIGS)}; a registered agent exists only "
                          "in the process that registered it)")
    components = _components()
    if any(name in values for name in components):
        unknown = [k for k, v in values.items() if k not in RUN_FIELDS and not (
            k in components and isinstance(v, dict))]
        unknown += [f"{k}.{name}" for k, v in values.items() if k in components
                    and isinstance(v, dict) for name in v if name not in _fields(components[k])]
        if unknown:
            raise ConfigError(f"saved config has field(s) this version does not know: "
                              f"{', '.join(sorted(unknown))}")
        return from_paths(paths(values))
    others = {k for name, cls in AGENT_CONFIGS.items() if name != agent for k in _fields(cls)}
    mine = set(_fields(AGENT_CONFIGS[agent]))
    kept = {k: v for k, v in values.items() if k in mine or k not in others}
    unknown = sorted(k for k in kept if not _owners(k))
    if unknown:
        raise ConfigError(f"saved config has field(s) this version does not know: "
                          f"{', '.join(unknown)}")
    return from_paths(paths(kept, agent))


def field_values(config: Config) -> dict[str, Any]:
    """Every field of ``config`` by its plain name (no name is shared between the parts of
    a run)."""
    return {path.rpartition(".")[2]: value for path, value in config_paths(config).items()}


def saved_fields(values: dict[str, Any]) -> dict[str, Any]:
    """A saved config's every field by its plain name, defaults filled in, from either form
    :func:`from_saved` reads: what a reader of run directories compares and prints."""
    return field_values(from_saved(values))
