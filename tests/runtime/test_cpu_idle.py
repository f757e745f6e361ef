"""cpu_idle_poll: the wake-up latency request is held while a run lasts, and refused in
one line where it cannot be made."""

import os
import struct

import pytest

from seed.config import make_config
from seed.runtime import cpu_idle
from seed.runtime.run import train


def _open_fds_to(path) -> int:
    fds = os.listdir("/proc/self/fd")
    return sum(1 for fd in fds if os.path.realpath(f"/proc/self/fd/{fd}") == str(path))


def test_the_request_is_written_and_held_open_for_the_block_only(tmp_path):
    qos = tmp_path / "cpu_dma_latency"
    qos.write_bytes(b"")
    with cpu_idle.idle_polling(True, str(qos)):
        assert _open_fds_to(qos) == 1  # the kernel keeps the request while it is open
        assert qos.read_bytes() == struct.pack("i", 0)  # 0 us, a native int32
    assert _open_fds_to(qos) == 0


def test_off_touches_nothing(tmp_path):
    qos = tmp_path / "absent"
    with cpu_idle.idle_polling(False, str(qos)):
        pass
    assert not qos.exists()


def test_a_request_that_cannot_be_made_is_one_line_naming_the_file(tmp_path):
    missing = tmp_path / "no" / "cpu_dma_latency"
    for call in (lambda: cpu_idle.check(str(missing)),
                 lambda: cpu_idle.idle_polling(True, str(missing)).__enter__()):
        with pytest.raises(cpu_idle.CpuIdlePollError) as err:
            call()
        message = str(err.value)
        assert "\n" not in message and str(missing) in message and "cpu_idle_poll" in message


def test_a_run_asking_for_it_where_it_cannot_be_had_fails_before_its_run_dir(tmp_path,
                                                                           monkeypatch):
    monkeypatch.setattr(cpu_idle, "QOS_FILE", str(tmp_path / "no" / "cpu_dma_latency"))
    run_dir = tmp_path / "run"
    with pytest.raises(cpu_idle.CpuIdlePollError, match="cpu_idle_poll"):
        train(make_config(env="toy:catch", frames=100, logdir=str(run_dir),
                          cpu_idle_poll=True))
    assert not run_dir.exists()
