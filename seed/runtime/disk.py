"""A full disk under a run: writes that leave a file whole, and the one line that stops the run.

Every file a run rewrites (``checkpoint.npz``, ``config.json``, ``summary.json``) is replaced
atomically (:func:`replace_atomically`): a write that fails, for want of space or anything
else, leaves the previous content in place. The CSV files are appended a whole row at a time
and cut back to their last whole row when a write fails (:mod:`seed.metrics.writer`). A
write that fails for want of space (ENOSPC, or EDQUOT: a quota) names its file in the
:class:`OSError` it raises; the run then stops as on any failure (actors first, no final
row or checkpoint) and :class:`DiskFull` says, in one line, which file, why, how many frames
the last intact checkpoint holds and how to resume once space is freed.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT})


class DiskFull(RuntimeError):
    """The run stopped because a file it writes could not be written for want of space."""


def replace_atomically(path: str | Path, write) -> Path:
    """Give ``path`` new content, ``write(f)`` on a binary file: written to a temp file in
    the same directory, fsynced, renamed over ``path``. On any failure ``path`` keeps its
    old content (or stays absent), the temp file is removed, and an OSError names ``path``."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=path.suffix, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(e, OSError) and e.filename is None:
            raise OSError(e.errno, e.strerror, str(path)) from e
        raise
    return path


def no_space(error: BaseException | None) -> OSError | None:
    """The out-of-space OSError ``error`` is or was caused by, if any."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, OSError) and error.errno in NO_SPACE:
            return error
        error = error.__cause__ or error.__context__
    return None


def disk_full(cause: OSError, run_dir: Path, checkpoint_frames: int | None,
              command: str) -> DiskFull:
    """The one line a run stopped by ``cause`` ends with: the file and the cause, the frames of
    the last intact checkpoint (None: none written yet) and how to go on (``command``: the
    ``seed`` subcommand that ran, ``train`` or ``learner``)."""
    what = (f"{cause.filename or f'a file under {run_dir}'}: "
            f"{cause.strerror or os.strerror(cause.errno)}")
    if checkpoint_frames is None:
        return DiskFull(f"{what}; the run stopped with no checkpoint to resume from: free "
                        f"space, then start it again")
    return DiskFull(f"{what}; the run stopped, its last intact checkpoint holds "
                    f"{checkpoint_frames:,} frames: free space, then resume with "
                    f"`seed {command} --resume {run_dir}`")
