"""The report's critic: a goal whose critic bounds decide met, missed or open, and the
``<benchmark> critic`` section with its windows and figure."""

import csv
import json
from pathlib import Path

import pytest

from seed import report
from tests.results.test_report import _section, _tables

REFS = """toy_catch:
  thresholds: [1]
  window: 2
  goal:
    return: 1
    frames: 1500000
    critic: {explained_variance_above: 0.2, dead_share_below: 0.5, after_frames: 500000}
    why: a test
"""


def _run(d: Path, arch: str, episodes: list[tuple[int, float]], last: int, ev, dead,
         collapsed=lambda f: "", finished: bool = True) -> None:
    """A toy_catch run with a 1.5M-frame budget: ``episodes`` as (frames, return), metrics
    rows every 50K frames to ``last``, each row's explained variance, dead shares and
    critic_collapsed functions of its frames."""
    d.mkdir(parents=True)
    config = {"env": "toy:catch", "arch": arch, "agent": "vtrace", "network": "mlp",
              "benchmark": "toy_catch", "seed": 0, "train": True, "frames": 1_500_000}
    (d / "config.json").write_text(json.dumps(
        {"config": config, "architecture": arch, "frames_per_step": 1}))
    with (d / "metrics.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["wall_time", "env_steps", "env_frames", "fps", "learner_steps",
                    "learner_fps", "episodes", "episode_return", "explained_variance",
                    "critic_collapsed", "dead_relu_0_conv", "dead_relu_1_fc"])
        for frames in range(50_000, last + 1, 50_000):
            w.writerow([frames / 1000, frames, frames, 1000.0, frames // 100, 900.0, 0, "",
                        ev(frames), collapsed(frames), 0.9, dead(frames)])
    with (d / "episodes.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["wall_time", "env_frames", "episode_return", "episode_length"])
        for frames, ret in episodes:
            w.writerow([frames / 1000, frames, ret, 9])
    if finished:
        (d / "summary.json").write_text(json.dumps({"stopped_by": "budget"}))


RISING = [(300_000, 0), (600_000, 0), (900_000, 1), (1_200_000, 1), (1_500_000, 1)]  # 1 at 1.2M


@pytest.fixture
def tree(tmp_path) -> Path:
    """Four runs (bounds: explained variance above 0.2, dead share below 0.5, from 0.5M):
    SEED good: the return met at 1.2M, its critic in bounds to its end at 1.6M but for one
    row of -20 at 0.75M (the median of its window is 0.5); SEED flat: the return met too,
    its explained variance 0.01 from 1.0M; IMPALA dying: no return, stopped at 0.8M with
    0.6 of its output layer dead, and critic_collapsed 1 from 0.7M; IMPALA early: stopped at
    0.7M, less than half a window after 0.5M, with an explained variance of 0.1: where it
    stands so far, not judged yet."""
    root = tmp_path / "results"
    _run(root / "toy_catch/seed/good", "seed", RISING, 1_600_000,
         ev=lambda f: -20 if f == 750_000 else 0.5, dead=lambda f: 0.3,
         collapsed=lambda f: 0 if f >= 500_000 else "")
    _run(root / "toy_catch/seed/flat", "seed", RISING, 1_600_000,
         ev=lambda f: 0.5 if f < 1_000_000 else 0.01, dead=lambda f: 0.3)
    _run(root / "toy_catch/impala/dying", "impala", [(300_000, 0), (600_000, 0)], 800_000,
         ev=lambda f: 0.5, dead=lambda f: 0.6, collapsed=lambda f: int(f >= 700_000),
         finished=False)
    _run(root / "toy_catch/impala/early", "impala", [(300_000, 1)], 700_000,
         ev=lambda f: 0.1, dead=lambda f: 0.3, finished=False)
    (root / "references.yaml").write_text(REFS)
    return root


def test_the_goal_needs_the_critic_held(tree):
    assert report.build(tree, tree / "REPORT.md") == []
    text = (tree / "REPORT.md").read_text()
    assert ("Goal: a mean of 2 consecutive training episodes of 1 within 1.50M frames, with "
            "explained variance above 0.2 and the dead share of the torso's output layer "
            "below 0.5 from 500,000 frames to the run's end, as the medians of 500,000-frame "
            "windows (a test).") in text
    assert "judged in [toy_catch critic](#toy_catch-critic)" in text
    goal = next(t for t in _tables(text) if t[0][2:] == ["met", "missed", "open"])
    assert goal[1:] == [
        ["impala", "2", "0",
         "1 (dying, stopped at 800,000, critic failed in 500,000-1.00M (dead share 0.60))",
         "1 (early, stopped at 700,000, critic not judged yet)"],
        ["seed", "2", "1 (good at 1.20M, critic held to 1.60M)",
         "1 (flat at 1.20M, critic failed in 1.00M-1.50M (explained variance 0.01))", "0"]]


def test_the_critic_section_tabulates_each_runs_windows(tree):
    report.build(tree, tree / "REPORT.md")
    text = (tree / "REPORT.md").read_text()
    section = _section(text, "toy_catch critic")
    runs, windows = _tables(section)
    assert runs[0] == ["run", "dead share of", "critic", "critic_collapsed",
                       "windows within the bounds"]
    assert runs[1:] == [
        ["toy_catch/impala/dying", "dead_relu_1_fc",
         "failed in 500,000-1.00M (dead share 0.60)", "from 700,000", "0/1"],
        ["toy_catch/impala/early", "dead_relu_1_fc", "not judged yet", "-", "0/0"],
        ["toy_catch/seed/flat", "dead_relu_1_fc",
         "failed in 1.00M-1.50M (explained variance 0.01)", "-", "1/2"],
        ["toy_catch/seed/good", "dead_relu_1_fc", "held to 1.60M", "never", "2/2"]]
    # good and flat: the rows at 1.50M-1.60M span 100K, joined to the 1.0-1.5M window
    assert windows == [
        ["frames", "impala/dying", "impala/early", "seed/flat", "seed/good"],
        ["500,000-1.00M", "0.50 / **0.60**", "0.10 / 0.30 (so far)", "0.50 / 0.30",
         "0.50 / 0.30"],
        ["1.00M-1.50M", "-", "-", "**0.01** / 0.30", "0.50 / 0.30"]]
    assert "![toy_catch critic](report/toy_catch_critic.png)" in section
    assert (tree / "report" / "toy_catch_critic.png").stat().st_size > 10_000
    # after the learning section, before the published references
    assert (text.index("### toy_catch learning") < text.index("### toy_catch critic")
            < text.index("### toy_catch published references"))


def test_no_critic_section_without_critic_bounds(tree):
    (tree / "references.yaml").write_text(REFS.replace(
        "    critic: {explained_variance_above: 0.2, dead_share_below: 0.5, "
        "after_frames: 500000}\n", ""))
    report.build(tree, tree / "REPORT.md")
    text = (tree / "REPORT.md").read_text()
    assert "critic" not in text
    goal = next(t for t in _tables(text) if t[0][2:] == ["met", "missed", "open"])
    assert goal[2] == ["seed", "2", "2 (flat at 1.20M; good at 1.20M)", "0", "0"]


@pytest.mark.parametrize("critic", [
    "{explained_variance_above: 0.2}",                                  # no after_frames
    "{after_frames: 500000}",                                           # no bound
    "{explained_variance_above: 0.2, after_frames: 1500000}",           # not below frames
    "{dead_share_below: 1.5, after_frames: 0}",                         # a share above 1
    "{explained_variance_above: high, after_frames: 0}",
    "{explained_variance_above: 0.2, after_frames: 0, window: 5}",      # an unknown field
    "[0.2, 0.5]"])
def test_a_malformed_critic_is_refused_in_one_line(tree, critic):
    (tree / "references.yaml").write_text(REFS.replace(
        "{explained_variance_above: 0.2, dead_share_below: 0.5, after_frames: 500000}",
        critic))
    with pytest.raises(report.ReportError) as e:
        report.build(tree, tree / "REPORT.md")
    assert "toy_catch: goal critic needs after_frames" in str(e.value)
    assert "\n" not in str(e.value)


def test_a_critic_with_seeds_is_refused(tree):
    (tree / "references.yaml").write_text(REFS.replace("why: a test", "seeds: [0, 1]"))
    with pytest.raises(report.ReportError, match="judged per run, not over seeds"):
        report.build(tree, tree / "REPORT.md")
