"""seed.results.curves: episode returns into curves, final returns, thresholds, by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from seed.results import curves


def test_rolling_and_curve_over_runs():
    import pandas as pd
    ep = pd.DataFrame({"wall_time": [3, 1, 2, 4], "env_frames": [30, 10, 20, 40],
                       "episode_return": [3.0, 1.0, 2.0, 4.0]})
    out = curves.rolling_returns(ep, 2)
    assert out["env_frames"].tolist() == [10, 20, 30, 40]
    assert out["return_rolling"].tolist() == [1.0, 1.5, 2.5, 3.5]
    agg = curves.curve_over_runs([(np.array([0, 10.0]), np.array([0, 10.0])),
                             (np.array([5, 20.0]), np.array([2, 2.0])),
                             (np.array([4, 12.0]), np.array([9, 9.0]))], points=3)
    # common grid 5..10 (no extrapolation: every run reached it) of y=x, y=2 and y=9
    assert agg["x"].tolist() == [5.0, 7.5, 10.0]
    assert agg["median"].tolist() == pytest.approx([5.0, 7.5, 9.0])
    assert agg["mean"].tolist() == pytest.approx([16 / 3, 18.5 / 3, 7.0])
    assert agg["min"].tolist() == pytest.approx([2, 2, 2])
    assert agg["max"].tolist() == pytest.approx([9, 9, 10]) and (agg["runs"] == 3).all()
    assert curves.curve_over_runs([(np.array([0, 1.0]), np.zeros(2)),
                              (np.array([2, 3.0]), np.zeros(2))]).empty


def test_final_return_is_the_mean_of_the_last_episodes_by_frames():
    ep = pd.DataFrame({"env_frames": [30, 10, 20, 30], "wall_time": [4, 1, 2, 3.0],
                       "episode_return": [4.0, 1.0, 2.0, 3.0]})
    assert curves.final_return(ep, window=2) == 3.5  # frames 30 (at 3 s, then 4 s)
    assert curves.final_return(ep, window=10) == 2.5
    assert np.isnan(curves.final_return(ep.iloc[:0]))


def test_first_reaching_a_return_by_hand():
    ep = pd.DataFrame({"env_frames": [10, 20, 30, 40, 50], "wall_time": [1, 2, 3, 4, 5.0],
                       "episode_return": [-21, -10, 0, 10, 21.0]})
    # windows of 2: -15.5, -5, 5, 15.5 -> first >= 5 completes at the 4th episode (frames 40)
    assert curves.first_reaching(ep, 5.0, window=2) == {"env_frames": 40, "wall_time": 4.0,
                                                    "episodes": 4, "held": True}
    # reached only in the last log row (the episodes at frames 50): not held
    assert curves.first_reaching(ep, 15.0, window=2)["held"] is False
    assert curves.first_reaching(ep, 18.0, window=2) is None
    assert curves.first_reaching(ep, -21.0, window=10) is None  # fewer episodes than the window


def test_goal_outcome_met_missed_and_open_by_hand():
    ep = pd.DataFrame({"env_frames": [10, 20, 30, 40, 50], "wall_time": [1, 2, 3, 4, 5.0],
                       "episode_return": [-21, -10, 0, 10, 21.0]})
    # windows of 2: -15.5 (20), -5 (30), 5 (40), 15.5 (50)
    assert curves.goal_outcome(ep, 50, 5.0, budget=40, window=2) == ("met", 40)
    assert curves.goal_outcome(ep, 50, 5.0, budget=45, window=2) == ("met", 40)
    # reached, but only after the budget: missed, with where it got there
    assert curves.goal_outcome(ep, 50, 15.0, budget=40, window=2) == ("missed", 50)
    # never reached, and ran the budget: missed; ran less: open (not decided)
    assert curves.goal_outcome(ep, 50, 18.0, budget=50, window=2) == ("missed", None)
    assert curves.goal_outcome(ep, 50, 18.0, budget=60, window=2) == ("open", None)


def test_a_crossing_lost_again_within_the_window_is_not_held():
    ep = pd.DataFrame({"env_frames": [10, 20, 30, 40, 50, 60], "wall_time": [1, 2, 3, 4, 5, 6.0],
                       "episode_return": [0, 10, 0, 0, 10, 10.0]})
    # windows of 2: 5 (20), 5 (30), 0 (40), 5 (50), 10 (60)
    hit = curves.first_reaching(ep, 5.0, window=2)
    assert (hit["env_frames"], hit["held"]) == (20, False)  # 0 at frames 40, within 2 more
    hit = curves.first_reaching(ep, 5.0, window=1)
    assert (hit["env_frames"], hit["held"]) == (20, False)  # 0 at frames 30
    ep2 = ep.assign(episode_return=[0, 10, 10, 10, 10, 10.0])
    assert curves.first_reaching(ep2, 5.0, window=2)["held"] is True


def test_goal_over_the_median_of_seeds_by_hand():
    def run(returns, ran):
        frames = [10 * (i + 1) for i in range(len(returns))]
        return pd.DataFrame({"env_frames": frames, "wall_time": frames,
                             "episode_return": [float(r) for r in returns]}), ran
    # at 40 frames, means of the last 2: seed 0 -> (3+5)/2 = 4, seed 1 -> 10, seed 2 -> 0
    runs = {0: [run([1, 1, 3, 5, 100], 50)], 1: [run([10, 10, 10, 10], 40)],
            2: [run([0, 0, 0, 0], 40), run([9, 9, 9, 9], 30)],  # the second stopped short
            3: [run([50] * 4, 40)]}  # not one of the seeds asked for
    assert curves.return_at(runs[0][0][0], 40, window=2) == 4.0
    assert curves.goal_over_seeds(runs, 4.0, 40, [0, 1, 2], window=2) == (
        "met", 4.0, {0: 4.0, 1: 10.0, 2: 0.0})
    assert curves.goal_over_seeds(runs, 4.5, 40, [0, 1, 2], window=2)[:2] == ("missed", 4.0)
    # a seed without a run that reached the budget: not decided
    kind, median, values = curves.goal_over_seeds(runs, 4.0, 45, [0, 1, 2], window=2)
    assert (kind, median, values) == ("open", None, {0: 4.0})
