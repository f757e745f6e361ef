"""What a ``seed compare`` reads of this machine's roofline: where the roofline of its env
and network is (:func:`roofline_path`), and its frames/s as a share of the ceilings there
(:func:`ceiling_fractions`, kept in compare.json under ``roofline``), with the settings the
roofline was measured otherwise with."""

from __future__ import annotations

import json
from pathlib import Path

from seed.config import make_config
from seed.results.files import ResultsError
from seed.results.roofline import load_roofline
from seed.runtime.seed_arch import sizing


def roofline_path(env: str, network: str, cpu_idle_poll: bool = False,
                  compute_dtype: str = "float32") -> Path:
    """Where ``seed roofline`` writes, and ``seed compare`` reads, the roofline of an env
    and network (measured with idle cores polling, or in another compute dtype than
    float32: its own file, as compares run so)."""
    suffix = ("-idlepoll" if cpu_idle_poll else "") + (
        "" if compute_dtype == "float32" else f"-{compute_dtype}")
    return Path("results") / "roofline" / f"{env.replace(':', '_')}_{network}{suffix}.json"


def full_network_kwargs(network: str, kwargs: dict) -> dict:
    """``kwargs`` with the network class's defaults filled in (so {} == the defaults)."""
    import inspect

    from seed.networks import REGISTRY, network_class
    out = {}
    if network in REGISTRY:
        cls = network_class(network)
        for name, p in inspect.signature(cls.__init__).parameters.items():
            if p.default is not inspect.Parameter.empty and name not in ("head", "name"):
                out[name] = p.default
    out.update(kwargs)
    return json.loads(json.dumps(out, default=list))  # tuples and lists compare equal


def ceiling_fractions(path: Path, mode: str, summary: dict, config: dict) -> dict | None:
    """What compare.json keeps under ``roofline``: this compare's mean FPS of each
    architecture as a fraction of the ceiling the roofline file at ``path`` gives for
    ``mode``, and which of the compare's settings the roofline was measured otherwise
    with. None when there is no roofline file; ``error`` (one line) when it is damaged."""
    if not path.exists():
        return None
    try:
        roof = load_roofline(path)
    except ResultsError as e:
        return {"path": str(path), "error": str(e)}
    out = {"path": str(path), "mode": mode, "roofline_config": roof.config}
    mismatched = [k for k in ("actors", "envs_per_actor", "unroll_length", "batch_size")
                  if k in roof.config and roof.config[k] != config.get(k)]
    if bool(roof.config.get("cpu_idle_poll")) != bool(config.get("cpu_idle_poll")):
        mismatched.append("cpu_idle_poll")  # rooflines before it existed measured without
    if roof.network != config.get("network") or \
            full_network_kwargs(roof.network or "", roof.network_kwargs) != \
            full_network_kwargs(config.get("network", ""), config.get("network_kwargs") or {}):
        mismatched.append("network_kwargs")
    out["mismatched"] = mismatched
    for arch, fps in (("seed", summary["seed_fps_mean"]), ("impala", summary["impala_fps"])):
        ceiling = roof.ceiling(arch, mode)
        out[f"{arch}_ceiling_fps"] = ceiling
        out[f"{arch}_fraction"] = (fps / ceiling) if (fps and ceiling) else None
    # SEED's bound when its steps take turns (seed/bench/roofline.py): it holds for a serve
    # run of that schedule only.
    lockstep, fps = roof.seed_lockstep_serve, summary["seed_fps_mean"]
    if mode == "serve" and lockstep and \
            sizing.serve_runs_in_lockstep(make_config(**config)):
        out["seed_lockstep_fps"] = lockstep["frames_per_s"]
        out["seed_lockstep_fraction"] = fps / lockstep["frames_per_s"] if fps else None
        turns = roof.turns()  # the same turns run for real (rooflines that have it)
        if turns:
            out["seed_turns_fps"] = turns["with_data_path_frames_per_s"]
            out["seed_turns_fraction"] = fps / out["seed_turns_fps"] if fps else None
    return out
