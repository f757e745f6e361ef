"""A real `seed train` on Catch whose filesystem fills up to its last byte, under both
architectures: the run stops in one line (the file, the cause, the frames of the last intact
checkpoint, the resume command), exit 1, no traceback, no actor left behind; the checkpoint,
the CSV files and TensorBoard's events are as whole as before; once space is freed the run
resumes. The filesystem is a size-limited tmpfs, else a loop-mounted ext4 file (both need
root); where neither can be mounted the test is skipped with both reasons. Slow: two runs.
"""

import csv
import os
import re
import struct
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from seed.runtime.checkpoint import load
from tests.e2e.test_faults import ENV, rows, spawn, wait_until

pytestmark = pytest.mark.slow

SIZE = 8 << 20  # bytes: room for the run's first rows, checkpoints and events


@pytest.fixture
def small_filesystem(tmp_path):
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    why = _mount(mount_point, tmp_path / "disk.img")
    if why:
        pytest.skip(f"no small filesystem to fill: {why}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], capture_output=True)


def _mount(mount_point: Path, image: Path) -> str:
    """Mount a filesystem of :data:`SIZE` bytes at ``mount_point``; '' or why it could not."""
    tmpfs = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE}", "tmpfs",
                            str(mount_point)], capture_output=True, text=True)
    if tmpfs.returncode == 0:
        return ""
    with image.open("wb") as f:
        f.truncate(SIZE)
    for cmd in (["mkfs.ext4", "-q", "-F", str(image)],
                ["mount", "-o", "loop", str(image), str(mount_point)]):
        loop = subprocess.run(cmd, capture_output=True, text=True)
        if loop.returncode != 0:
            return (f"tmpfs: {tmpfs.stderr.strip() or tmpfs.returncode}; loop-mounted ext4: "
                    f"{' '.join(cmd[:1])}: {loop.stderr.strip() or loop.returncode}")
    return ""


def _fill(path: Path) -> None:
    """Write ``path`` until the filesystem has not a byte left."""
    with path.open("wb", buffering=0) as f:
        for chunk in (1 << 20, 1 << 12, 1):
            try:
                while True:
                    f.write(b"\0" * chunk)
            except OSError as e:
                assert e.errno == 28, e


def _whole_records(path: Path) -> int:
    """The TFRecord events of a TensorBoard file, counted; AssertionError unless the file
    ends where its last record does (a torn event would not)."""
    data, at, n = path.read_bytes(), 0, 0
    while at < len(data):
        assert at + 12 <= len(data), f"{path}: a torn header at byte {at}"
        (length,) = struct.unpack("<Q", data[at:at + 8])
        at += 12 + length + 4
        assert at <= len(data), f"{path}: a torn record ending past {len(data)}"
        n += 1
    return n


LINE = re.compile(r"seed: error: (?P<path>\S+): No space left on device"
                  r"( \(TensorFlow: ResourceExhaustedError\))?; the run stopped, its "
                  r"last intact checkpoint holds (?P<frames>[\d,]+) frames: free space, then "
                  r"resume with `seed train --resume (?P<dir>\S+)`")


@pytest.mark.parametrize("arch", ["seed", "impala"])
def test_a_full_disk_stops_the_run_in_one_line_and_it_resumes(small_filesystem, tmp_path,
                                                              arch):
    run_dir = small_filesystem / "run"
    log_path = tmp_path / "learner.log"
    proc = spawn(["train", "--env", "toy:catch", "--arch", arch, "--actors", "2",
                  "--envs-per-actor", "2", "--frames", "100000000", "--no-progress",
                  "--logdir", str(run_dir), "--set", "log_interval_s=1",
                  "--set", "checkpoint_interval_s=2"], log_path, env=ENV)
    try:
        wait_until(lambda: (run_dir / "checkpoint.npz").exists()
                   and load(run_dir)[1]["env_steps"] > 0, 600, "a checkpoint of some frames")
        actors = psutil.Process(proc.pid).children(recursive=True)
        before = {name: (run_dir / name).read_bytes()
                  for name in ("metrics.csv", "episodes.csv")}
        _fill(small_filesystem / "filler")
        filled = time.monotonic()
        code = proc.wait(180)
        stopped_after = time.monotonic() - filled
    finally:
        if proc.poll() is None:
            proc.kill()
    output = log_path.read_text(errors="replace")
    assert code == 1, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
    last = output.strip().splitlines()[-1]
    line = LINE.fullmatch(last)
    assert line, last
    assert line["dir"] == str(run_dir) and Path(line["path"]).is_relative_to(run_dir)
    time.sleep(0.5)
    assert not [p for p in actors if p.is_running() and p.status() != psutil.STATUS_ZOMBIE], \
        "an actor outlived the run"
    # Nothing written before the disk filled is damaged.
    _, counters = load(run_dir)
    assert counters["env_steps"] == int(line["frames"].replace(",", ""))  # Catch: 1 frame a step
    for name, old in before.items():
        now = (run_dir / name).read_bytes()
        assert now.startswith(old) and now.endswith(b"\r\n"), name
        header, *body = list(csv.reader(now.decode().splitlines()))
        assert all(len(r) == len(header) for r in body), f"{name}: a torn row"
    events = list((run_dir / "tb").glob("events.out.tfevents.*"))
    assert events and all(_whole_records(e) for e in events)
    assert not [p.name for p in run_dir.iterdir() if p.name.startswith(".")]  # no temp file
    failed = Path(line["path"]).relative_to(run_dir)

    # Space freed: the run resumes from its checkpoint.
    os.unlink(small_filesystem / "filler")
    metrics_rows = len(rows(run_dir / "metrics.csv"))
    target = counters["env_steps"] + 3000
    resumed = subprocess.run(
        [sys.executable, "-m", "seed.cli", "train", "--resume",
         str(run_dir), "--frames", str(target), "--no-progress"],
        cwd=Path(__file__).resolve().parents[2], env=ENV, capture_output=True, text=True,
        timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    after = rows(run_dir / "metrics.csv")
    assert len(after) > metrics_rows and int(after[-1]["env_frames"]) >= target
    print(f"\nFAULT full disk ({arch}): failed writing {failed}, stopped "
          f"{stopped_after:.1f}s after the disk filled, checkpoint of "
          f"{counters['env_steps']} frames, resumed to {after[-1]['env_frames']}", flush=True)
