"""Says, once, that a run's critic has collapsed, so nobody finds it hours later in a plot.

A critic has collapsed when, after the first ``AFTER_FRAMES`` frames, ``STREAK`` metrics rows
in a row show a value that explains nothing (``|explained_variance| <= EV_BAND``: it predicts
a constant) or a torso whose output layer is mostly dead (its ``dead_relu_*`` share above
``DEAD_SHARE``: the layer feeding the core or the heads, the last ReLU layer the network
records). DMLab's seekavoid runs before issue 32's fix showed both from 0.65M frames on.

:meth:`CriticWatch.check` takes each metrics row and gives the ``critic_collapsed`` column:
blank before it has anything to judge, 0, or 1 from the row where the streak completed on
(the run goes on). The first 1 is logged as one warning line.
"""

from __future__ import annotations

import logging
import math

log = logging.getLogger(__name__)

AFTER_FRAMES = 500_000
STREAK = 5
EV_BAND = 0.01
DEAD_SHARE = 0.7
COLUMN = "critic_collapsed"


def output_layer_column(relu_columns) -> str | None:
    """The ``dead_relu_<i>_<layer>`` column of the torso's output layer, the one judged for a
    dying torso: the last ReLU layer in call order (the largest ``i``); None without any.
    The report's goal reads the same column through this (:mod:`seed.results.critic`)."""
    columns = list(relu_columns)
    return max(columns, key=lambda c: int(c.split("_")[2])) if columns else None


def _number(value) -> float | None:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(value) else value


class CriticWatch:
    """Counts the rows in a row that look collapsed; see the module's docstring."""

    def __init__(self, relu_columns=()):
        self.dead_column = output_layer_column(relu_columns)
        self.streak = 0
        self.collapsed = False

    def check(self, row: dict) -> dict:
        """``{"critic_collapsed": ...}`` for this row (the row itself is not changed)."""
        if self.collapsed:
            return {COLUMN: 1}
        ev = _number(row.get("explained_variance"))
        dead = _number(row.get(self.dead_column)) if self.dead_column else None
        frames = _number(row.get("env_frames")) or 0
        if frames < AFTER_FRAMES or (ev is None and dead is None):
            return {COLUMN: None}
        flat = ev is not None and abs(ev) <= EV_BAND
        dying = dead is not None and dead > DEAD_SHARE
        self.streak = self.streak + 1 if (flat or dying) else 0
        if self.streak < STREAK:
            return {COLUMN: 0}
        self.collapsed = True
        why = []
        if flat:
            why.append(f"explained variance {ev:+.4f} within +-{EV_BAND}")
        if dying:
            why.append(f"{dead:.0%} of {self.dead_column.removeprefix('dead_relu_')} dead")
        log.warning("the critic has collapsed at %s frames: %s for %d log intervals in a row "
                    "(the run goes on; column %s of metrics.csv)", f"{int(frames):,}",
                    " and ".join(why), STREAK, COLUMN)
        return {COLUMN: 1}
