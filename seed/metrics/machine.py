"""Facts about the machine and software a run used, recorded in config.json."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import socket
import sys

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


def machine_facts(accelerator: str | None = None) -> dict:
    facts = {
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "processor": platform.machine(),
        "cpu_count": os.cpu_count(),
        "python": sys.version.split()[0],
        "packages": package_versions(),
    }
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
