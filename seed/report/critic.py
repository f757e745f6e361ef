"""The critic in the report, for a benchmark whose goal bounds it (``goal: {..., critic:
{explained_variance_above, dead_share_below, after_frames}}`` in references.yaml): the goal's
critic part (:func:`goal_bounds`, :func:`bounds_words`, :func:`goal_rule`, :func:`goal_run`, which the learning
section's goal table calls) and the ``<benchmark> critic`` section: per run, whether its
critic held, when ``critic_collapsed`` first said so, the medians of each window judged, and
the figure of both against frames. How a critic is judged: :mod:`seed.results.critic`."""

from __future__ import annotations

from pathlib import Path

from seed.report.references import REFERENCES, ReportError
from seed.report.text import FIGURES, frames_text, heading, rel
from seed.results.critic import (
    COLLAPSED,
    MIN_ROWS,
    WINDOW_FRAMES,
    CriticBounds,
    CriticVerdict,
    goal_kind,
    judge,
)
from seed.results.run_dirs import Run
from seed.results.text import markdown_table

FIELDS = ("explained_variance_above", "dead_share_below", "after_frames")


def _number(value, kind) -> bool:
    return isinstance(value, kind) and not isinstance(value, bool)


def goal_bounds(bench: str, goal: dict) -> CriticBounds | None:
    """The goal's ``critic`` as bounds, None where it has none; ReportError (one line) when
    it is not a mapping of :data:`FIELDS` with ``after_frames`` an integer below the goal's
    frames, at least one bound, and a dead share bound in (0, 1]."""
    spec = goal.get("critic")
    if spec is None:
        return None
    usage = ReportError(
        f"{REFERENCES}: {bench}: goal critic needs after_frames (an integer below the goal's "
        "frames) and explained_variance_above and/or dead_share_below (numbers, the dead "
        "share in (0, 1]), as critic: {explained_variance_above: 0.2, dead_share_below: 0.5, "
        "after_frames: 500000}")
    if not isinstance(spec, dict) or set(spec) - set(FIELDS):
        raise usage
    after, ev, dead = (spec.get(k) for k in ("after_frames", "explained_variance_above",
                                             "dead_share_below"))
    try:
        budget = int(goal["frames"])
    except (KeyError, TypeError, ValueError):
        raise usage from None
    if (not _number(after, int) or not 0 <= after < budget
            or (ev is None and dead is None)
            or not all(v is None or _number(v, (int, float)) for v in (ev, dead))
            or (dead is not None and not 0 < dead <= 1)):
        raise usage
    return CriticBounds(after, None if ev is None else float(ev),
                        None if dead is None else float(dead))


def bounds_words(bounds: CriticBounds) -> str:
    """What ``bounds`` ask of a run's critic, and over what."""
    asks = []
    if bounds.explained_variance_above is not None:
        asks.append(f"explained variance above {bounds.explained_variance_above:g}")
    if bounds.dead_share_below is not None:
        asks.append(f"the dead share of the torso's output layer below "
                    f"{bounds.dead_share_below:g}")
    return (f"{' and '.join(asks)} from {frames_text(bounds.after_frames)} frames to the "
            f"run's end, as the medians of {frames_text(WINDOW_FRAMES)}-frame windows")


def goal_rule(bench: str) -> str:
    """How the critic decides a goal, as a sentence after the goal's."""
    return (f" The critic is judged in [{bench} critic](#{bench}-critic): a run whose critic "
            "failed, or did not log what is judged, missed the goal whatever its return; one "
            "that met the return before its critic could be judged left it open.")


def verdict_text(verdict: CriticVerdict) -> str:
    """``held to 10.00M``, ``failed in 500,000-1.00M (explained variance 0.04)``,
    ``collapsed at 0.72M (critic_collapsed)``, ``not judged yet``, ``not recorded``."""
    if verdict.kind == "held":
        return f"held to {frames_text(verdict.last_frames)}"
    if verdict.kind == "not yet":
        return "not judged yet"
    if verdict.kind == "not recorded":
        return "not recorded"
    w = verdict.failed_window
    if w is None:
        return f"collapsed at {frames_text(verdict.failed_at)} ({COLLAPSED})"
    values = {"explained variance": w.explained_variance, "dead share": w.dead_share}
    broken = ", ".join(f"{k} {_two(values[k])}" for k in verdict.broken)
    return f"failed in {_window_label(w.start)} ({broken})"


def goal_run(run: Run, bounds: CriticBounds, return_kind: str, note: str) -> tuple[str, str]:
    """A run's goal outcome and its note in the goal table, with its critic's verdict."""
    verdict = judge(run.metrics, bounds)
    return goal_kind(return_kind, verdict), f"{note}, critic {verdict_text(verdict)}"


def _window_label(start: int) -> str:
    return f"{frames_text(start)}-{frames_text(start + WINDOW_FRAMES)}"


def _collapsed_text(run: Run, verdict: CriticVerdict) -> str:
    """From which frames ``critic_collapsed`` was 1; never (it was 0 throughout); ``-``
    where it was never filled (a run from before the column, or before its 0.5M frames)."""
    if verdict.collapsed_at is not None:
        return f"from {frames_text(verdict.collapsed_at)}"
    return "never" if (run.metrics[COLLAPSED] == 0).any() else "-"


def _two(value: float) -> str:
    """Two decimals, without a sign on zero: a collapsed critic's -0.0003 is 0.00."""
    return f"{round(value, 2) + 0.0:.2f}"


def _cell(value: float | None, broken: bool) -> str:
    if value is None:
        return "-"
    return f"**{_two(value)}**" if broken else _two(value)


def _window_rows(runs: list[Run], verdicts: list[CriticVerdict],
                 bounds: CriticBounds) -> list[list[str]]:
    """One row per window start any run reached: each run's medians, ``EV / dead``."""
    starts = sorted({w.start for v in verdicts for w in v.windows})
    rows = []
    for start in starts:
        row = [_window_label(start)]
        for verdict in verdicts:
            w = next((w for w in verdict.windows if w.start == start), None)
            broken = w.broken(bounds) if w else []
            row.append("-" if w is None else
                       f"{_cell(w.explained_variance, 'explained variance' in broken)} / "
                       f"{_cell(w.dead_share, 'dead share' in broken)}"
                       + (" (so far)" if w.short else ""))
        rows.append(row)
    return rows


def _figure_lines(bench: str, runs: list[Run], bounds: CriticBounds, out_dir: Path) -> list[str]:
    from seed.plots import PlotError, file_name, save
    from seed.plots.critic import critic_figure
    try:
        path = save(critic_figure(runs, bounds, title=bench),
                    out_dir / FIGURES / f"{file_name(bench)}_critic.png")
    except PlotError as e:
        return [f"No critic figure: {e}.", ""]
    return [f"![{bench} critic]({rel(path, out_dir)})", ""]


def section(bench: str, runs: list[Run], refs: dict, root: Path, out_dir: Path) -> list[str]:
    """The ``<benchmark> critic`` section; nothing for a benchmark whose goal has no
    ``critic``."""
    goal = refs.get("goal")
    bounds = goal_bounds(bench, goal) if isinstance(goal, dict) else None
    if bounds is None:
        return []
    verdicts = [judge(r.metrics, bounds) for r in runs]
    out = [heading(bench, "critic"), "",
           f"Each run's critic against the goal's: {bounds_words(bounds)}. How it is "
           f"judged: `seed/results/critic.py`. `{COLLAPSED}`: where the run's own watch "
           "first said the critic had collapsed (`seed/metrics/critic_watch.py`), never, or "
           "- where the column was never filled.", ""]
    out += _figure_lines(bench, runs, bounds, out_dir)
    out += markdown_table(
        ["run", "dead share of", "critic", COLLAPSED, "windows within the bounds"],
        [[rel(r.path, root), v.dead_column or "-", verdict_text(v), _collapsed_text(r, v),
          f"{sum(w.judged and not w.broken(bounds) for w in v.windows)}/"
          f"{sum(w.judged for w in v.windows)}"] for r, v in zip(runs, verdicts)])
    out += ["", f"The median of each window's rows, explained variance / dead share; bold: out "
            f"of the bounds; -: fewer than {MIN_ROWS} values, or a window the run did not reach. A "
            "run's last window runs to its end; \"so far\": a run that stopped less than "
            f"half a window after {frames_text(bounds.after_frames)} frames, where it stands, "
            "not judged yet.", ""]
    out += markdown_table(["frames", *[f"{r.architecture}/{r.run_id}" for r in runs]],
                          _window_rows(runs, verdicts, bounds))
    return out + [""]
