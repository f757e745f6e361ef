"""The roofline's FLOPs: per frame from the network, achieved FLOP/s, share of the CPU's peak.

FLOPs per env step come from the acting network's layers (:mod:`seed.networks.flops`):
``forward`` for inference, ``forward`` + ``backward`` for a step a train step learns from.
A train step runs each of its ``batch_size`` sequences through the networks as the agent
says (:meth:`seed.agents.agent_base.AgentBase.train_network_steps`: V-trace every step of
the unroll forward and backward; R2D2 also its target network and burn-in forward). Per
frame is per env step over the frames a step counts (Atari: 4), as the roofline's CPU
microseconds per frame are; a train step's over the frames it trains on.

Achieved FLOP/s is a call's (or a train step's) FLOPs over its wall time; its share of the
peak is against every usable core's peak for the dtype the call computed in
(:func:`seed.metrics.cpu_facts.peak_flops`; docs/performance.md derives it). A roofline
file from before FLOPs were counted has no ``flops``: its cells say "not measured".
"""

from __future__ import annotations

import numpy as np

NOT_MEASURED = "not measured"


def count(agent, config, observation_space) -> dict:
    """FLOPs per env step of ``agent``'s network, and per train step of ``config``'s batch."""
    from seed.networks.flops import step_flops
    step = step_flops(agent.network, tuple(int(d) for d in observation_space.shape),
                      np.dtype(observation_space.dtype))
    out = {"forward_per_env_step": step["forward"], "backward_per_env_step": step["backward"],
           "layers": step["layers"], "train_step": None}
    passes = agent.train_network_steps()
    if passes is not None:
        out["train_step"] = int(config.batch_size) * (
            passes["forward"] * step["forward"]
            + passes["forward_backward"] * (step["forward"] + step["backward"]))
    return out


def achieved(counts: dict, config, frames_per_step: int, cores: int, inference: dict,
             training: dict) -> dict:
    """What the roofline records under ``flops``: ``counts`` (:func:`count`), per frame, the
    CPU and its peak, and each measurement's FLOP/s and share of the peak for its dtype."""
    from seed.metrics.cpu_facts import peak_flops, read_cpu
    from seed.networks.precision import train_and_inference_dtypes
    cpu = read_cpu()
    peak = peak_flops(cpu, cores)
    train_dtype, inference_dtype = (d.name for d in
                                    train_and_inference_dtypes(config.compute_dtype))

    def rate(flops: float, seconds: float, dtype: str) -> dict:
        per_s = flops / seconds
        return {"flops_per_s": per_s, "dtype": dtype,
                "share_of_peak": per_s / peak[dtype] if peak.get(dtype) else None}

    forward = counts["forward_per_env_step"]
    out = {**counts, "compute_dtype": config.compute_dtype, "cpu": cpu, "peak": peak,
           "inference_per_frame": forward / frames_per_step, "train_per_frame": None,
           "inference": {b: rate(int(b) * forward, m["wall_s_per_call"], inference_dtype)
                         for b, m in inference.items()},
           "training": None}
    if counts["train_step"] is not None:
        frames = training["env_steps_per_train_step"] * frames_per_step
        out["train_per_frame"] = counts["train_step"] / frames
        out["training"] = rate(counts["train_step"], training["wall_s_per_step"], train_dtype)
    return out


# -- text, for the roofline's printout and the report ---------------------------------------

def _si(flops) -> str:
    for scale, unit in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if flops >= scale:
            return f"{flops / scale:,.3g} {unit}"
    return f"{flops:,.0f} "


def _rate_text(m: dict | None) -> str:
    if not m:
        return NOT_MEASURED
    share = m.get("share_of_peak")
    return (f"{_si(m['flops_per_s'])}FLOP/s {m['dtype']}, "
            + (f"{100 * share:.2g}% of peak" if share is not None else "no peak for it"))


def per_frame_text(roof: dict) -> str:
    """FLOPs per frame of inference and of the train step."""
    f = roof.get("flops")
    if not f:
        return NOT_MEASURED
    train = (f"{_si(f['train_per_frame'])}FLOP" if f.get("train_per_frame") is not None
             else NOT_MEASURED)
    return f"inference {_si(f['inference_per_frame'])}FLOP, train step {train}"


def inference_text(roof: dict, batch: str) -> str | None:
    """Achieved FLOP/s of inference at ``batch`` and its share of the peak; None where the
    roofline timed no inference at that batch."""
    if batch not in (roof.get("inference") or {}):
        return None
    return _rate_text(((roof.get("flops") or {}).get("inference") or {}).get(batch))


def training_text(roof: dict) -> str:
    """Achieved FLOP/s of the train step and its share of the peak."""
    return _rate_text((roof.get("flops") or {}).get("training"))


def peak_text(roof: dict) -> str:
    """The CPU, its peak per dtype and the dtype the roofline computed in."""
    f = roof.get("flops")
    if not f:
        return NOT_MEASURED
    p, cpu = f["peak"], f["cpu"]
    bf16 = f"{_si(p['bfloat16'])}FLOP/s ({p['bfloat16_unit']})" if p.get("bfloat16") else "none"
    return (f"{cpu['model_name']}, {p['physical_cores']} cores at {p['clock_ghz']:.2f} GHz, "
            f"{p['vector_bits']}-bit x {p['fma_units_per_core']} FMA: float32 "
            f"{_si(p['float32'])}FLOP/s, bfloat16 {bf16}; computed in {f['compute_dtype']}")


def format_lines(roof: dict) -> list[str]:
    """The roofline printout's lines on FLOPs."""
    if not roof.get("flops"):
        return [f"  FLOPs: {NOT_MEASURED}"]
    lines = [f"  FLOPs per frame: {per_frame_text(roof)}", f"  peak: {peak_text(roof)}"]
    for b in sorted(roof["flops"]["inference"], key=int):
        lines.append(f"  FLOP/s, inference batch {int(b):>4}: {inference_text(roof, b)}")
    lines.append(f"  FLOP/s, train step: {training_text(roof)}")
    return lines
