"""Facts about the machine and software a run used, recorded in config.json."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import socket
import subprocess
import sys
from pathlib import Path

_PACKAGES = ["tensorflow-cpu", "tensorflow", "keras", "grpcio", "protobuf", "numpy",
             "gymnasium", "ale-py", "gfootball", "ray"]


def package_versions() -> dict:
    out = {}
    for name in _PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


# The folders whose files decide what a run computes (pyproject's packages): a change to one of
# them since the commit makes the code "dirty"; results/, docs/ and the rest do not.
_CODE_DIRS = ("seed", "envs")


def code_version(checkout: Path | None = None) -> dict | None:
    """The code a run used: ``{"commit": <sha>, "dirty": <bool>}`` when the suite runs from a
    git checkout (dirty: a tracked file under the code folders differs from the commit), None
    where it does not (an installed wheel, no git on the machine). Results files record it so
    a figure can be traced to the code that made it, and before/after runs tell themselves
    apart without relying on their folder's name."""
    checkout = Path(checkout) if checkout else Path(__file__).resolve().parents[2]
    if not (checkout / ".git").exists():
        return None
    try:
        git = ["git", "-C", str(checkout)]
        commit = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=10, check=True).stdout.strip()
        changed = subprocess.run(git + ["status", "--porcelain", "--untracked-files=no", "--",
                                        *_CODE_DIRS], capture_output=True, text=True,
                                 timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit, "dirty": bool(changed)}


def machine_facts(accelerator: str | None = None) -> dict:
    facts = {
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "processor": platform.machine(),
        "cpu_count": os.cpu_count(),
        "python": sys.version.split()[0],
        "packages": package_versions(),
    }
    code = code_version()
    if code is not None:
        facts["code"] = code
    if accelerator is not None:
        facts["accelerator"] = accelerator
    return facts


def learner_device() -> str:
    """'GPU:0 (<name>)' when TensorFlow sees a GPU, else 'CPU'."""
    import tensorflow as tf
    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        return "CPU"
    try:
        name = tf.config.experimental.get_device_details(gpus[0]).get("device_name", "")
    except Exception:
        name = ""
    return f"GPU:0 ({name})" if name else "GPU:0"
