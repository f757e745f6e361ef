"""seed.results.critic: a run's critic against a goal's bounds, by the medians of 0.5M-frame
windows from after_frames on, with critic_watch's collapse flag held against it."""

import pandas as pd

from seed.metrics.critic_watch import output_layer_column
from seed.results.critic import (
    WINDOW_FRAMES,
    CriticBounds,
    CriticVerdict,
    Window,
    dead_column,
    goal_kind,
    judge,
    windows,
)

BOUNDS = CriticBounds(after_frames=500_000, explained_variance_above=0.2, dead_share_below=0.5)


def _metrics(last: int, ev=lambda f: 0.5, dead=lambda f: 0.3, collapsed=lambda f: None,
             step: int = 50_000) -> pd.DataFrame:
    """Rows every ``step`` frames from ``step`` to ``last``; each value a function of the
    row's frames (None: blank)."""
    frames = list(range(step, last + 1, step))
    return pd.DataFrame({"env_frames": frames,
                         "explained_variance": [ev(f) for f in frames],
                         "critic_collapsed": [collapsed(f) for f in frames],
                         "dead_relu_0_conv": [0.99] * len(frames),  # not the output layer
                         "dead_relu_1_fc": [dead(f) for f in frames]}, dtype=float)


def test_the_window_is_half_a_million_frames():
    assert WINDOW_FRAMES == 500_000


def test_the_dead_share_is_critic_watchs_column():
    m = _metrics(100_000)
    assert dead_column(m) == output_layer_column(["dead_relu_0_conv", "dead_relu_1_fc"]) \
        == "dead_relu_1_fc"


def test_windows_take_medians_and_join_a_short_last_window_to_the_one_before():
    # Rows every 50K frames. Window 0.5-1.0M: the 10 rows at 0.50M-0.95M, one of -20 among
    # nine of 0.5: median 0.5. Window 1.0-1.5M: 10 rows of 0.3; the 5 rows at 1.50M-1.70M
    # span 200K < 250K: joined to it, 15 rows, 10 of 0.3 and 5 of 0.9: median 0.3.
    m = _metrics(1_700_000, ev=lambda f: -20 if f == 750_000 else
                 (0.5 if f < 1_000_000 else 0.3 if f < 1_500_000 else 0.9),
                 dead=lambda f: 0.1 if f < 1_000_000 else 0.4)
    assert windows(m, 500_000, "dead_relu_1_fc") == [
        Window(500_000, 1_000_000, 0.5, 0.1), Window(1_000_000, 1_700_001, 0.3, 0.4)]
    # Rows to 1.75M: the last window spans 250K, half of one: it stands alone (6 rows).
    m = _metrics(1_750_000, ev=lambda f: 0.9 if f >= 1_500_000 else 0.3)
    assert [(w.start, w.end, w.explained_variance) for w in windows(m, 500_000, "x")] == [
        (500_000, 1_000_000, 0.3), (1_000_000, 1_500_000, 0.3), (1_500_000, 1_750_001, 0.9)]
    assert [w.dead_share for w in windows(m, 500_000, "x")] == [None, None, None]  # no column


def test_a_run_stopped_within_half_a_window_of_after_frames_is_not_judged_yet():
    # Rows to 0.70M: its one window spans 200K < 250K: short, shown, not judged, however low
    [w] = windows(_metrics(700_000, ev=lambda f: 0.1), 500_000, "dead_relu_1_fc")
    assert (w.explained_variance, w.dead_share, w.short, w.judged) == (0.1, 0.3, True, False)
    assert w.broken(BOUNDS) == []
    assert judge(_metrics(700_000, ev=lambda f: 0.1), BOUNDS).kind == "not yet"
    # Rows to 0.75M: 250K, half a window: judged, and it fails
    verdict = judge(_metrics(750_000, ev=lambda f: 0.1), BOUNDS)
    assert (verdict.kind, verdict.windows[0].short) == ("failed", False)


def test_a_window_of_fewer_than_five_values_is_not_judged():
    # Rows at 0.50M-0.75M: 6 rows; blank the explained variance of two: 4 values, no median.
    m = _metrics(750_000, ev=lambda f: None if f in (600_000, 650_000) else 0.1)
    [w] = windows(m, 500_000, "dead_relu_1_fc")
    assert (w.explained_variance, w.dead_share, w.judged) == (None, 0.3, True)
    assert w.broken(BOUNDS) == []
    assert judge(m, BOUNDS).kind == "held"


def test_held_failed_and_the_first_window_that_failed():
    held = judge(_metrics(1_400_000), BOUNDS)
    assert (held.kind, held.last_frames, held.failed_at) == ("held", 1_400_000, None)
    # The explained variance falls to 0.2 (not above it) from 1.0M; the dead share reaches
    # 0.5 (not below it) from 1.5M: the first window out of bounds is 1.0-1.5M.
    m = _metrics(2_400_000, ev=lambda f: 0.6 if f < 1_000_000 else 0.2,
                 dead=lambda f: 0.3 if f < 1_500_000 else 0.5)
    verdict = judge(m, BOUNDS)
    assert (verdict.kind, verdict.failed_at, verdict.broken) == (
        "failed", 1_000_000, ("explained variance",))
    assert verdict.failed_window.broken(BOUNDS) == ["explained variance"]
    assert [w.broken(BOUNDS) for w in verdict.windows] == [
        [], ["explained variance"], ["explained variance", "dead share"],
        ["explained variance", "dead share"]]
    # Rows before after_frames are not judged, however bad
    assert judge(_metrics(900_000, ev=lambda f: -3 if f < 500_000 else 0.4), BOUNDS).kind \
        == "held"


def test_critic_watchs_flag_from_after_frames_on_fails_it_and_before_does_not():
    flagged = judge(_metrics(1_400_000, collapsed=lambda f: 0 if f < 1_200_000 else 1), BOUNDS)
    assert (flagged.kind, flagged.failed_at, flagged.failed_window, flagged.collapsed_at) == (
        "failed", 1_200_000, None, 1_200_000)
    # A window out of bounds before the flag is what it failed at
    m = _metrics(1_400_000, ev=lambda f: 0.0, collapsed=lambda f: 0 if f < 1_200_000 else 1)
    assert judge(m, BOUNDS).failed_at == 500_000
    # Raised at 0.7M, before after_frames 1M: the span judged is not held to it
    later = CriticBounds(1_000_000, 0.2, 0.5)
    verdict = judge(_metrics(1_400_000, collapsed=lambda f: 1 if f >= 700_000 else 0), later)
    assert (verdict.kind, verdict.collapsed_at) == ("held", 700_000)


def test_not_yet_and_not_recorded():
    assert judge(_metrics(450_000), BOUNDS).kind == "not yet"
    no_dead = _metrics(1_000_000).drop(columns=["dead_relu_0_conv", "dead_relu_1_fc"])
    assert judge(no_dead, BOUNDS).kind == "not recorded"
    # A bound not asked needs no column
    assert judge(no_dead, CriticBounds(500_000, explained_variance_above=0.2)).kind == "held"
    blank_ev = _metrics(1_000_000, ev=lambda f: None)
    assert judge(blank_ev, BOUNDS).kind == "not recorded"


def test_the_goal_is_met_only_with_the_critic_held():
    def verdict(kind):
        return CriticVerdict(kind, [], "dead_relu_1_fc", 1)
    table = {(r, k): goal_kind(r, verdict(k)) for r in ("met", "missed", "open")
             for k in ("held", "failed", "not yet", "not recorded")}
    assert table == {
        ("met", "held"): "met", ("met", "failed"): "missed", ("met", "not yet"): "open",
        ("met", "not recorded"): "missed",
        ("missed", "held"): "missed", ("missed", "failed"): "missed",
        ("missed", "not yet"): "missed", ("missed", "not recorded"): "missed",
        ("open", "held"): "open", ("open", "failed"): "missed", ("open", "not yet"): "open",
        ("open", "not recorded"): "missed"}
