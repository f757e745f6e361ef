"""The report's roofline section of a benchmark: its rooflines side by side (the rows are
:mod:`seed.results.roofline`'s, as the terminal prints them)."""

from __future__ import annotations

from pathlib import Path

from seed.report.text import heading, rel
from seed.results.compare import Compare
from seed.results.roofline import Roofline, inference_vs_bare_rows, roofline_rows
from seed.results.run_dirs import Run
from seed.results.text import markdown_table


def roofline_keys(runs: list[Run], compares: list[Compare]) -> set:
    """(env, network, agent) of a benchmark's runs and compares: the rooflines it owns."""
    configs = [r.config for r in runs]
    configs += [c.config for c in compares]
    return {(c.get("env"), c.get("network"), c.get("agent", "vtrace")) for c in configs}


def section(bench: str, roofs: list[Roofline], root: Path) -> list[str]:
    out = [heading(bench, "roofline"), "",
           "What this machine reaches, each cost measured alone by `seed roofline` (CPU "
           "microseconds per frame, wall time, frames/s); the ceilings it derives "
           "(cores / CPU seconds per frame of simulation + inference [+ training]); the "
           "agent's train step against the same step in bare TensorFlow; SEED's data path "
           "alone (gRPC, batching, unroll assembly; no inference, no envs); SEED's serve "
           "bound when inference, simulation and the data path take turns; FLOPs per frame "
           "counted from the network and the FLOP/s each measurement achieved, as a share of "
           "the CPU's peak for the dtype it computed in (docs/performance.md; \"not "
           "measured\" in a file from before they were counted). One column per file.", ""]
    out += markdown_table(["", *[f"`{rel(r.source, root)}`" for r in roofs]],
                          roofline_rows(roofs))
    bare = inference_vs_bare_rows(roofs, root)
    if bare:
        out += ["", "The agent's inference call against the same step in bare TensorFlow "
                "(timed in turns), and the agent's call in parts, each timed alone "
                "(network, frame-stack update, sampling, copies in, copies out).", ""]
        out += markdown_table(["file", "batch", "agent / bare ms a call", "infer over bare",
                               "parts (ms)"], bare)
    return out + [""]
