import csv

from seed.metrics.writer import LEARNING_COLUMNS, METRICS_COLUMNS, MetricsWriter


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def test_new_run_gets_every_column(tmp_path):
    relu = ["dead_relu_0_conv2d", "dead_relu_1_dense"]
    w = MetricsWriter(tmp_path, tensorboard=False, relu_columns=relu)
    w.write_metrics({"wall_time": 1.0, "env_steps": 10, "env_frames": 40,
                     "learner_inference_ms": 2.5,
                     "update_ratio": 0.003, "dead_relu_1_dense": 0.25})
    w.close()
    header, row = _rows(tmp_path / "metrics.csv")
    assert header == METRICS_COLUMNS + LEARNING_COLUMNS + relu
    assert row[header.index("learner_inference_ms")] == "2.5"
    assert row[header.index("update_ratio")] == "0.003"
    assert row[header.index("dead_relu_1_dense")] == "0.25"
    assert row[header.index("entropy")] == ""  # not reported: blank, not zero


def test_episodes_are_on_disk_once_the_next_metrics_row_is(tmp_path):
    w = MetricsWriter(tmp_path, tensorboard=False)
    w.write_episode(1.0, 40, 0, 3, -21.0, 800)
    w.write_metrics({"wall_time": 1.0, "env_steps": 10, "env_frames": 40})
    # Read while the writer is still open, as a live notebook or a SIGKILL would find it.
    episodes = _rows(tmp_path / "episodes.csv")
    assert episodes[1] == ["1", "40", "0", "3", "-21", "800", "0"]
    w.close()


def test_evaluation_episodes_are_marked_and_an_old_episodes_file_keeps_its_columns(tmp_path):
    w = MetricsWriter(tmp_path / "new", tensorboard=False)
    w.write_episode(1.0, 40, 0, 7, 5.0, 900, evaluation=True)
    w.close()
    assert _rows(tmp_path / "new" / "episodes.csv")[1][-1] == "1"
    old = ["wall_time", "env_frames", "actor", "env_id", "episode_return", "episode_length"]
    (tmp_path / "old").mkdir()
    with open(tmp_path / "old" / "episodes.csv", "w", newline="") as f:
        csv.writer(f).writerow(old)
    w = MetricsWriter(tmp_path / "old", tensorboard=False)
    w.write_episode(2.0, 80, 1, 2, -3.0, 700, evaluation=True)
    w.close()
    assert _rows(tmp_path / "old" / "episodes.csv") == [old, ["2", "80", "1", "2", "-3", "700"]]


def test_resumed_run_keeps_the_header_it_started_with(tmp_path):
    old = METRICS_COLUMNS[:-1]  # a run written before the last column existed
    with open(tmp_path / "metrics.csv", "w", newline="") as f:
        csv.writer(f).writerows([old, ["1"] * len(old)])
    w = MetricsWriter(tmp_path, tensorboard=False)
    w.write_metrics({"wall_time": 2.0, "env_steps": 20, "env_frames": 80, "inference_ms": 1.0})
    w.close()
    rows = _rows(tmp_path / "metrics.csv")
    assert rows[0] == old and all(len(r) == len(old) for r in rows)
    assert rows[2][0] == "2"
