"""Episode returns shaped into curves: rolling means, one point per logged frame count,
curves of several runs on one grid; the final return and the first frame a return is
reached."""

from __future__ import annotations

import numpy as np
import pandas as pd


def rolling_returns(episodes: pd.DataFrame, window: int) -> pd.DataFrame:
    """Episodes sorted by frames, with ``return_rolling``: the mean return of the last
    ``window`` episodes (fewer at the start)."""
    if window < 1:
        raise ValueError(f"rolling window must be >= 1, got {window}")
    out = episodes.sort_values(["env_frames", "wall_time"], kind="stable").reset_index(drop=True)
    out["return_rolling"] = out["episode_return"].rolling(window, min_periods=1).mean()
    return out


def return_curve(rolled: pd.DataFrame, x: str = "env_frames") -> tuple[np.ndarray, np.ndarray]:
    """(x, rolling return) with one point per distinct ``x``: episodes are logged once per
    log interval, so many share one ``env_frames``/``wall_time``; the point is the rolling
    mean after the last of them. ``rolled`` comes from :func:`rolling_returns`."""
    if rolled.empty:
        return np.zeros(0), np.zeros(0)
    last = rolled.groupby(x, sort=True)["return_rolling"].last()
    return last.index.to_numpy(float), last.to_numpy(float)


def curve_over_runs(curves: list[tuple[np.ndarray, np.ndarray]],
                    points: int = 200) -> pd.DataFrame:
    """Median, mean, std, min and max over runs of curves ``(x, y)``, on a common grid of x.

    Each curve is interpolated (linearly) onto ``points`` values of x from the largest
    first x to the smallest last x of the curves: the grid spans only what every run
    reached (a curve is never extrapolated). Returns columns x, median, mean, std, min,
    max, runs.
    """
    columns = ["x", "median", "mean", "std", "min", "max", "runs"]
    curves = [(np.asarray(x, float), np.asarray(y, float)) for x, y in curves if len(x)]
    if not curves:
        return pd.DataFrame(columns=columns)
    lo = max(float(x[0]) for x, _ in curves)
    hi = min(float(x[-1]) for x, _ in curves)
    if hi < lo:  # curves do not overlap: nothing to average over
        return pd.DataFrame(columns=columns)
    grid = np.linspace(lo, hi, points if hi > lo else 1)
    ys = np.stack([np.interp(grid, x, y) for x, y in curves])
    return pd.DataFrame({"x": grid, "median": np.median(ys, 0), "mean": ys.mean(0),
                         "std": ys.std(0), "min": ys.min(0), "max": ys.max(0),
                         "runs": len(curves)})


def last_returns(episodes: pd.DataFrame, window: int = 100) -> np.ndarray:
    """The returns of the last ``window`` episodes, by frames (then wall time, then the
    order logged): what a run's summary.json averages, and :func:`final_return`."""
    ordered = episodes.sort_values(["env_frames", "wall_time"], kind="stable")
    return ordered["episode_return"].tail(window).to_numpy(float)


def final_return(episodes: pd.DataFrame, window: int = 100) -> float:
    """Mean return of the last ``window`` episodes (by frames); NaN without episodes."""
    if not len(episodes):
        return float("nan")
    return float(last_returns(episodes, window).mean())


def first_reaching(episodes: pd.DataFrame, threshold: float, window: int = 100) -> dict | None:
    """Where the mean return of ``window`` consecutive episodes first reaches ``threshold``.

    Episodes in frame order; returns ``{"env_frames", "wall_time", "episodes", "held"}`` of
    the episode that completed the window (frames and wall time as logged with it), or None
    if no window of ``window`` episodes reaches it. ``held`` is False when the crossing did
    not hold: the mean fell below ``threshold`` again within the next ``window`` episodes,
    or the crossing came in the run's last log row (the episodes of its last frame count).
    """
    ordered = episodes.sort_values(["env_frames", "wall_time"], kind="stable")
    means = ordered["episode_return"].rolling(window).mean().to_numpy()
    hits = np.flatnonzero(means >= threshold)
    if not hits.size:
        return None
    i = int(hits[0])
    frames = ordered["env_frames"].to_numpy()
    lost = bool((means[i + 1:i + 1 + window] < threshold).any())
    return {"env_frames": int(frames[i]), "wall_time": float(ordered["wall_time"].iloc[i]),
            "episodes": i + 1, "held": bool(not lost and frames[i] < frames[-1])}


def goal_outcome(episodes: pd.DataFrame, frames_run: int, target: float, budget: int,
                 window: int = 100) -> tuple[str, int | None]:
    """Whether a run met a goal: a ``window``-episode mean of ``target`` within ``budget``
    frames. ``("met", frames)`` where it first did; ``("missed", frames or None)`` when the
    run went past the budget without (with where it got there later, if it did); ``("open",
    None)`` when it stopped short of the budget without reaching it: it has not decided."""
    hit = first_reaching(episodes, target, window)
    if hit is not None and hit["env_frames"] <= budget:
        return "met", hit["env_frames"]
    if frames_run >= budget or hit is not None:
        return "missed", None if hit is None else hit["env_frames"]
    return "open", None


def return_at(episodes: pd.DataFrame, frames: int, window: int = 100) -> float:
    """The mean return of the last ``window`` episodes logged at or before ``frames``; NaN
    with fewer than ``window`` of them."""
    ordered = episodes.sort_values(["env_frames", "wall_time"], kind="stable")
    before = ordered[ordered["env_frames"] <= frames]
    if len(before) < window:
        return float("nan")
    return float(before["episode_return"].tail(window).mean())


def goal_over_seeds(runs: dict, target: float, budget: int, seeds,
                    window: int = 100) -> tuple[str, float | None, dict]:
    """Whether the median over ``seeds`` of a ``window``-episode mean at ``budget`` frames
    reaches ``target``. ``runs`` maps a seed to ``[(episodes, frames run), ...]``; a seed's
    value is :func:`return_at` the budget, the median over its runs that ran to the budget.

    Returns ``(kind, median, {seed: value})``: ``("met" | "missed", median, ...)`` when every
    seed of ``seeds`` has a run that reached the budget, else ``("open", None, ...)`` with
    the seeds that have one."""
    values = {}
    for seed in seeds:
        at = [return_at(e, budget, window) for e, ran in runs.get(seed, []) if ran >= budget]
        at = [v for v in at if not np.isnan(v)]
        if at:
            values[seed] = float(np.median(at))
    if len(values) < len(list(seeds)):
        return "open", None, values
    median = float(np.median(list(values.values())))
    return ("met" if median >= target else "missed"), median, values
