"""Import TensorFlow without the start-up lines its C++ libraries print on stderr.

TensorFlow 2.21's import writes "oneDNN custom operations are on ..." and absl's
"All log messages before absl::InitializeLog() ..." straight to file descriptor 2,
whatever ``TF_CPP_MIN_LOG_LEVEL`` says, once in every process: a local run's learner and
each actor, so `make demo` showed a dozen of them. :func:`import_tensorflow` points fd 2
at /dev/null for the import alone (Python errors raised by it still print, after fd 2 is
back). ``SEED_VERBOSE=1`` (``seed --verbose``, inherited by the processes a run starts)
keeps TensorFlow's output.
"""

from __future__ import annotations

import os
import sys

VERBOSE_ENV = "SEED_VERBOSE"


def verbose() -> bool:
    return os.environ.get(VERBOSE_ENV, "") not in ("", "0")


def import_tensorflow():
    """``import tensorflow`` with its start-up noise hidden unless verbose; returns the module."""
    if verbose() or "tensorflow" in sys.modules:
        import tensorflow
        return tensorflow
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        import tensorflow
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)
    return tensorflow
