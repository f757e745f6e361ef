"""``timeline.json``: ``seed timeline``'s summary of a lock-step SEED run's cycles, as a type.

:mod:`seed.bench.timeline` builds a :class:`Timeline` from the stamps a run recorded and
writes it (:meth:`Timeline.to_json`) into the run's folder; the report and ``seed compare``
read it back with :func:`load_timeline`, which checks what a reader needs (the cycles, the
interval, the frames/s, a mean for each of the :data:`SEGMENTS`, no more and no fewer) and
takes what older files lack as absent. The terminal's summary (:meth:`Timeline.format`) and
the report's row (:meth:`Timeline.groups_ms`) are drawn from the one type.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

from seed.results.files import ResultsFileError, read_json

#: What ``seed timeline`` writes into the run directory (the report reads it).
SUMMARY_FILE = "timeline.json"

# (name, what it spans): the critical path of a cycle, in order.
SEGMENTS = (
    ("pre-inference", "learner: batch released -> agent.infer called"),
    ("inference", "learner: agent.infer"),
    ("post-inference", "learner: actions out -> reply handed to the streams"),
    ("reply hand-off", "learner: reply handed over -> the stream's thread woke"),
    ("reply encode", "learner: stream thread woke -> reply yielded to gRPC"),
    ("reply transit", "learner yielded -> actor has the actions (gRPC both ways)"),
    ("actor sim", "actor: stepping its envs"),
    ("actor encode+send", "actor: envs stepped -> request put on the stream's queue"),
    ("request transit", "actor's queue -> learner took it off the stream (gRPC)"),
    ("decode", "learner: request checked and decoded"),
    ("pre-submit", "learner: stream claim, stats, episodes -> handed to the batcher"),
    ("batcher wake-up", "learner: last request handed over -> next batch released"),
)

OFF_PATH = (
    ("gathering", "first request of a batch off its stream -> last (the early actor waits)"),
    ("post-reply bookkeeping", "learner inference thread after the reply: steps counted, "
                               "unrolls extended"),
    ("bookkeeping during sim", "of that, while the critical actor stepped its envs"),
    ("inference thread busy", "batch released -> bookkeeping done"),
    ("sim, every actor", "each actor's env step, critical or not"),
)

#: The critical-path segments in the groups the report gives, in the cycle's order; each
#: segment in one group, so the groups add up to the batch-to-batch interval as the
#: segments do.
CYCLE_GROUPS = (
    ("pre-inference", ("pre-inference",)),
    ("inference", ("inference",)),
    ("reply", ("post-inference", "reply hand-off", "reply encode", "reply transit")),
    ("actor sim", ("actor sim",)),
    ("request", ("actor encode+send", "request transit", "decode", "pre-submit",
                 "batcher wake-up")),
)

_WHAT = dict(SEGMENTS + OFF_PATH)
_DAMAGED = "(damaged, or not written by seed timeline)"


@dataclasses.dataclass(frozen=True)
class Spread:
    """A span's mean, median and 90th percentile over the cycles, in ms (None: no sample)."""
    mean_ms: float | None
    p50_ms: float | None = None
    p90_ms: float | None = None


@dataclasses.dataclass
class Timeline:
    """One run's lock-step cycles. ``segments`` has every :data:`SEGMENTS` name, in order;
    ``off_path`` those of :data:`OFF_PATH` the file has. The fields after ``off_path`` are
    the analysis's detail, absent ({} / None) in older or trimmed files; ``source`` is the
    file it was read from (not written)."""
    cycles: int
    interval: Spread
    frames_per_s: float
    segments: dict[str, Spread]
    off_path: dict[str, Spread] = dataclasses.field(default_factory=dict)
    run_dir: str = ""
    schedule: dict = dataclasses.field(default_factory=dict)
    cores: int | None = None
    batches_recorded: int | None = None
    window: dict = dataclasses.field(default_factory=dict)
    skipped: dict = dataclasses.field(default_factory=dict)
    interval_all_window_ms: float | None = None
    check: dict = dataclasses.field(default_factory=dict)
    bookkeeping_during_ms: dict = dataclasses.field(default_factory=dict)
    critical_actor_share: dict = dataclasses.field(default_factory=dict)
    source: Path | None = None

    def to_json(self) -> dict:
        """The mapping ``timeline.json`` holds (segments and off-path spans as lists of
        ``{"name", "what", "mean_ms", "p50_ms", "p90_ms"}``)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
               if f.name != "source"}
        out["interval"] = dataclasses.asdict(self.interval)
        for key in ("segments", "off_path"):
            out[key] = [{"name": name, "what": _WHAT.get(name, ""), **dataclasses.asdict(s)}
                        for name, s in getattr(self, key).items()]
        return out

    def groups_ms(self) -> dict[str, float]:
        """The mean ms a cycle of each of the :data:`CYCLE_GROUPS` (its segments' sum)."""
        return {group: sum(self.segments[name].mean_ms for name in names)
                for group, names in CYCLE_GROUPS}

    def off_path_ms(self, name: str) -> float:
        """An off-path span's mean ms; NaN where the file has none."""
        spread = self.off_path.get(name)
        return float("nan") if spread is None or spread.mean_ms is None else spread.mean_ms

    def format(self) -> str:
        """The terminal's summary (``seed timeline``, ``seed compare --timeline``)."""
        return "\n".join(_head_lines(self) + _off_path_lines(self))


def _number(path: Path, value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value):
        raise ResultsFileError(f"{path}: {what} is {value!r}, not a number {_DAMAGED}")
    return float(value)


def _spreads(path: Path, data: dict, key: str) -> dict[str, Spread]:
    """A list ``key`` of ``{"name", "mean_ms", ...}`` entries, by name, each mean a number."""
    entries = data.get(key, [])
    if not isinstance(entries, list) or not all(
            isinstance(e, dict) and isinstance(e.get("name"), str) for e in entries):
        raise ResultsFileError(f"{path}: {key} is not a list of named entries {_DAMAGED}")
    kind = "segment" if key == "segments" else key
    out = {e["name"]: Spread(_number(path, e.get("mean_ms"), f"{kind} {e['name']!r} mean_ms"),
                             e.get("p50_ms"), e.get("p90_ms")) for e in entries}
    if len(out) != len(entries):
        raise ResultsFileError(f"{path}: {key} names an entry twice")
    return out


def _segments(path: Path, data: dict) -> dict[str, Spread]:
    found = _spreads(path, data, "segments")
    known = [name for name, _ in SEGMENTS]
    missing = [n for n in known if n not in found]
    unknown = [n for n in found if n not in known]
    if missing or unknown:
        raise ResultsFileError(
            f"{path}: segments are not the {len(known)} seed timeline writes ("
            + "; ".join(f"{what}: {', '.join(names)}" for what, names in
                        (("missing", missing), ("unknown", unknown)) if names) + ")")
    return {name: found[name] for name in known}


def from_json(data, path: Path) -> Timeline:
    """The :class:`Timeline` of a ``timeline.json`` mapping; ResultsFileError (one line,
    naming ``path``) when it lacks what a reader needs."""
    if not isinstance(data, dict):
        raise ResultsFileError(f"{path}: expected a JSON object, got {type(data).__name__}")
    cycles = data.get("cycles")
    if isinstance(cycles, bool) or not isinstance(cycles, int) or cycles < 1:
        raise ResultsFileError(f"{path}: cycles is {cycles!r}, not a count of matched cycles "
                               f"{_DAMAGED}")
    interval = data.get("interval")
    interval = interval if isinstance(interval, dict) else {"mean_ms": interval}
    mean = _number(path, interval.get("mean_ms"), "interval.mean_ms")
    detail = {f.name: data[f.name] for f in dataclasses.fields(Timeline)
              if f.name in data and f.name not in (
                  "cycles", "interval", "frames_per_s", "segments", "off_path", "source")}
    return Timeline(
        cycles=cycles, interval=Spread(mean, interval.get("p50_ms"), interval.get("p90_ms")),
        frames_per_s=_number(path, data.get("frames_per_s"), "frames_per_s"),
        segments=_segments(path, data), off_path=_spreads(path, data, "off_path"),
        **detail, source=path)


def load_timeline(path) -> Timeline:
    """One ``timeline.json``, checked (:func:`from_json`), with ``source`` set."""
    path = Path(path)
    return from_json(read_json(path, ResultsFileError), path)


def write_timeline(run_dir, timeline: Timeline) -> Path:
    """``timeline`` as :data:`SUMMARY_FILE` in ``run_dir``."""
    path = Path(run_dir) / SUMMARY_FILE
    path.write_text(json.dumps(timeline.to_json(), indent=2))
    return path


def find_timeline_files(compare_dir, seed_runs) -> list[Path]:
    """The ``timeline.json`` of each SEED run of a compare (``seed_runs``: their folder
    names beside compare.csv) that has one, sorted."""
    d = Path(compare_dir)
    return sorted(p for p in (d / run / SUMMARY_FILE for run in set(seed_runs)) if p.exists())


# -- the terminal's summary ----------------------------------------------------------------

def _ms(v) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3f}"


def _spread_cells(s: Spread) -> str:
    return f"{_ms(s.mean_ms):>9}{_ms(s.p50_ms):>9}{_ms(s.p90_ms):>9}"


def _head_lines(t: Timeline) -> list[str]:
    """The run, the interval and the critical path's segments, with their check."""
    sch, iv, c, window = t.schedule, t.interval, t.check, t.window
    lines = [
        f"timeline of {t.run_dir}: {sch.get('actors')} actors x {sch.get('envs_per_actor')} "
        f"envs, lock-step, {'train' if sch.get('train') else 'serve'} mode; {t.cycles} cycles "
        f"of {t.batches_recorded} batches recorded (left out: first {window.get('first')} and "
        f"last {(t.batches_recorded or 0) - window.get('end', 0)} batches, "
        + ", ".join(f"{v} {k}" for k, v in t.skipped.items()) + ")",
        f"batch-to-batch interval: mean {_ms(iv.mean_ms)} ms, p50 {_ms(iv.p50_ms)}, "
        f"p90 {_ms(iv.p90_ms)} ({t.frames_per_s:,.0f} frames/s at that rate)",
        "",
        "critical path (batch released -> the next, through the actor whose request came "
        "last), ms:",
        f"  {'segment':<24}{'mean':>9}{'p50':>9}{'p90':>9}{'share':>7}  spans",
    ]
    total = c.get("interval_ms")
    for name, seg in t.segments.items():
        share = 100.0 * seg.mean_ms / total if total else float("nan")
        lines.append(f"  {name:<24}{_spread_cells(seg)}{share:>6.1f}%  {_WHAT[name]}")
    return lines + [
        f"  {'sum':<24}{_ms(c.get('sum_of_segments_ms')):>9}",
        f"check: the segments add up to {_ms(c.get('sum_of_segments_ms'))} ms, the interval "
        f"of the same cycles is {_ms(c.get('interval_ms'))} ms (largest difference in one "
        f"cycle {_ms(c.get('max_abs_difference_ms'))} ms); every batch of the window, matched "
        f"or not: {_ms(t.interval_all_window_ms)} ms",
        "",
        "off the critical path, ms:",
    ]


def _off_path_lines(t: Timeline) -> list[str]:
    """The spans off the critical path, the learner's post-reply work, the critical actor."""
    lines = [f"  {name:<24}{_spread_cells(o)}         {_WHAT.get(name, '')}"
             for name, o in t.off_path.items()]
    actors = t.schedule.get("actors") or 0
    cores, busy = t.cores, actors + 1
    contention = (f"{busy} threads on {cores} cores: they take turns" if cores and busy > cores
                  else f"{busy} threads on {cores or '?'} cores")
    spans = ", ".join(f"{name} {_ms(v)}" for name, v in t.bookkeeping_during_ms.items()
                      if v >= 0.0005)
    share = ", ".join(f"actor {a} {100 * v:.0f}%"
                      for a, v in sorted(t.critical_actor_share.items()))
    return lines + [
        f"the learner's post-reply work, {_ms(t.off_path_ms('post-reply bookkeeping'))} ms a "
        "cycle on its inference thread, is off the critical path but competes with it for CPU "
        f"(and for the GIL within the learner); it ran during (ms a cycle): {spans or 'none'}",
        f"of it, {_ms(t.off_path_ms('bookkeeping during sim'))} ms fell in the critical "
        f"actor's {_ms(t.segments['actor sim'].mean_ms)} ms of simulation, when {actors} "
        f"actors and the learner's inference thread want a core at once ({contention})",
        f"whose request came last (critical actor): {share}"]
