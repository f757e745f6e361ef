"""A full disk at each file a run writes, injected without a filesystem (tests/support/full_disk):
the write fails with an OSError naming its file, and what was written before stays whole."""

import errno
import json
from pathlib import Path

import numpy as np
import pytest

from seed.metrics.writer import MetricsWriter
from seed.runtime import checkpoint, disk
from tests.support.full_disk import full_disk

ROW = {"wall_time": 1.5, "env_steps": 10, "env_frames": 40, "fps": 26.7, "loss": 0.25}


def _written(writer: MetricsWriter, interval: int) -> None:
    """One log interval: two episodes, then the metrics row."""
    for i in range(2):
        writer.write_episode(interval, 40 * interval, 0, i, 1.0, 9)
    writer.write_metrics({**ROW, "env_steps": 10 * interval, "env_frames": 40 * interval})


def test_replace_atomically_keeps_the_old_content_and_names_the_file(tmp_path, monkeypatch):
    path = tmp_path / "summary.json"
    path.write_text('{"old": 1}')
    full_disk(monkeypatch, tmp_path, free=5)
    with pytest.raises(OSError) as e:
        disk.replace_atomically(path, lambda f: f.write(b'{"new": 2, "longer": true}'))
    assert e.value.errno == errno.ENOSPC and e.value.filename == str(path)
    assert path.read_text() == '{"old": 1}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["summary.json"]  # no temp file left


def test_a_full_disk_at_the_checkpoint_leaves_the_previous_one_whole(tmp_path, monkeypatch):
    state = {"w": np.arange(1000, dtype=np.float32)}
    checkpoint.save(tmp_path, state, {"env_steps": 7})
    before = (tmp_path / checkpoint.CHECKPOINT).read_bytes()
    disk_ = full_disk(monkeypatch, tmp_path, free=2000)  # half the next checkpoint fits
    with pytest.raises(OSError) as e:
        checkpoint.save(tmp_path, {"w": np.ones(1000, np.float32)}, {"env_steps": 9})
    assert e.value.errno == errno.ENOSPC
    assert e.value.filename == str(tmp_path / checkpoint.CHECKPOINT)
    assert disk_.free == 0 and disk_.failed  # it wrote up to the last byte, into a temp file
    assert all(Path(f).name.startswith(".checkpoint-") for f in disk_.failed)
    assert (tmp_path / checkpoint.CHECKPOINT).read_bytes() == before
    restored, counters = checkpoint.load(tmp_path)
    assert counters == {"env_steps": 7} and np.array_equal(restored["w"], state["w"])
    assert sorted(p.name for p in tmp_path.iterdir()) == [checkpoint.CHECKPOINT]


def _row_bytes(tmp_path) -> tuple[int, int]:
    """(episodes, metrics): the bytes the second interval of :func:`_written` appends."""
    writer = MetricsWriter(tmp_path / "scratch", tensorboard=False)
    _written(writer, 1)
    sizes = [(tmp_path / "scratch" / f).stat().st_size for f in ("episodes.csv", "metrics.csv")]
    _written(writer, 2)
    writer.close()
    return tuple((tmp_path / "scratch" / f).stat().st_size - n
                 for f, n in zip(("episodes.csv", "metrics.csv"), sizes))


@pytest.mark.parametrize("room", ["none", "half the episodes", "the episodes, half the row"])
def test_a_full_disk_at_a_metrics_row_cuts_both_csv_files_back_to_the_last_row(
        tmp_path, monkeypatch, room):
    episode_bytes, metrics_bytes = _row_bytes(tmp_path)
    free = {"none": 0, "half the episodes": episode_bytes // 2,
            "the episodes, half the row": episode_bytes + metrics_bytes // 2}[room]
    run_dir = tmp_path / "run"
    writer = MetricsWriter(run_dir, tensorboard=False)
    _written(writer, 1)
    metrics = (run_dir / "metrics.csv").read_bytes()
    episodes = (run_dir / "episodes.csv").read_bytes()
    disk_ = full_disk(monkeypatch, run_dir, free=free)
    with pytest.raises(OSError) as e:
        _written(writer, 2)
    assert e.value.errno == errno.ENOSPC
    failed = "metrics.csv" if free > episode_bytes else "episodes.csv"
    assert e.value.filename == str(run_dir / failed) and disk_.failed == [e.value.filename]
    assert disk_.free == 0  # the short write happened, and was cut back
    assert (run_dir / "metrics.csv").read_bytes() == metrics
    assert (run_dir / "episodes.csv").read_bytes() == episodes
    writer.close()  # nothing kept from the failed row is written at close
    assert (run_dir / "episodes.csv").read_bytes() == episodes


def test_the_free_bytes_of_a_row_write_it_whole(tmp_path, monkeypatch):
    """The injection itself: a disk with room for exactly one interval takes it, no more."""
    episode_bytes, metrics_bytes = _row_bytes(tmp_path)
    writer = MetricsWriter(tmp_path / "run", tensorboard=False)
    _written(writer, 1)
    disk_ = full_disk(monkeypatch, tmp_path / "run", free=episode_bytes + metrics_bytes)
    _written(writer, 2)
    assert disk_.free == 0 and disk_.failed == []
    with pytest.raises(OSError):
        _written(writer, 2)
    writer.close()


def test_a_full_disk_at_tensorboard_cuts_its_file_back_to_the_last_event(tmp_path,
                                                                        monkeypatch):
    import tensorflow as tf

    writer = MetricsWriter(tmp_path)
    _written(writer, 1)
    tb = writer._tb
    [events] = (tmp_path / "tb").glob("events.out.tfevents.*")
    whole = events.read_bytes()

    def flush():  # TensorFlow wrote part of an event, then found the disk full
        with events.open("ab") as f:
            f.write(b"\x07" * 37)
        raise tf.errors.ResourceExhaustedError(None, None, "")

    monkeypatch.setattr(tb._writer, "flush", flush)
    with pytest.raises(OSError) as e:
        _written(writer, 2)
    assert e.value.errno == errno.ENOSPC and e.value.filename == str(events)
    assert events.read_bytes() == whole
    steps = [v.step for v in tf.compat.v1.train.summary_iterator(str(events)) if v.summary.value]
    assert steps == [40] * len(steps) and steps  # the first row's scalars, read to the end
    assert (tmp_path / "metrics.csv").read_text().count("\n") == 3  # the CSV rows were written
    writer.close()


def test_a_full_disk_is_one_line_with_the_file_the_checkpoint_and_the_resume(tmp_path):
    cause = OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "metrics.csv"))
    try:
        try:
            raise cause
        except OSError as e:
            raise RuntimeError("a learner thread") from e
    except RuntimeError as wrapped:
        assert disk.no_space(wrapped) is cause
    assert disk.no_space(OSError(errno.EACCES, "Permission denied")) is None
    assert disk.no_space(OSError(errno.EDQUOT, "Disk quota exceeded")).errno == errno.EDQUOT
    line = str(disk.disk_full(cause, tmp_path, 123456, "train"))
    assert line == (f"{tmp_path}/metrics.csv: No space left on device; the run stopped, its "
                    f"last intact checkpoint holds 123,456 frames: free space, then resume "
                    f"with `seed train --resume {tmp_path}`")
    assert "\n" not in line
    assert "no checkpoint to resume from" in str(disk.disk_full(cause, tmp_path, None, "train"))


def test_config_json_of_a_resumed_run_stays_whole_on_a_full_disk(tmp_path, monkeypatch):
    from seed.runtime.run import _write_json
    _write_json(tmp_path / "config.json", {"config": {"env": "toy:catch"}})
    full_disk(monkeypatch, tmp_path, free=3)
    with pytest.raises(OSError):
        _write_json(tmp_path / "config.json", {"config": {"env": "toy:catch", "frames": 9}})
    assert json.loads((tmp_path / "config.json").read_text()) == {"config": {"env": "toy:catch"}}


@pytest.mark.parametrize("fills_before", ["checkpoint", "metrics row"])
def test_a_run_stopped_by_a_full_disk_ends_in_one_line(tmp_path, monkeypatch, fills_before):
    """A learner with no actors (launcher none) on Catch: its disk fills up just before its
    second checkpoint, or its third metrics row; the run stops with the one line."""
    from seed.config import make_config
    from seed.runtime import run

    run_dir = tmp_path / "run"
    config = make_config(env="toy:catch", launcher="none", actors=1, envs_per_actor=2,
                         seconds=120, log_interval_s=0.2, checkpoint_interval_s=0.5,
                         progress=False, logdir=str(run_dir))
    calls = {"checkpoint": 0, "metrics row": 0}

    def counted(what, real):
        def call(*args, **kwargs):
            calls[what] += 1
            if what == fills_before and calls[what] == (2 if what == "checkpoint" else 3):
                full_disk(monkeypatch, run_dir, free=10)
            return real(*args, **kwargs)
        return call

    monkeypatch.setattr(checkpoint, "save", counted("checkpoint", checkpoint.save))
    monkeypatch.setattr(MetricsWriter, "write_metrics",
                        counted("metrics row", MetricsWriter.write_metrics))
    with pytest.raises(disk.DiskFull) as e:
        run.train(config)
    failed = "checkpoint.npz" if fills_before == "checkpoint" else "metrics.csv"
    _, counters = checkpoint.load(run_dir)
    assert counters["env_steps"] == 0  # no actors: every row and checkpoint is of 0 frames
    assert str(e.value) == (
        f"{run_dir / failed}: No space left on device; the run stopped, its last intact "
        f"checkpoint holds 0 frames: free space, then resume with "
        f"`seed learner --resume {run_dir}`")
    if fills_before == "checkpoint":
        assert calls["checkpoint"] == 2  # the second one failed; the first one is the one read
    rows = (run_dir / "metrics.csv").read_text().splitlines()
    assert all(r.count(",") == rows[0].count(",") for r in rows)
    assert not list(run_dir.glob(".*"))  # no temp file, no socket left behind
