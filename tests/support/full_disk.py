"""A directory that behaves as a nearly full filesystem, without a filesystem.

:func:`full_disk` patches ``os.write`` and ``os.fdopen`` so that writes to files under a
directory share ``free`` bytes: a write that would go past them writes what fits, then the
next one fails with ENOSPC, as a real full disk does (a short write, then an error). Writes
to any other file are untouched.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

_write, _fdopen = os.write, os.fdopen


class Disk:
    def __init__(self, root: Path, free: int):
        self.root = str(Path(root).resolve())
        self.free = free
        self.failed: list[str] = []  # the files a write failed on

    def holds(self, fd: int) -> bool:
        try:
            return os.readlink(f"/proc/self/fd/{fd}").startswith(self.root + os.sep)
        except OSError:
            return False

    def take(self, fd: int, data) -> int:
        """The bytes of ``data`` that fit (written to ``fd``); ENOSPC when none do."""
        data = memoryview(data).cast("B")
        if len(data) and self.free <= 0:
            self.failed.append(os.readlink(f"/proc/self/fd/{fd}"))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = _write(fd, data[:self.free])
        self.free -= n
        return n


class _File:
    """A binary file of a :class:`Disk`: its writes take from the disk's free bytes."""

    def __init__(self, f, disk: Disk):
        self._f, self._disk = f, disk

    def write(self, data) -> int:
        self._f.flush()
        data = memoryview(data).cast("B")
        done = 0
        while done < len(data):
            done += self._disk.take(self._f.fileno(), data[done:])
        return done

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()


def full_disk(monkeypatch, root: Path, free: int) -> Disk:
    """Make writes under ``root`` share ``free`` bytes from now on; returns the disk."""
    disk = Disk(root, free)

    def write(fd, data):
        return disk.take(fd, data) if disk.holds(fd) else _write(fd, data)

    def fdopen(fd, *args, **kwargs):
        f = _fdopen(fd, *args, **kwargs)
        return _File(f, disk) if disk.holds(fd) and "b" in (args[0] if args else "r") else f

    monkeypatch.setattr(os, "write", write)
    monkeypatch.setattr(os, "fdopen", fdopen)
    return disk
