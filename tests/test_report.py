"""`make report`: results/REPORT.md is what the committed runs say, and a bad run directory is
named and left out."""

import csv
import json
from pathlib import Path

from seed import report

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"


def test_the_committed_report_is_what_the_committed_runs_say(tmp_path):
    out = tmp_path / "REPORT.md"
    report.build(RESULTS, out)
    committed = (RESULTS / "REPORT.md").read_text()
    assert out.read_text() == committed, (
        "results/REPORT.md is stale: run `make report` and commit it with its figures")
    for link in [line.split("](")[1].rstrip(")") for line in committed.splitlines()
                 if line.startswith("![")]:
        assert (RESULTS / link).is_file(), link


def _run(d: Path, arch: str, returns: list[float], finished: bool = True, seed: int = 0) -> Path:
    """A run whose i-th episode (return ``returns[i]``) ends at 1,000 * (i + 1) frames and
    10 * (i + 1) seconds."""
    d.mkdir(parents=True)
    config = {"env": "toy:catch", "arch": arch, "agent": "vtrace", "network": "mlp",
              "benchmark": "toy_catch", "seed": seed, "train": True}
    (d / "config.json").write_text(json.dumps(
        {"config": config, "architecture": arch, "frames_per_step": 1,
         "machine": {"cpu_count": 2, "processor": "x86_64", "python": "3.11.7",
                     "packages": {"numpy": "2.4.6"}}}))
    with (d / "metrics.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["wall_time", "env_steps", "env_frames", "fps", "learner_steps",
                    "learner_fps", "episodes", "episode_return"])
        w.writerow([10.0 * len(returns), 1000 * len(returns), 1000 * len(returns), 100.0, 5,
                    90.0, len(returns), sum(returns) / len(returns)])
    with (d / "episodes.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["wall_time", "env_frames", "episode_return", "episode_length"])
        for i, r in enumerate(returns):
            w.writerow([10.0 * (i + 1), 1000 * (i + 1), r, 9])
    if finished:
        (d / "summary.json").write_text(json.dumps({"stopped_by": "budget"}))
    return d


def test_thresholds_statuses_and_bad_directories(tmp_path):
    root = tmp_path / "results"
    # Means of 2 consecutive episodes: run-0 reaches 0.5 at episode 3 (3,000 frames, 30 s)
    # and 0.9 at episode 4, run-1 0.5 at episode 5 and 0.9 at episode 6. IMPALA's one run
    # reaches 0.5 at episode 2, never 0.9, and has not finished.
    _run(root / "toy_catch/seed/run-0", "seed", [0, 0, 1, 1, 1])
    _run(root / "toy_catch/seed/run-1", "seed", [0, 0, 0, 0, 1, 1], seed=1)
    _run(root / "toy_catch/impala/run-0", "impala", [1, 0, 1], finished=False)
    broken = root / "toy_catch/seed/broken"
    broken.mkdir(parents=True)
    for name in ("config.json", "metrics.csv", "episodes.csv"):
        (broken / name).write_text("{not json" if name == "config.json" else "")
    (root / "references.yaml").write_text(
        "toy_catch:\n  thresholds: [0.5, 0.9]\n  window: 2\n"
        "  references:\n    - {what: a paper, value: 1, unit: return, source: its page}\n")
    out = root / "REPORT.md"
    problems = report.build(root, out)
    text = out.read_text()
    assert len(problems) == 1 and problems[0].startswith("toy_catch/seed/broken: ")
    assert "\n" not in problems[0]
    assert f"- {problems[0]}" in text
    rows = {line.split(" | ")[0].lstrip("| "): line for line in text.splitlines()
            if line.startswith("| ")}
    assert rows["seed"] == ("| seed | 2 | 4,000 (3,000-5,000); 40 s (30 s-50 s) [2/2] | "
                            "5,000 (4,000-6,000); 50 s (40 s-60 s) [2/2] |")
    assert rows["impala"] == "| impala | 1 | 2,000; 20 s [1/1] | -; - [0/1] |"
    assert "not finished (no summary.json)" in rows["toy_catch/impala/run-0"]
    assert "finished (stopped by budget)" in rows["toy_catch/seed/run-0"]
    assert "| a paper | 1 | return | its page |" in text
    assert "- 2 cores, x86_64, no GPU; python 3.11.7, numpy 2.4.6" in text
    assert (root / "report" / "toy_catch_reward.png").stat().st_size > 10_000
