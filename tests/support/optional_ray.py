"""Ray for the tests that use it, or None without it, imported with its node address kept
on loopback: Ray reads ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER`` at import (docs/ray.md), and
pytest may import any of those test modules first."""

import os

import pytest

LOOPBACK_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
os.environ.setdefault(LOOPBACK_ONLY, "0")

try:
    import ray
except ImportError:
    ray = None

HAVE_RAY = ray is not None
needs_ray = pytest.mark.skipif(
    not HAVE_RAY, reason="ray is not installed: pip install 'ray[default]>=2.40'")
