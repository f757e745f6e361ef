"""The report's lock-step cycles section of a benchmark: where SEED's cycles went in the
compares that recorded a timeline (each SEED run's ``timeline.json``)."""

from __future__ import annotations

from pathlib import Path

from seed.report.load import COMPARE_LOAD, loads_by_run, quiet_or
from seed.report.text import heading, rel
from seed.results.compare import Compare
from seed.results.tables import compare_ratios, lockstep_cycles
from seed.results.timeline import CYCLE_GROUPS, Timeline
from seed.results.text import markdown_table, num

#: docs/performance.md's section on ``seed timeline``, from REPORT.md in results/.
TIMELINE_DOCS = "../docs/performance.md#where-a-lock-step-cycle-goes-seed-timeline"


def section(bench: str, compares: list[Compare], timelines: list[Timeline],
            root: Path) -> list[str]:
    """Each SEED run's lock-step cycles, where its compare recorded a timeline; [] where none
    of ``compares`` did. Rows in the throughput table's order of the compares."""
    dirs = {str(c.directory) for c in compares}
    mine = [t for t in timelines if str(Path(t.source).parent.parent) in dirs]
    if not mine:
        return []
    table = lockstep_cycles(mine, compare_ratios(compares)["compare_dir"])
    polled = {True: "yes", False: "no", None: "?"}
    load = loads_by_run(compares)
    rows = [[rel(r["compare_dir"], root), r["run"], polled[r["cpu_idle_poll"]],
             num(r["cycles"], ",d"), num(r["interval_ms"], ".2f"), num(r["frames_per_s"]),
             *[num(r[group], ".2f") for group, _ in CYCLE_GROUPS],
             num(r["bookkeeping_ms"], ".2f"),
             quiet_or([load.get((r["compare_dir"], r["run"]))])]
            for r in table.to_dict("records")]
    return ([heading(bench, "lock-step cycles"), "",
             "Where SEED's lock-step cycles went, as `seed timeline` reads them from the "
             "stamps the SEED runs of a `seed compare --timeline` recorded (each run's "
             "`timeline.json`). A cycle runs from one batch's release to the inference thread "
             "to the next batch's; its critical path runs through the actor whose request the "
             "next batch waited for, in consecutive segments that add up to the cycle's "
             "interval. idle cores polled = the run's `cpu_idle_poll` (no in a run from before "
             "that field); cycles = the cycles matched (warm-up, the stop and cycles that were "
             "not lock-step are left out); interval = their mean batch-to-batch interval, "
             "frames/s = the rate it implies; then the mean ms a cycle of the segments, "
             "grouped: pre-inference (the learner, batch released -> inference called), "
             "inference (`agent.infer`), reply (post-inference, reply hand-off, reply encode, "
             "reply transit: actions out -> the actor has them), actor sim (the actor stepping "
             "its envs), request (actor encode+send, request transit, decode, pre-submit, "
             "batcher wake-up: envs stepped -> the next batch released); these five add up to "
             "the interval. Last, off the critical path: the learner's post-reply bookkeeping "
             "(counting steps, extending unrolls, on its inference thread after the reply, "
             "while the actors step), which still takes a core. What each segment spans: "
             f"[docs/performance.md, Where a lock-step cycle goes]({TIMELINE_DOCS}); "
             + COMPARE_LOAD + ".", ""]
            + markdown_table(["compare", "run", "idle cores polled", "cycles", "interval ms",
                              "frames/s", *[f"{group} ms" for group, _ in CYCLE_GROUPS],
                              "post-reply bookkeeping ms (off path)", "foreign load"], rows)
            + [""])
