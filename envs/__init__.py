"""Environment adapters behind one factory: ``envs.make('kind:name', **kwargs)``.

Every env is Gymnasium-style: ``reset(seed=None) -> (obs, info)``,
``step(action) -> (obs, reward, terminated, truncated, info)``, with
``observation_space`` and ``action_space`` (Discrete). Observations are NumPy
arrays in the compact form that crosses the wire. Two extra attributes:

* ``frames_per_step``: emulator frames per ``step`` (Atari frame skip 4 -> 4).
* ``info["raw_reward"]``: the unclipped, unshaped game reward of the step
  (Football: the scoring reward), which episode returns report.

Adapters never import TensorFlow.
"""

from __future__ import annotations

import difflib

_KINDS = {
    "toy": "envs.toy",
    "atari": "envs.atari",
    "football": "envs.football",
    "dmlab": "envs.dmlab",
}


class UnknownEnvError(ValueError):
    """An env name that no adapter knows."""


def make(name: str, **kwargs):
    """Build the env named ``kind:name`` (e.g. ``toy:catch``, ``atari:Pong``)."""
    kind, sep, rest = name.partition(":")
    if not sep or not rest:
        raise UnknownEnvError(
            f"env name {name!r} must look like kind:name, kinds: {', '.join(_KINDS)}")
    if kind not in _KINDS:
        close = difflib.get_close_matches(kind, list(_KINDS), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise UnknownEnvError(f"unknown env kind {kind!r}{hint}; kinds: {', '.join(_KINDS)}")
    import importlib
    module = importlib.import_module(_KINDS[kind])
    return module.make(rest, **kwargs)
