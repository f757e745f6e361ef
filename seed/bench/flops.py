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
(:func:`seed.metrics.cpu_facts.peak_flops`; docs/performance.md derives it). The
roofline's type shows them (:mod:`seed.results.roofline`: the FLOPs rows, "not measured" in
a file from before FLOPs were counted).
"""

from __future__ import annotations

import numpy as np


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
