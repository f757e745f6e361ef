"""``seed timeline RUN_DIR``: where each cycle of a lock-step SEED run goes.

Reads what a run recorded with ``timeline: true`` (:mod:`seed.metrics.timeline`):
the learner's stamps per request and per batch, and each actor's per env-group step. In
lock-step (one stream per actor, one batch of every env) every batch holds one request of
each actor. A *cycle* runs from one batch's release to the inference thread to the next
one's; the request that completes the next batch (the last handed to the batcher) is the
one the learner waited for, so the cycle's critical path runs through its actor:

    batch released -> infer call -> actions out -> reply handed to the streams -> that
    stream's thread woke -> reply yielded to gRPC -> the actor has its actions -> envs
    stepped -> request on the stream's queue -> the learner took it off the stream ->
    decoded -> handed to the batcher -> next batch released

Its 12 segments (:data:`seed.results.timeline.SEGMENTS`, each between the two stamps
:data:`SPANS` names) are differences of consecutive stamps, so in a matched
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
from seed.results.timeline import OFF_PATH, SEGMENTS, Spread, Timeline


class TimelineError(ResultsError):
    """A run directory's timeline is missing, foreign or damaged; the message is one line."""


#: Each critical-path segment (:data:`SEGMENTS`, in order) as the two stamps it runs between;
#: each starts at the stamp the one before it ends at, so a cycle's segments add up to it.
SPANS = {
    "pre-inference": ("batch released", "infer called"),
    "inference": ("infer called", "infer returned"),
    "post-inference": ("infer returned", "reply handed over"),
    "reply hand-off": ("reply handed over", "stream woke"),
    "reply encode": ("stream woke", "reply yielded"),
    "reply transit": ("reply yielded", "actor received"),
    "actor sim": ("actor received", "actor stepped"),
    "actor encode+send": ("actor stepped", "request put"),
    "request transit": ("request put", "request in"),
    "decode": ("request in", "request decoded"),
    "pre-submit": ("request decoded", "request submitted"),
    "batcher wake-up": ("request submitted", "next batch released"),
}

_LEARNER_ARRAYS = ("request_index", "request_t", "request_actor", "request_key",
                   "request_batch", "batch_index", "batch_t", "batch_rows")
_ACTOR_ARRAYS = ("step_index", "step_t", "step_key")


# -- reading ------------------------------------------------------------------------------

def _load(path: Path, kind: str, arrays: tuple[str, ...]) -> tuple[dict, dict]:
    """(meta, arrays) of a timeline file, or TimelineError naming it and what is wrong."""
    if not path.is_file():
        raise TimelineError(f"{path}: missing (record a timeline with "
                            "--set timeline=true; SEED runs only)")
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

def _spread(values) -> Spread:
    """mean, p50, p90 (ms) of seconds ``values``."""
    v = np.asarray(values, float) * 1000.0
    if not v.size:
        return Spread(None)
    return Spread(float(v.mean()), float(np.percentile(v, 50)), float(np.percentile(v, 90)))


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


class _Requests:
    """The learner's requests: their stamps (``t``, one column per
    :data:`seed.metrics.timeline.REQUEST_FIELDS`), stream keys, each one's predecessor on
    its stream (-1: none recorded) and the requests of each batch."""

    def __init__(self, learner: dict):
        self.t, self.key = learner["request_t"], learner["request_key"]
        self.previous = np.full(len(self.key), -1)
        for k in np.unique(self.key):
            sel = np.flatnonzero(self.key == k)
            order = sel[np.argsort(self.t[sel, rec.IN], kind="stable")]
            self.previous[order[1:]] = order[:-1]
        self.of_batch: dict[int, list[int]] = {}
        for i, b in enumerate(learner["request_batch"].tolist()):
            if b >= 0:
                self.of_batch.setdefault(b, []).append(i)

    def lockstep(self, batch: int, following: int, streams: int) -> bool:
        """Whether ``following`` is the next batch and each holds one request of every
        stream, the second's each following one of the first's."""
        mine, theirs = self.of_batch.get(batch, []), self.of_batch.get(following, [])
        return (following == batch + 1 and len(mine) == streams and len(theirs) == streams
                and len({int(self.key[i]) for i in theirs}) == streams
                and all(self.previous[i] in mine for i in theirs))


class _Cycle:
    """One matched cycle: its segments (seconds, in :data:`SEGMENTS` order), its critical
    actor, what ran off the critical path, the env rows of its batch."""

    def __init__(self, stamps: dict, batch_stamps, task: int, ins, sims, rows: float):
        wake, _, _, _, replied, done = batch_stamps
        bounds = [(stamps[a], stamps[b]) for a, b in (SPANS[name] for name, _ in SEGMENTS)]
        self.segments = np.array([b - a for a, b in bounds])
        self.interval = stamps["next batch released"] - stamps["batch released"]
        self.task, self.rows = task, rows
        self.off = {"gathering": [ins.max() - ins.min()],
                    "post-reply bookkeeping": [done - replied],
                    "bookkeeping during sim": [_overlap(replied, done, stamps["actor received"],
                                                        stamps["actor stepped"])],
                    "inference thread busy": [done - wake], "sim, every actor": sims}
        self.during = [_overlap(replied, done, a, b) for a, b in bounds]


def _cycle(pos: int, learner: dict, requests: _Requests, steps: _ActorSteps,
           streams: int) -> _Cycle | str:
    """The cycle from the batch at ``pos`` to the next, or why it is skipped."""
    batch_index, batch_t = learner["batch_index"], learner["batch_t"]
    b, following = int(batch_index[pos]), int(batch_index[pos + 1])
    if not requests.lockstep(b, following, streams):
        return "not lock-step"
    theirs, t = requests.of_batch[following], requests.t
    submitted = t[theirs, rec.SUBMITTED]
    if not np.isfinite(submitted).all():
        return "incomplete stamps"
    c = theirs[int(np.argmax(submitted))]  # the request the next batch waited for
    p = requests.previous[c]
    found = {i: steps.step_for(int(requests.key[i]), t[i, rec.IN]) for i in theirs}
    if any(s is None for s in found.values()):
        return "no actor step"
    received, stepped, put, task = found[c]
    stamps = dict(zip(("batch released", "infer called", "infer returned",
                       "reply handed over"), batch_t[pos][:4]))
    stamps.update({"stream woke": t[p, rec.WOKEN], "reply yielded": t[p, rec.YIELDED],
                   "actor received": received, "actor stepped": stepped, "request put": put,
                   "request in": t[c, rec.IN], "request decoded": t[c, rec.DECODED],
                   "request submitted": t[c, rec.SUBMITTED],
                   "next batch released": batch_t[pos + 1, 0]})
    if not np.isfinite(list(stamps.values())).all() or not np.isfinite(batch_t[pos]).all():
        return "incomplete stamps"
    cycle = _Cycle(stamps, batch_t[pos], task, t[theirs, rec.IN],
                   [s[1] - s[0] for s in found.values()], float(learner["batch_rows"][pos]))
    if (cycle.segments < 0).any():  # a stamp before the one it follows: a mismatch
        return "out of order"
    return cycle


def _window(n: int, skip_first: float, skip_last: float) -> tuple[int, int]:
    if not (0 <= skip_first < 1 and 0 <= skip_last < 1 and skip_first + skip_last < 1):
        raise ValueError("skip_first and skip_last are fractions that leave some batches")
    return math.ceil(n * skip_first), n - math.ceil(n * skip_last)


def _check_lockstep(run_dir, meta: dict) -> None:
    if not meta.get("lockstep"):
        raise TimelineError(
            f"{run_dir}: the run was not lock-step (actor_splits {meta.get('actor_splits')}, "
            f"inference batch {meta.get('inference_batch_size')} of "
            f"{meta.get('actors', 0) * meta.get('envs_per_actor', 0)} envs); "
            "seed timeline reads lock-step cycles only")


def analyse(run_dir, skip_first: float = 0.1, skip_last: float = 0.05) -> Timeline:
    """The summary of ``run_dir``'s timeline (what ``timeline.json`` holds)."""
    meta, learner, actors = load(run_dir)
    _check_lockstep(run_dir, meta)
    streams = int(meta["actors"]) * int(meta.get("actor_splits", 1))
    requests, steps = _Requests(learner), _ActorSteps(actors)
    n = len(learner["batch_index"])
    lo, hi = _window(n, skip_first, skip_last)
    skipped = {"not lock-step": 0, "incomplete stamps": 0, "no actor step": 0,
               "out of order": 0}
    cycles = []
    for pos in range(lo, hi - 1):
        found = _cycle(pos, learner, requests, steps, streams)
        if isinstance(found, str):
            skipped[found] += 1
        else:
            cycles.append(found)
    if not cycles:
        raise TimelineError(
            f"{run_dir}: no lock-step cycle matched in batches {lo}..{hi} of {n} (skipped: "
            + ", ".join(f"{k} {v}" for k, v in skipped.items()) + ")")
    window = learner["batch_t"][lo:hi, 0]
    return _summary(run_dir, meta, cycles, skipped, n, {
        "first": lo, "end": hi, "skip_first": skip_first, "skip_last": skip_last},
        float(np.diff(window).mean()) * 1000.0 if len(window) > 1 else float("nan"))


def _summary(run_dir, meta: dict, cycles: list[_Cycle], skipped: dict, batches: int,
             window: dict, all_window_ms: float) -> Timeline:
    segments = np.array([c.segments for c in cycles])
    intervals = np.array([c.interval for c in cycles])
    sums = segments.sum(axis=1)
    tasks, counts = np.unique([c.task for c in cycles], return_counts=True)
    frames_per_step = int(meta.get("frames_per_step", 1))
    return Timeline(
        run_dir=str(run_dir),
        schedule={k: meta.get(k) for k in ("actors", "envs_per_actor", "actor_splits",
                                           "inference_batch_size", "train", "frames_per_step")},
        cores=meta.get("cores"), batches_recorded=batches, window=window,
        cycles=len(cycles), skipped=skipped, interval=_spread(intervals),
        interval_all_window_ms=all_window_ms,
        frames_per_s=float(np.mean([c.rows for c in cycles])) * frames_per_step
        / float(intervals.mean()),
        segments={name: _spread(segments[:, i]) for i, (name, _) in enumerate(SEGMENTS)},
        check={"sum_of_segments_ms": float(sums.mean() * 1000.0),
               "interval_ms": float(intervals.mean() * 1000.0),
               "max_abs_difference_ms": float(np.abs(sums - intervals).max() * 1000.0)},
        off_path={name: _spread([v for c in cycles for v in c.off[name]])
                  for name, _ in OFF_PATH},
        # mean ms of post-reply bookkeeping that ran within each critical-path segment
        bookkeeping_during_ms={name: float(v * 1000.0) for (name, _), v in
                               zip(SEGMENTS, np.mean([c.during for c in cycles], axis=0))},
        critical_actor_share={int(t): float(k / len(cycles)) for t, k in zip(tasks, counts)})
