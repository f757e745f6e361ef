"""What a resumed run carries over from its episodes.csv into summary.json: the last 100
returns of the training and evaluation envs, by frames, and how many episodes each had."""

import pytest

from seed.runtime.checkpoint import CheckpointError
from seed.runtime.run import _logged_episodes


def _write(path, rows):
    lines = ["wall_time,env_frames,actor,env_id,episode_return,episode_length,evaluation"]
    lines += [f"{f / 10},{f},0,0,{ret},9,{ev}" for f, ret, ev in rows]
    path.write_text("\n".join(lines) + "\n")


def test_last_100_of_each_kind_by_frames(tmp_path):
    # 150 training episodes with returns 0..149 written out of frame order (the last 50
    # first), and 3 evaluation episodes.
    rows = [(1000 + i, i, 0) for i in range(100, 150)] + [(1000 + i, i, 0) for i in range(100)]
    rows += [(5000, -1, 1), (5001, -2, 1), (5002, -3, 1)]
    _write(tmp_path / "episodes.csv", rows)
    train, evals, counts = _logged_episodes(tmp_path)
    assert train == [float(i) for i in range(50, 150)]  # by frames, not as written
    assert evals == [-1.0, -2.0, -3.0]
    assert counts == [150, 3]


def test_a_run_without_episodes_csv_cannot_resume(tmp_path):
    with pytest.raises(CheckpointError, match="cannot resume .*episodes.csv"):
        _logged_episodes(tmp_path)
