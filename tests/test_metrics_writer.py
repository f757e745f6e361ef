import csv

from seed.metrics.writer import METRICS_COLUMNS, MetricsWriter


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def test_new_run_gets_every_column(tmp_path):
    w = MetricsWriter(tmp_path, tensorboard=False)
    w.write_metrics({"wall_time": 1.0, "env_steps": 10, "env_frames": 40, "inference_ms": 2.5})
    w.close()
    header, row = _rows(tmp_path / "metrics.csv")
    assert header == METRICS_COLUMNS
    assert row[header.index("inference_ms")] == "2.5"


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
