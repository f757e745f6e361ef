"""The report's throughput sections of a benchmark: each compare's SEED/IMPALA ratio and
ceiling shares, what its runs measured besides frames/s, the before/after pairs among them,
and the model-size sweeps."""

from __future__ import annotations

import math
from pathlib import Path

from seed.report.load import COMPARE_LOAD, loads_by_compare, quiet_or
from seed.report.text import heading, plural, rel
from seed.results.compare import Compare
from seed.results.sweep import Sweep
from seed.results.tables import before_after_pairs, compare_details, compare_ratios
from seed.results.text import markdown_table, num


def throughput_section(bench: str, compares: list[Compare], root: Path) -> list[str]:
    ratios = compare_ratios(compares)
    details = compare_details(compares).set_index("compare_dir")
    roofs = {str(c.directory): c.roofline for c in compares}
    loads = loads_by_compare(compares)
    rows = []
    for _, r in ratios.iterrows():
        d = details.loc[r["compare_dir"]]
        roof = roofs[r["compare_dir"]]
        share = " / ".join(num(roof.get(f"{a}_fraction"), ".0%") for a in ("seed", "impala"))
        if roof and d["ceiling_mismatch"]:
            share += f" (roofline config differs: {d['ceiling_mismatch']})"
        rows.append([rel(r["compare_dir"], root), r["mode"], r["network"],
                     r["options"] or "-", num(r["seed_fps"]), num(r["impala_fps"]),
                     num(r["fps_ratio"], ".2f"), num(r["cpu_ratio"], ".2f"),
                     share if roof else "-", num(d["seed_lockstep_fraction"], ".0%"),
                     num(d["seed_turns_fraction"], ".0%"), quiet_or(loads[r["compare_dir"]])])
    return ([heading(bench, "throughput"), "",
             f"{plural(len(rows), 'compare')}. Steady-state frames/s (SEED: mean of its "
             "runs); ratio = SEED/IMPALA frames/s, per CPU-s = the same per CPU-second of the "
             "process tree; ceiling share = frames/s over this machine's roofline ceiling for "
             "that mode (SEED / IMPALA), as the compare read it (flagged where the roofline's "
             "config differed from the compare's); lock-step share = SEED's frames/s over its "
             "serve bound with inference, simulation and data path in turn, each timed alone "
             "(rooflines that measured it); turns share = the same over that bound with "
             "inference and simulation run in turns for real, without SEED "
             f"(seed/bench/turns.py), plus the data path; {COMPARE_LOAD}.", ""]
            + markdown_table(["compare", "mode", "network", "options", "SEED fps", "IMPALA fps",
                              "ratio", "per CPU-s", "ceiling share", "lock-step share",
                              "turns share", "foreign load"], rows) + [""])


def details_section(bench: str, compares: list[Compare], root: Path) -> list[str]:
    """What each compare's runs measured besides frames/s, in the throughput table's order."""
    order = compare_ratios(compares)["compare_dir"]
    details = compare_details(compares).set_index("compare_dir")
    loads = loads_by_compare(compares)
    rows = []
    for cd in order:
        d = details.loc[cd]
        cpu = num(d["seed_cpu_us"])
        if not math.isnan(d["seed_learner_cpu_us"]):
            cpu += f" (learner {num(d['seed_learner_cpu_us'])})"
        rows.append([
            rel(cd, root), " / ".join(num(x) for x in d["seed_run_fps"]),
            f"{num(d['seed_cores_busy'], '.0%')} / {num(d['impala_cores_busy'], '.0%')}",
            f"{cpu} / {num(d['impala_cpu_us'])}",
            f"{num(d['seed_latency_p50_ms'], '.1f')} / {num(d['seed_latency_p99_ms'], '.1f')}",
            f"{num(d['seed_batch'], '.1f')}; {num(d['seed_batch_ms'], '.2f')} ms",
            f"{num(d['impala_inference_ms'], '.2f')}; {num(d['impala_pull_ms'], '.1f')}",
            quiet_or(loads[cd])])
    return ([heading(bench, "inside the compares"), "",
             "What the runs of each compare measured besides frames/s, over their steady "
             "state (SEED: mean of its runs): cores busy = share of all the machine's cores "
             "the run's process tree used; CPU per frame in microseconds (1e6 / frames per "
             "CPU-second; SEED's learner part where recorded); SEED's action latency (an "
             "actor's wait from a step's observations to its actions); SEED's learner batch "
             "(envs per inference call) and the time of one such call; an IMPALA actor's "
             "local inference call and parameter pull; " + COMPARE_LOAD + ".", ""]
            + markdown_table(["compare", "SEED fps, each run", "cores busy, SEED / IMPALA",
                              "CPU us per frame, SEED / IMPALA",
                              "SEED action latency p50 / p99 (ms)",
                              "SEED batch: envs; inference", "IMPALA inference ms; pull ms",
                              "foreign load"], rows)
            + [""])


def _change(before: float, after: float, fmt: str = ",.0f", percent: bool = True) -> str:
    """``7,153 -> 8,071 (+13%)``; ``-`` when neither was measured."""
    if math.isnan(before) and math.isnan(after):
        return "-"
    text = f"{num(before, fmt)} -> {num(after, fmt)}"
    if percent and before and not (math.isnan(before) or math.isnan(after)):
        change = after / before - 1
        text += f" ({change:+.0%})" if round(change, 2) else " (0%)"
    return text


def before_after_section(bench: str, compares: list[Compare], root: Path) -> list[str]:
    """Each before/after pair of compares (:func:`before_after_pairs`), side by side."""
    ratios = compare_ratios(compares).set_index("compare_dir")
    details = compare_details(compares).set_index("compare_dir")
    pairs = before_after_pairs(ratios.index)
    if not pairs:
        return []
    loads = loads_by_compare(compares)
    rows = []
    for b, a in pairs:
        rb, ra, db, da = ratios.loc[b], ratios.loc[a], details.loc[b], details.loc[a]
        rows.append([
            f"{rel(b, root)} -> {Path(a).name}", ra["mode"],
            _change(rb["seed_fps"], ra["seed_fps"]), _change(rb["impala_fps"], ra["impala_fps"]),
            _change(rb["fps_ratio"], ra["fps_ratio"], ".2f", percent=False),
            _change(db["seed_frames_per_cpu_s"], da["seed_frames_per_cpu_s"]),
            _change(db["impala_frames_per_cpu_s"], da["impala_frames_per_cpu_s"]),
            _change(db["seed_batch_ms"], da["seed_batch_ms"], ".2f", percent=False),
            _change(db["seed_lockstep_fraction"], da["seed_lockstep_fraction"], ".0%",
                    percent=False),
            " / ".join(quiet_or(loads[x]) for x in (b, a))])
    return ([heading(bench, "before and after"), "",
             f"{plural(len(rows), 'pair')} of compares made to measure a change: the code "
             "before it, then after it, back to back (folders named `...before...` and "
             "`...after...`; `-rerun` for a repeat of the after). Frames/s and frames per "
             "CPU-second are the means of the runs of an architecture; the change in percent "
             "follows each; " + COMPARE_LOAD + ", before / after.", ""]
            + markdown_table(["before -> after", "mode", "SEED fps", "IMPALA fps",
                              "SEED/IMPALA", "SEED frames per CPU-s", "IMPALA frames per CPU-s",
                              "SEED batch inference ms", "SEED lock-step share", "foreign load"],
                             rows) + [""])


def sweep_section(bench: str, sweeps: list[Sweep], root: Path) -> list[str]:
    """Each model-size sweep (``seed compare --sweep-network``): one row per size."""
    out = [heading(bench, "model-size sweep"), ""]
    for sweep in sweeps:
        out += [f"`{rel(sweep.source, root)}`: inference CPU per sample in "
                "microseconds, measured alone at batch 1, at an IMPALA actor's batch and at "
                "SEED's learner batch; SEED/IMPALA frames/s and per CPU-second.", ""]
        out += markdown_table(["size", "network", "parameters", "inference us per sample: 1 / "
                               "actor / SEED batch", "SEED fps", "IMPALA fps", "ratio",
                               "per CPU-s"], sweep.rows())
        out += [""]
    return out
