"""``seed timeline RUN_DIR``: where each cycle of a lock-step SEED run goes.

Reads what a run recorded with ``transport.timeline: true`` (:mod:`seed.metrics.timeline`):
the learner's stamps per request and per batch, and each actor's per env-group step. In
lock-step (one stream per actor, one batch of every env) every batch holds one request of
each actor. A *cycle* runs from one batch's release to the inference thread to the next
one's; the request that completes the next batch (the last handed to the batcher) is the
one the learner waited for, so the cycle's critical path runs through its actor:

    batch released -> infer call -> actions out -> reply handed to the streams -> that
    stream's thread woke -> reply yielded to gRPC -> the actor has its actions -> envs
    stepped -> request on the stream's queue -> the learner took it off the stream ->
    decoded -> handed to the batcher -> next batch released

Its 12 segments (:data:`SEGMENTS`) are differences of consecutive stamps, so in a matched
cycle they add up to the cycle; the summary prints that check, and beside it the mean interval
of every batch in the window, matched or not, to show how typical the matched cycles are.
Off that path: how long the first request of a batch waited for the last (gathering), the
inference thread's unroll bookkeeping after the reply, and how much of it ran while the
actors simulated, on cores they share.

Requests are matched to actor steps per stream (its first env id) and in time: a request
belongs to the stream's last step put before the learner took it off the stream, which in
lock-step is unique. Batches before ``skip_first`` and after ``skip_last`` (fractions of the
recorded batches: warm-up, tracing, the stop) are left out, as is any cycle that is not
lock-step (a partial batch after a timeout, a reconnect) or whose stamps are incomplete or
out of order; the summary counts them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from seed.metrics import timeline as rec
from seed.results.files import ResultsError


class TimelineError(ResultsError):
    """A run directory's timeline is missing, foreign or damaged; the message is one line."""


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

#: What :func:`write_summary` writes into the run directory (the report reads it).
SUMMARY_FILE = "timeline.json"

_LEARNER_ARRAYS = ("request_index", "request_t", "request_actor", "request_key",
                   "request_batch", "batch_index", "batch_t", "batch_rows")
_ACTOR_ARRAYS = ("step_index", "step_t", "step_key")


# -- reading ------------------------------------------------------------------------------

def _load(path: Path, kind: str, arrays: tuple[str, ...]) -> tuple[dict, dict]:
    """(meta, arrays) of a timeline file, or TimelineError naming it and what is wrong."""
    if not path.is_file():
        raise TimelineError(f"{path}: missing (record a timeline with "
                            "--set transport.timeline=true; SEED runs only)")
    try:
        with np.load(path, allow_pickle=False) as f:
            data = {k: f[k] for k in f.files}
    except Exception as e:  # not a zip, truncated, pickled objects
        raise TimelineError(f"{path}: not a SEED timeline ({type(e).__name__}: {e})") from None
    found = str(data["kind"]) if "kind" in data else None
    if found != kind:
        raise TimelineError(f"{path}: not a SEED timeline file of kind {kind} "
                            f"(kind: {found})")
    if "format" not in data or int(data["format"]) != rec.FORMAT:
        raise TimelineError(f"{path}: timeline format {data.get('format')} is not "
                            f"{rec.FORMAT}, the one this version reads")
    missing = [k for k in arrays + ("meta",) if k not in data]
    if missing:
        raise TimelineError(f"{path}: damaged timeline: no {', '.join(missing)}")
    try:
        meta = json.loads(str(data["meta"]))
    except ValueError as e:
        raise TimelineError(f"{path}: damaged timeline: meta is not JSON ({e})") from None
    return meta, {k: data[k] for k in arrays}


def load(run_dir) -> tuple[dict, dict, list[tuple[dict, dict]]]:
    """(learner meta, learner arrays, [(actor meta, actor arrays)]) of ``run_dir``."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise TimelineError(f"{run_dir}: not a run directory")
    meta, learner = _load(run_dir / rec.LEARNER_FILE, "seed-timeline-learner", _LEARNER_ARRAYS)
    actor_paths = sorted(run_dir.glob(rec.ACTOR_FILE.format(task="*")))
    if not actor_paths:
        raise TimelineError(f"{run_dir}: no {rec.ACTOR_FILE.format(task='<task>')} beside "
                            f"{rec.LEARNER_FILE} (an actor writes one when it stops, into "
                            "the run directory of its own host)")
    actors = [_load(p, "seed-timeline-actor", _ACTOR_ARRAYS) for p in actor_paths]
    missing = sorted(set(int(a) for a in np.unique(learner["request_actor"]) if a >= 0)
                     - {int(m["task"]) for m, _ in actors})
    if missing:
        names = ", ".join(rec.ACTOR_FILE.format(task=t) for t in missing)
        raise TimelineError(f"{run_dir}: no {names}, though the learner served "
                            f"actor{'s' if len(missing) > 1 else ''} "
                            f"{', '.join(map(str, missing))} (an actor writes its file when "
                            "its stream ends; one killed before that writes none)")
    return meta, learner, actors


# -- matching -----------------------------------------------------------------------------

def _stats(values) -> dict:
    """mean, p50, p90 (ms) of seconds ``values``."""
    v = np.asarray(values, float) * 1000.0
    if not v.size:
        return {"mean_ms": None, "p50_ms": None, "p90_ms": None}
    return {"mean_ms": float(v.mean()), "p50_ms": float(np.percentile(v, 50)),
            "p90_ms": float(np.percentile(v, 90))}


def _overlap(a0, a1, b0, b1) -> float:
    return max(0.0, min(a1, b1) - max(a0, b0))


class _ActorSteps:
    """Every actor's steps, per stream key, ordered by the time their request was put."""

    def __init__(self, actors: list[tuple[dict, dict]]):
        keys, t, task = [], [], []
        for meta, a in actors:
            keys.append(a["step_key"])
            t.append(a["step_t"])
            task.append(np.full(len(a["step_key"]), int(meta.get("task", -1))))
        keys, t, task = np.concatenate(keys), np.concatenate(t), np.concatenate(task)
        self.by_key = {}
        for k in np.unique(keys):
            sel = np.flatnonzero(keys == k)
            order = sel[np.argsort(t[sel, 2], kind="stable")]
            self.by_key[int(k)] = (t[order, 2], t[order], task[order])

    def step_for(self, key: int, t_in: float):
        """(received, stepped, put, task) of the step whose request the learner took off the
        stream at ``t_in``: the stream's last put before then; None if there is none."""
        found = self.by_key.get(key)
        if found is None:
            return None
        put, t, task = found
        j = int(np.searchsorted(put, t_in, side="right")) - 1
        if j < 0:
            return None
        return t[j, 0], t[j, 1], t[j, 2], int(task[j])


def _window(n: int, skip_first: float, skip_last: float) -> tuple[int, int]:
    if not (0 <= skip_first < 1 and 0 <= skip_last < 1 and skip_first + skip_last < 1):
        raise ValueError("skip_first and skip_last are fractions that leave some batches")
    return math.ceil(n * skip_first), n - math.ceil(n * skip_last)


def analyse(run_dir, skip_first: float = 0.1, skip_last: float = 0.05) -> dict:
    """The summary of ``run_dir``'s timeline (what ``timeline.json`` holds)."""
    meta, L, actors = load(run_dir)
    if not meta.get("lockstep"):
        raise TimelineError(
            f"{run_dir}: the run was not lock-step (actor_splits {meta.get('actor_splits')}, "
            f"inference batch {meta.get('inference_batch_size')} of "
            f"{meta.get('actors', 0) * meta.get('envs_per_actor', 0)} envs); "
            "seed timeline reads lock-step cycles only")
    streams = int(meta["actors"]) * int(meta.get("actor_splits", 1))
    steps = _ActorSteps(actors)

    req_t, req_key, req_batch = L["request_t"], L["request_key"], L["request_batch"]
    # the request before each one on its stream (-1: none recorded)
    prev = np.full(len(req_key), -1)
    for k in np.unique(req_key):
        sel = np.flatnonzero(req_key == k)
        order = sel[np.argsort(req_t[sel, rec.IN], kind="stable")]
        prev[order[1:]] = order[:-1]
    in_batch: dict[int, list[int]] = {}
    for i, b in enumerate(req_batch.tolist()):
        if b >= 0:
            in_batch.setdefault(b, []).append(i)

    batch_index, batch_t = L["batch_index"], L["batch_t"]
    lo, hi = _window(len(batch_index), skip_first, skip_last)
    skipped = {"not lock-step": 0, "incomplete stamps": 0, "no actor step": 0,
               "out of order": 0}
    segs, intervals, off, critical_tasks = [], [], {name: [] for name, _ in OFF_PATH}, []
    during = []  # per cycle: the post-reply bookkeeping that ran in each segment's span
    rows = []
    for pos in range(lo, hi - 1):
        b, nxt = int(batch_index[pos]), int(batch_index[pos + 1])
        mine, theirs = in_batch.get(b, []), in_batch.get(nxt, [])
        if nxt != b + 1 or len(mine) != streams or len(theirs) != streams or \
                len({int(req_key[i]) for i in theirs}) != streams or \
                any(prev[i] not in mine for i in theirs):
            skipped["not lock-step"] += 1
            continue
        submitted = req_t[theirs, rec.SUBMITTED]
        if not np.isfinite(submitted).all():
            skipped["incomplete stamps"] += 1
            continue
        c = theirs[int(np.argmax(submitted))]  # the request the next batch waited for
        p = prev[c]
        found = {i: steps.step_for(int(req_key[i]), req_t[i, rec.IN]) for i in theirs}
        if any(s is None for s in found.values()):
            skipped["no actor step"] += 1
            continue
        received, stepped, put, task = found[c]
        wake, infer0, infer1, reply, replied, done = batch_t[pos]
        chain = np.array([wake, infer0, infer1, reply, req_t[p, rec.WOKEN],
                          req_t[p, rec.YIELDED], received, stepped, put, req_t[c, rec.IN],
                          req_t[c, rec.DECODED], req_t[c, rec.SUBMITTED],
                          batch_t[pos + 1, 0]])
        if not np.isfinite(chain).all() or not np.isfinite(batch_t[pos]).all():
            skipped["incomplete stamps"] += 1
            continue
        d = np.diff(chain)
        if (d < 0).any():  # a stamp before the one it follows: a mismatch, never a cycle
            skipped["out of order"] += 1
            continue
        segs.append(d)
        intervals.append(chain[-1] - chain[0])
        critical_tasks.append(task)
        ins = req_t[theirs, rec.IN]
        off["gathering"].append(ins.max() - ins.min())
        off["post-reply bookkeeping"].append(done - replied)
        off["bookkeeping during sim"].append(_overlap(replied, done, received, stepped))
        during.append([_overlap(replied, done, chain[i], chain[i + 1])
                       for i in range(len(SEGMENTS))])
        off["inference thread busy"].append(done - wake)
        off["sim, every actor"].extend(s[1] - s[0] for s in found.values())
        rows.append(float(L["batch_rows"][pos]))

    if not segs:
        raise TimelineError(
            f"{run_dir}: no lock-step cycle matched in batches {lo}..{hi} of "
            f"{len(batch_index)} (skipped: "
            + ", ".join(f"{k} {v}" for k, v in skipped.items()) + ")")
    segs = np.array(segs)
    intervals = np.array(intervals)
    frames_per_step = int(meta.get("frames_per_step", 1))
    window = batch_t[lo:hi, 0]
    whole = float(np.diff(window).mean()) if len(window) > 1 else float("nan")
    sums = segs.sum(axis=1)
    tasks, counts = np.unique(critical_tasks, return_counts=True)
    return {
        "run_dir": str(run_dir),
        "schedule": {k: meta.get(k) for k in ("actors", "envs_per_actor", "actor_splits",
                                               "inference_batch_size", "train",
                                               "frames_per_step")},
        "cores": meta.get("cores"),
        "batches_recorded": int(len(batch_index)),
        "window": {"first": lo, "end": hi, "skip_first": skip_first, "skip_last": skip_last},
        "cycles": int(len(segs)), "skipped": skipped,
        "interval": _stats(intervals),
        "interval_all_window_ms": whole * 1000.0,
        "frames_per_s": float(np.mean(rows)) * frames_per_step / float(intervals.mean()),
        "segments": [{"name": name, "what": what, **_stats(segs[:, i])}
                     for i, (name, what) in enumerate(SEGMENTS)],
        "check": {"sum_of_segments_ms": float(sums.mean() * 1000.0),
                  "interval_ms": float(intervals.mean() * 1000.0),
                  "max_abs_difference_ms": float(np.abs(sums - intervals).max() * 1000.0)},
        "off_path": [{"name": name, "what": what, **_stats(off[name])}
                     for name, what in OFF_PATH],
        # mean ms of post-reply bookkeeping that ran within each critical-path segment
        "bookkeeping_during_ms": {name: float(v * 1000.0) for (name, _), v in
                                  zip(SEGMENTS, np.mean(during, axis=0))},
        "critical_actor_share": {int(t): float(n / len(segs)) for t, n in zip(tasks, counts)},
    }


# -- output -------------------------------------------------------------------------------

def _ms(v) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3f}"


def format_summary(s: dict) -> str:
    sch = s["schedule"]
    iv = s["interval"]
    lines = [
        f"timeline of {s['run_dir']}: {sch['actors']} actors x {sch['envs_per_actor']} envs, "
        f"lock-step, {'train' if sch.get('train') else 'serve'} mode; {s['cycles']} cycles of "
        f"{s['batches_recorded']} batches recorded (left out: first "
        f"{s['window']['first']} and last {s['batches_recorded'] - s['window']['end']} "
        "batches, " + ", ".join(f"{v} {k}" for k, v in s["skipped"].items()) + ")",
        f"batch-to-batch interval: mean {_ms(iv['mean_ms'])} ms, p50 {_ms(iv['p50_ms'])}, "
        f"p90 {_ms(iv['p90_ms'])} ({s['frames_per_s']:,.0f} frames/s at that rate)",
        "",
        "critical path (batch released -> the next, through the actor whose request came "
        "last), ms:",
        f"  {'segment':<24}{'mean':>9}{'p50':>9}{'p90':>9}{'share':>7}  spans",
    ]
    total = s["check"]["interval_ms"]
    for seg in s["segments"]:
        share = 100.0 * seg["mean_ms"] / total if total else float("nan")
        lines.append(f"  {seg['name']:<24}{_ms(seg['mean_ms']):>9}{_ms(seg['p50_ms']):>9}"
                     f"{_ms(seg['p90_ms']):>9}{share:>6.1f}%  {seg['what']}")
    c = s["check"]
    lines += [
        f"  {'sum':<24}{_ms(c['sum_of_segments_ms']):>9}",
        f"check: the segments add up to {_ms(c['sum_of_segments_ms'])} ms, the interval of "
        f"the same cycles is {_ms(c['interval_ms'])} ms (largest difference in one cycle "
        f"{_ms(c['max_abs_difference_ms'])} ms); every batch of the window, matched or not: "
        f"{_ms(s['interval_all_window_ms'])} ms",
        "",
        "off the critical path, ms:",
    ]
    for o in s["off_path"]:
        lines.append(f"  {o['name']:<24}{_ms(o['mean_ms']):>9}{_ms(o['p50_ms']):>9}"
                     f"{_ms(o['p90_ms']):>9}         {o['what']}")
    off = {o["name"]: o for o in s["off_path"]}
    book = off["post-reply bookkeeping"]["mean_ms"]
    during = off["bookkeeping during sim"]["mean_ms"]
    sim = next(seg for seg in s["segments"] if seg["name"] == "actor sim")["mean_ms"]
    cores, busy = s.get("cores"), sch["actors"] + 1
    contention = (f"{busy} threads on {cores} cores: they take turns" if cores and busy > cores
                  else f"{busy} threads on {cores or '?'} cores")
    spans = ", ".join(f"{name} {_ms(v)}" for name, v in s["bookkeeping_during_ms"].items()
                      if v >= 0.0005)
    lines += [
        f"the learner's post-reply work, {_ms(book)} ms a cycle on its inference thread, is "
        "off the critical path but competes with it for CPU (and for the GIL within the "
        f"learner); it ran during (ms a cycle): {spans or 'none'}",
        f"of it, {_ms(during)} ms fell in the critical actor's {_ms(sim)} ms of simulation, "
        f"when {sch['actors']} actors and the learner's inference thread want a core at once "
        f"({contention})"]
    share = ", ".join(f"actor {t} {100 * v:.0f}%"
                      for t, v in sorted(s["critical_actor_share"].items()))
    lines.append(f"whose request came last (critical actor): {share}")
    return "\n".join(lines)


def write_summary(run_dir, summary: dict) -> Path:
    path = Path(run_dir) / SUMMARY_FILE
    path.write_text(json.dumps(summary, indent=2))
    return path
