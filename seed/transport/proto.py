"""Generated protobuf/gRPC modules for seed_rl.proto, compiled on first import.

The generated files are build output (git-ignored): they are regenerated with
grpc_tools whenever missing or older than the .proto, so the protobuf runtime
and the generated code always match.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_ROOT = _HERE.parent.parent
_PROTO = _HERE / "seed_rl.proto"


def _stale(target: Path) -> bool:
    return not target.exists() or target.stat().st_mtime < _PROTO.stat().st_mtime


def _compile() -> None:
    import grpc_tools

    include = str(Path(grpc_tools.__file__).parent / "_proto")
    # Compile into a temp dir, then move into place atomically: concurrent
    # processes (learner + actors starting together) never see half a file.
    # protoc runs in a child process: in a process that has loaded TensorFlow, grpc_tools'
    # compiler crashes (a segfault, with the TensorFlow wheel's own protobuf loaded).
    with tempfile.TemporaryDirectory(dir=_HERE) as tmp:
        done = subprocess.run([
            sys.executable, "-m", "grpc_tools.protoc", f"-I{_ROOT}", f"-I{include}",
            f"--python_out={tmp}", f"--grpc_python_out={tmp}",
            str(_PROTO.relative_to(_ROOT)),
        ], capture_output=True, text=True)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise RuntimeError(f"protoc failed on {_PROTO} (exit {done.returncode}): {last}")
        for name in ("seed_rl_pb2.py", "seed_rl_pb2_grpc.py"):
            os.replace(Path(tmp) / "seed" / "transport" / name, _HERE / name)


if _stale(_HERE / "seed_rl_pb2.py") or _stale(_HERE / "seed_rl_pb2_grpc.py"):
    _compile()
    importlib.invalidate_caches()

pb2 = importlib.import_module("seed.transport.seed_rl_pb2")
pb2_grpc = importlib.import_module("seed.transport.seed_rl_pb2_grpc")

__all__ = ["pb2", "pb2_grpc"]
