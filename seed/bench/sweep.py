"""``seed compare --sweep-network small,medium,large``: the compare over network sizes.

A size name maps to a network and its ``network_kwargs`` through ``PRESETS``,
keyed by the config's network family:

====================  =========  =================================================
family (config)       name       network, network_kwargs
====================  =========  =================================================
mlp (toy envs)        small      mlp, hidden_sizes=[64, 64]
                      medium     mlp, hidden_sizes=[512, 512]
                      large      mlp, hidden_sizes=[2048, 2048, 2048]
nature_cnn /          small      nature_cnn (Mnih et al. 2015)
impala_resnet         medium     impala_resnet, channels=[16, 32, 32] (IMPALA's deep)
(Atari)               large      impala_resnet, channels=[32, 64, 64], fc_size=512
====================  =========  =================================================

Any registered network name (``nature_cnn``, ``impala_resnet`` ...) may be given as
well and is used with its default kwargs. For each size the full compare (SEED,
IMPALA, SEED) runs into ``DIR/<name>/``; then, with no run active, the per-sample
inference cost of each network is measured (:func:`seed.bench.costs.measure_inference`:
CPU seconds of ``agent.infer`` per env at batch 1, at envs_per_actor (an IMPALA
actor's batch) and at the SEED batch). ``DIR/sweep.csv`` has one row per size and
``DIR/sweep.png`` plots FPS and frames per CPU-second against the inference cost at
an IMPALA actor's batch (:func:`seed.plots.throughput.sweep_figure`).
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

from seed.bench.compare import run_compare
from seed.config import Config, ConfigError
from seed.results.sweep import write_sizes

_MLP = {"small": ("mlp", {"hidden_sizes": [64, 64]}),
        "medium": ("mlp", {"hidden_sizes": [512, 512]}),
        "large": ("mlp", {"hidden_sizes": [2048, 2048, 2048]})}
_ATARI = {"small": ("nature_cnn", {}),
          "medium": ("impala_resnet", {"channels": [16, 32, 32]}),
          "large": ("impala_resnet", {"channels": [32, 64, 64], "fc_size": 512})}
PRESETS = {"mlp": _MLP, "nature_cnn": _ATARI, "impala_resnet": _ATARI}

def resolve(name: str, base_network: str) -> tuple[str, dict]:
    """(network, network_kwargs) for a size name or a registered network name."""
    from seed.networks import REGISTRY
    family = PRESETS.get(base_network, {})
    if name in family:
        network, kwargs = family[name]
        return network, copy.deepcopy(kwargs)
    if name in REGISTRY:
        return name, {}
    known = sorted(set(family) | set(REGISTRY))
    raise ConfigError(f"--sweep-network: unknown size {name!r} for network {base_network!r}; "
                      f"known: {', '.join(known)}")


def parse_sizes(text: str, base_network: str) -> list[tuple[str, str, dict]]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise ConfigError("--sweep-network needs a comma-separated list, e.g. small,medium,large")
    if len(set(names)) != len(names):
        raise ConfigError(f"--sweep-network lists a name twice: {text}")
    return [(n, *resolve(n, base_network)) for n in names]


def inference_costs(config: Config, seconds: float) -> dict:
    """CPU seconds per sample of agent.infer at batch 1, envs_per_actor and the SEED batch."""
    from seed.bench.costs import build_agent, measure_inference
    from seed.runtime.seed_arch import sizing
    agent, spec = build_agent(config)
    obs_space, frames_per_step = spec.observation_space, spec.frames_per_step
    out = {"parameters": int(sum(int(v.shape.num_elements()) for v in agent.parameters()))}
    for key, b in (("b1", 1), ("actor_batch", config.envs_per_actor),
                   ("seed_batch", sizing.inference_batch_size(config))):
        m = measure_inference(agent, obs_space, b, seconds, frames_per_step)
        out[key] = m["cpu_s_per_sample"]
    return out


def run_sweep(config: Config, sizes_text: str, mode: str, seconds: float, out_dir: Path,
              log_interval_s: float | None, command: list[str], cost_seconds: float = 3.0,
              echo=print, budget: str = "steady") -> dict:
    sizes = parse_sizes(sizes_text, config.network)
    out_dir.mkdir(parents=True, exist_ok=True)
    results = []
    for name, network, kwargs in sizes:
        cfg = copy.deepcopy(config)
        cfg.network, cfg.network_kwargs = network, kwargs
        echo(f"[sweep] {name}: {network} {json.dumps(kwargs)}")
        res = run_compare(cfg, mode, seconds, out_dir / name, log_interval_s, command, echo,
                          budget)
        echo(res["table"])
        results.append((name, cfg, res))
    rows = []
    for name, cfg, res in results:  # measured with no run active
        echo(f"[sweep] inference cost of {name}")
        costs = inference_costs(cfg, cost_seconds)
        us = lambda s: 1e6 * s  # noqa: E731
        rows.append({
            "size": name, "network": cfg.network,
            "network_kwargs": json.dumps(cfg.network_kwargs, sort_keys=True),
            "parameters": costs["parameters"],
            "inf_cpu_us_per_sample_b1": us(costs["b1"]),
            "inf_cpu_us_per_sample_actor_batch": us(costs["actor_batch"]),
            "inf_cpu_us_per_sample_seed_batch": us(costs["seed_batch"]),
            "seed_fps": res["seed_fps_mean"], "impala_fps": res["impala_fps"],
            "fps_ratio": res["fps_ratio"], "seed_drift": res["seed_drift"],
            "seed_cpu_util": res["seed_cpu_util_mean"],
            "impala_cpu_util": res["impala_cpu_util"],
            "seed_frames_per_cpu_s": res["seed_frames_per_cpu_s"],
            "impala_frames_per_cpu_s": res["impala_frames_per_cpu_s"],
            "frames_per_cpu_s_ratio": res["frames_per_cpu_s_ratio"],
            "compare_dir": str(out_dir / name)})
    write_sizes(out_dir / "sweep.csv", rows)
    title = (f"{config.env}, {config.actors} actors x {config.envs_per_actor} envs, "
             f"{seconds:g}s per run, {mode}; {results[0][2]['cores']}-core CPU")
    import pandas as pd
    from seed.plots import save
    from seed.plots.throughput import sweep_figure
    save(sweep_figure(pd.DataFrame(rows), title, mode), out_dir / "sweep.png", dpi=100)
    (out_dir / "sweep.json").write_text(json.dumps(
        {"command": command, "mode": mode, "seconds": seconds, "rows": rows,
         "machine": results[0][2]["machine"]}, indent=2, default=str))
    return {"rows": rows, "table": format_sweep(rows)}


def format_sweep(rows: list[dict]) -> str:
    def f(v, spec):
        return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)
    head = (f"{'size':<8}{'params':>11}{'inf us/sample b1':>18}{'@actor':>9}{'@seed':>9}"
            f"{'SEED fps':>11}{'IMPALA fps':>12}{'ratio':>7}")
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['size']:<8}{r['parameters']:>11,}"
                     f"{f(r['inf_cpu_us_per_sample_b1'], ',.1f'):>18}"
                     f"{f(r['inf_cpu_us_per_sample_actor_batch'], ',.1f'):>9}"
                     f"{f(r['inf_cpu_us_per_sample_seed_batch'], ',.1f'):>9}"
                     f"{f(r['seed_fps'], ',.0f'):>11}{f(r['impala_fps'], ',.0f'):>12}"
                     f"{f(r['fps_ratio'], '.2f'):>7}")
    return "\n".join(lines)
