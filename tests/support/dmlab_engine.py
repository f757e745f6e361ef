"""The real DeepMind Lab engine in tests.

`make dmlab-setup` builds it; `make test` builds it first and sets SEED_REQUIRE_DMLAB=1, so a test
marked `needs_dmlab` fails there when the engine is missing instead of skipping. A bare `pytest`
without the engine skips those tests and says how to build it.
"""

import importlib.util
import os

import pytest

BUILT = importlib.util.find_spec("deepmind_lab") is not None
REQUIRED = os.environ.get("SEED_REQUIRE_DMLAB") == "1"

needs_dmlab = pytest.mark.skipif(
    not BUILT and not REQUIRED, reason="DeepMind Lab is not built here (make dmlab-setup)")
