"""A run's critic judged against a goal's bounds (``results/references.yaml``: a goal's
``critic``): the value's explained variance above one figure and the dead share of the torso's
output layer below another, from ``after_frames`` on to the run's end.

**How "held" is judged.** A metrics row's ``explained_variance`` is the mean over one log
interval's few train steps, and it is very noisy: in seekavoid_arena_01's layer-normalised
run, rows a few thousand frames apart swing between -0.9 and +0.7 while the median over 50K
frames moves smoothly, and the first rows after a resume can read -50. So the rows from
``after_frames`` on are cut into windows of :data:`WINDOW_FRAMES` env frames, and each window
is judged by the median of its rows (explained variance above the bound, dead share below
its bound). The critic *held* when every judged window did; it *failed* at the first window
that did not. The window is 0.5M frames, not 50K: a median over 50K frames (some 30 rows at
the pace of that run) still moves by about 0.1 from noise alone, so over the 19 windows of
a 10M-frame run a healthy critic would dip under a bound somewhere by chance; over 0.5M (some
300 rows) that noise is a third as large, and a lasting fall still fails its window. A
trailing window spanning less than half of one is joined to the window before it (a run
stopped within a quarter million frames of ``after_frames`` has none: its window says how
the critic stands so far, and is not judged yet), and a window with fewer than
:data:`MIN_ROWS` values of a quantity is not judged on it (too few to take a median of).

**Consistent with critic_watch.** :mod:`seed.metrics.critic_watch` says a critic has
*collapsed* on a sharper sign that needs fewer rows (five in a row with the explained
variance within +-0.01 of zero, or more than 0.7 of the layer dead); a goal's bounds ask more
of a critic than not having collapsed. The two agree: the dead share is read from the same
column (:func:`seed.metrics.critic_watch.output_layer_column`), and a run whose
``critic_collapsed`` column turned 1 at or after ``after_frames`` has failed, whatever its
windows' medians (a short collapse inside a window cannot hide in its median). A flag raised
before ``after_frames`` is not held against the span judged (the flag stays 1 once raised,
recovered or not).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from seed.metrics.critic_watch import COLUMN as COLLAPSED
from seed.metrics.critic_watch import output_layer_column

WINDOW_FRAMES = 500_000
MIN_ROWS = 5
EV = "explained_variance"


@dataclasses.dataclass(frozen=True)
class CriticBounds:
    """What a goal asks of the critic; a bound that is None is not asked."""
    after_frames: int
    explained_variance_above: float | None = None
    dead_share_below: float | None = None


@dataclasses.dataclass(frozen=True)
class Window:
    """A span of a run's rows, ``start`` <= env_frames < ``end`` (``end``: the next window's
    start, or just past the run's last row for the last window), and the medians of its rows
    (None: fewer than :data:`MIN_ROWS` values). ``short``: a run's only window, spanning
    less than half of one (the run stopped soon after ``after_frames``): its medians say how
    the critic stands so far, and are not judged."""
    start: int
    end: int
    explained_variance: float | None
    dead_share: float | None
    short: bool = False

    def broken(self, bounds: CriticBounds) -> list[str]:
        """The quantities of this window that break ``bounds``: ``explained variance``,
        ``dead share``; none for a short window."""
        out = []
        if self.short:
            return out
        if (bounds.explained_variance_above is not None and self.explained_variance is not None
                and not self.explained_variance > bounds.explained_variance_above):
            out.append("explained variance")
        if (bounds.dead_share_below is not None and self.dead_share is not None
                and not self.dead_share < bounds.dead_share_below):
            out.append("dead share")
        return out

    @property
    def judged(self) -> bool:
        return not self.short and (self.explained_variance is not None
                                   or self.dead_share is not None)


@dataclasses.dataclass(frozen=True)
class CriticVerdict:
    """``kind``: ``held`` (every judged window within the bounds, to the run's last row),
    ``failed`` (at ``failed_at`` frames: the first window out of bounds, or the collapse
    flag), ``not yet`` (nothing judged: the run stopped too soon) or ``not recorded`` (the
    run logged no value of a bounded quantity)."""
    kind: str
    windows: list[Window]
    dead_column: str | None
    last_frames: int
    failed_at: int | None = None
    failed_window: Window | None = None
    broken: tuple[str, ...] = ()  # what failed_window broke (Window.broken)
    collapsed_at: int | None = None


def dead_column(metrics: pd.DataFrame) -> str | None:
    """The ``dead_relu_*`` column of the run's torso output layer, as critic_watch picks it."""
    return output_layer_column(c for c in metrics.columns if c.startswith("dead_relu_"))


def _values(metrics: pd.DataFrame, column: str | None) -> pd.Series:
    if column is None or column not in metrics.columns:
        return pd.Series(np.nan, index=metrics.index)
    return pd.to_numeric(metrics[column], errors="coerce")


def collapsed_at(metrics: pd.DataFrame) -> int | None:
    """The frames of the first row whose ``critic_collapsed`` is 1; None if none is."""
    flagged = metrics["env_frames"][_values(metrics, COLLAPSED) == 1]
    return int(flagged.min()) if len(flagged) else None


def _median(values: pd.Series, min_rows: int) -> float | None:
    values = values.dropna()
    return float(values.median()) if len(values) >= min_rows else None


def windows(metrics: pd.DataFrame, after_frames: int, dead: str | None,
            width: int = WINDOW_FRAMES, min_rows: int = MIN_ROWS) -> list[Window]:
    """The rows from ``after_frames`` on in windows of ``width`` frames, each with the
    median explained variance and dead share (column ``dead``) of its rows (None with fewer
    than ``min_rows`` values); a last window spanning less than half of one is joined to the
    one before it, or marked ``short`` where there is none before it."""
    frames = metrics["env_frames"].to_numpy(np.int64)
    rows = frames >= after_frames
    if not rows.any():
        return []
    index = (frames[rows] - after_frames) // width
    last = int(index.max())
    brief = frames[rows].max() - (after_frames + last * width) < width // 2
    short = brief and last == 0  # nothing before it to join
    if brief and last > 0:
        index[index == last] = last = last - 1
    ev, dead_share = _values(metrics, EV)[rows], _values(metrics, dead)[rows]
    out = []
    for k in np.unique(index):
        mine = index == k
        end = after_frames + (k + 1) * width if k < last else int(frames[rows].max()) + 1
        out.append(Window(int(after_frames + k * width), int(end),
                          _median(ev[mine], min_rows), _median(dead_share[mine], min_rows),
                          short=bool(short)))
    return out


def judge(metrics: pd.DataFrame, bounds: CriticBounds) -> CriticVerdict:
    """The run's critic against ``bounds`` (the module's docstring says how)."""
    dead = dead_column(metrics)
    last_frames = int(metrics["env_frames"].max())
    flag = collapsed_at(metrics)
    found = windows(metrics, bounds.after_frames, dead)
    base = dict(windows=found, dead_column=dead, last_frames=last_frames, collapsed_at=flag)
    asked = [(bounds.explained_variance_above, EV), (bounds.dead_share_below, dead)]
    if any(b is not None and not _values(metrics, c).notna().any() for b, c in asked):
        return CriticVerdict("not recorded", **base)
    bad = next((w for w in found if w.broken(bounds)), None)
    flag = flag if flag is not None and flag >= bounds.after_frames else None
    if bad is not None and (flag is None or bad.start <= flag):
        return CriticVerdict("failed", failed_at=bad.start, failed_window=bad,
                             broken=tuple(bad.broken(bounds)), **base)
    if flag is not None:
        return CriticVerdict("failed", failed_at=flag, **base)
    return CriticVerdict("held" if any(w.judged for w in found) else "not yet", **base)


def goal_kind(return_kind: str, verdict: CriticVerdict) -> str:
    """A goal's outcome for a run (``met``, ``missed``, ``open``) from its return's
    (:func:`seed.results.curves.goal_outcome`) and its critic's: a critic that failed, or
    whose quantities were never recorded, misses the goal whatever the return; a return met
    with a critic not judged yet leaves it open."""
    if verdict.kind in ("failed", "not recorded"):
        return "missed"
    if return_kind == "met" and verdict.kind != "held":
        return "open"
    return return_kind
