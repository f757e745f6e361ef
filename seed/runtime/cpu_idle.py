"""Idle cores that poll instead of halting, for as long as a run lasts (``cpu_idle_poll``).

A core with nothing to run halts. Waking it again costs time, and in a virtual machine a
halted vCPU goes back to the host, which may run something else on that core meanwhile, so
the next piece of work starts on a cold core. SEED's lock-step schedule idles every
process on every step (the learner while the actors simulate, the actors while the learner
infers), so it pays that wake-up twice a step; IMPALA's actors rarely idle.

Linux's PM QoS interface takes a process's request for a maximum CPU wake-up latency: a
32-bit number of microseconds written to ``/dev/cpu_dma_latency``, in force while that
file stays open (the kernel's ``Documentation/power/pm_qos_interface.rst``; tuned's
latency-performance profile does the same). A request of 0 keeps idle cores in their
polling state. It applies to the whole machine, costs a core's full power while idle, and
needs write access to the file (root).
"""

from __future__ import annotations

import contextlib
import logging
import struct

log = logging.getLogger(__name__)

QOS_FILE = "/dev/cpu_dma_latency"


class CpuIdlePollError(RuntimeError):
    """The wake-up latency request could not be made."""


def check(path: str | None = None) -> None:
    """:class:`CpuIdlePollError` unless a request can be made (opening the file alone
    asks for no limit)."""
    _open(path or QOS_FILE).close()


@contextlib.contextmanager
def idle_polling(enabled: bool = True, path: str | None = None):
    """Hold a wake-up latency request of 0 us while the block runs (nothing if not
    ``enabled``); :class:`CpuIdlePollError` in one line when the file cannot be written."""
    if not enabled:
        yield
        return
    path = path or QOS_FILE
    with _open(path) as f:
        f.write(struct.pack("i", 0))
        log.info("cpu_idle_poll: idle cores poll while this run lasts (%s = 0 us)", path)
        yield


def _open(path: str):
    try:
        return open(path, "wb", buffering=0)
    except OSError as e:
        raise CpuIdlePollError(
            f"cpu_idle_poll: cannot open {path} for writing ({type(e).__name__}: "
            f"{e.strerror or e}); it needs Linux and root, or set cpu_idle_poll false") from None
