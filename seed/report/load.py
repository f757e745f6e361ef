"""What the report says of the foreign load behind a figure (``foreign_cpu``: the share of the
machine's CPU used outside a run's process tree, per metrics row): a run's mean and max, and
whether the runs behind a wall time or a frames/s were loaded."""

from __future__ import annotations

import pandas as pd

from seed.results.compare import Compare
from seed.results.tables import compare_loads, foreign_load

#: A wall time or frames/s read over metrics rows whose mean foreign load is above this share
#: is marked "loaded" wherever the report prints it: half a core of a 2-core machine.
LOADED = 0.25

#: What the "foreign load" column of the compare tables says.
COMPARE_LOAD = ("foreign load = what the runs' record of the machine's CPU used outside "
                f"their process trees says of their frames/s: quiet (none above {LOADED:.0%}), "
                "loaded, or load not recorded (runs from before the record)")


def load_text(values: list) -> str:
    """What the foreign loads of the runs behind a figure say of it: "" when every run
    recorded its load and none was above :data:`LOADED`; else "loaded", "load not
    recorded", or the counts of each among several runs."""
    n = len(values)
    loaded = sum(v is not None and v > LOADED for v in values)
    unknown = sum(v is None for v in values)
    parts = []
    if loaded:
        parts.append("loaded" if n == 1 else f"{loaded} of {n} runs loaded")
    if unknown:
        parts.append("load not recorded" if unknown == n
                     else f"{unknown} of {n} runs load not recorded")
    return "; ".join(parts)


def marked(text: str, values: list) -> str:
    """``text`` with :func:`load_text` of ``values`` after it, in parentheses."""
    note = load_text(values)
    return f"{text} ({note})" if note else text


def quiet_or(values: list) -> str:
    """:func:`load_text` of ``values``, "quiet" where it says nothing (the compare tables'
    cell)."""
    return load_text(values) or "quiet"


def load_cell(metrics: pd.DataFrame) -> str:
    """A run's foreign load: its mean and max over the rows, "loaded" above :data:`LOADED`."""
    mean = foreign_load(metrics)
    if mean is None:
        return "not recorded"
    peak = float(pd.to_numeric(metrics["foreign_cpu"], errors="coerce").max())
    return f"{mean:.0%} mean, {peak:.0%} max" + (" (loaded)" if mean > LOADED else "")


def loads_by_compare(compares: list[Compare]) -> dict[str, list]:
    """{compare directory: [each run's foreign load, in its rows' order]}."""
    return {str(c.directory): compare_loads(c) for c in compares}


def loads_by_run(compares: list[Compare]) -> dict[tuple[str, str], float | None]:
    """{(compare directory, run): that run's foreign load}."""
    return {(str(c.directory), run): load
            for c in compares for run, load in zip(c.runs["run"], compare_loads(c))}
