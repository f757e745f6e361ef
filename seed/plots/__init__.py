"""Every figure of the suite, in one importable place: the notebooks (``make plots``),
``make demo`` / ``make compare-<benchmark>`` and ``seed compare --sweep-network`` all draw
through here.

* :mod:`seed.plots.learning`: reward curves against env frames and against wall time
  (:func:`~seed.plots.learning.reward_figure`) and the learning diagnostics
  (:func:`~seed.plots.learning.diagnostics_figure`).
* :mod:`seed.plots.throughput`: the SEED/IMPALA throughput ratio of every compare at a
  glance (:func:`~seed.plots.throughput.ratio_figure`), steady frames/s per run, frames/s
  over time, the model-size sweep and the fraction of the roofline ceiling.
* :mod:`seed.plots.compare`: the figure of one ``seed compare`` directory, its
  ``compare.png`` (``python -m seed.plots.compare DIR``).

The data come from :mod:`seed.results`. Figures are built on matplotlib's object interface
(:class:`matplotlib.figure.Figure`: no pyplot state, no display), returned to the caller
and written with :func:`save`. A figure function given nothing it can draw raises
:class:`PlotError`, whose message is one line saying what is missing.
"""

from __future__ import annotations

from pathlib import Path

COLORS = {"seed": "tab:blue", "impala": "tab:orange"}
#: Colours for the settings of an architecture that has several in one figure: none of
#: COLORS, so no setting is drawn in another architecture's colour.
SPARE_COLORS = ["tab:green", "tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan",
                "tab:red", "tab:gray"]


class PlotError(ValueError):
    """Nothing to draw from what was given; the message is one line."""


def figure(rows: int = 1, cols: int = 1, size: tuple[float, float] = (6.4, 4.0), **kwargs):
    """A new figure and its axes as a 2-D array (``squeeze=False``), laid out by
    matplotlib's constrained layout so titles and labels never overlap."""
    from matplotlib.figure import Figure
    fig = Figure(figsize=size, layout="constrained")
    return fig, fig.subplots(rows, cols, squeeze=False, **kwargs)


def save(fig, path, dpi: int = 110) -> Path:
    """Write ``fig`` as a PNG (folders made as needed); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    return path


def file_name(name) -> str:
    """``name`` with every character a file name should not hold replaced by ``_``."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in str(name))


def frames_label(frames_per_step) -> str:
    """Axis words for env frames, saying what a frame is for the runs shown (their
    ``frames_per_step`` values)."""
    units = sorted({int(u) for u in frames_per_step})
    if units == [1]:
        return "env frames (= env steps: 1 frame per step)"
    if len(units) == 1:
        return f"env frames (emulator frames = env steps x {units[0]})"
    return "env frames (emulator frames = env steps x frame skip)"
