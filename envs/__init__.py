"""Environment adapters behind one factory: ``envs.make('kind:name', **kwargs)``.

Every adapter's env is an :class:`Env`: Gymnasium-style, with the frames one
step stands for and the raw game reward of each step. Observations are NumPy
arrays in the compact form that crosses the wire. Adapters never import
TensorFlow.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    from gymnasium import spaces


@runtime_checkable
class Env(Protocol):
    """What ``envs.make`` returns. A Protocol, not a base class: adapters wrap other
    libraries' envs (some already subclass ``gymnasium.Env``) and only need this shape."""

    observation_space: spaces.Box
    action_space: spaces.Discrete
    frames_per_step: int  # emulator frames per ``step`` (Atari frame skip 4 -> 4)

    def reset(self, *, seed: int | None = None,
              options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """A new episode: ``(observation, info)``."""

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """``(observation, reward, terminated, truncated, info)``; ``info["raw_reward"]``
        is the unclipped, unshaped game reward of the step (Football: the scoring
        reward), which episode returns report."""

    def close(self) -> None:
        """Release the engine (a no-op where there is none)."""


_KINDS = {
    "toy": "envs.toy",
    "atari": "envs.atari",
    "football": "envs.football",
    "dmlab": "envs.dmlab",
}


class UnknownEnvError(ValueError):
    """An env name that no adapter knows."""


def make(name: str, **kwargs) -> Env:
    """Build the env named ``kind:name`` (e.g. ``toy:catch``, ``atari:Pong``)."""
    module, rest = _adapter(name)
    return module.make(rest, **kwargs)


def engine_info(name: str) -> dict | None:
    """What a run's config.json records of the engine behind ``kind:name``, for adapters whose
    engine is built here and can differ between builds (DMLab: complete or partial source);
    None for the others."""
    module, rest = _adapter(name)
    describe = getattr(module, "engine_info", None)
    return describe(rest) if describe else None


#: What an env's observations are, as :func:`observation_kind` names them, for the networks
#: that read them (``seed.networks.OBSERVATIONS``).
OBSERVATION_KINDS = {
    "features": "arrays of numbers: a grid, a state vector",
    "frames": "[H, W, C] images",
    "planes": "Football's minimap planes, packed into bits or not",
}


def observation_kind(name: str, **kwargs) -> str:
    """What the env ``kind:name`` made with ``kwargs`` observes (a key of
    :data:`OBSERVATION_KINDS`), read from its adapter without building the env."""
    module, rest = _adapter(name)
    return module.observation_kind(rest, **kwargs)


def _adapter(name: str):
    """(adapter module, the name after ``kind:``)."""
    kind, sep, rest = name.partition(":")
    if not sep or not rest:
        raise UnknownEnvError(
            f"env name {name!r} must look like kind:name, kinds: {', '.join(_KINDS)}")
    if kind not in _KINDS:
        close = difflib.get_close_matches(kind, list(_KINDS), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise UnknownEnvError(f"unknown env kind {kind!r}{hint}; kinds: {', '.join(_KINDS)}")
    import importlib
    return importlib.import_module(_KINDS[kind]), rest
