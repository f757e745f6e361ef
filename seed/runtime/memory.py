"""Whether a run's buffer fits in this machine's memory, checked before the run starts.

R2D2's prioritized replay holds ``replay_capacity`` sequences, V-trace's FIFO
``queue_capacity`` unrolls, each a whole unroll of the run's :class:`UnrollSpec`: its arrays
(:attr:`UnrollSpec.nbytes`) and the Python objects around them (:data:`ARRAY_OVERHEAD` per
array). A buffer that, full, would take more than :data:`MEMORY_SHARE` of the memory available
now (psutil's ``available``: free memory and the caches the kernel can drop) is refused in
one line with both figures and the largest capacity that fits, rather than found when the
kernel kills the learner hours later. The share leaves room for everything else the machine
runs: TensorFlow, the actors and their engines, the batch being trained on.
"""

from __future__ import annotations

import psutil

from seed.config import ConfigError
from seed.unroll_spec import UnrollSpec

MEMORY_SHARE = 0.8  # of the available memory, at most, for the run's buffer
# Bytes of Python objects per array of a held unroll (its ndarray header and its share of the
# base it views, the Unroll, its tuples and dict, the buffer's slot): 170-310 measured with
# tracemalloc on SEED's and R2D2's unrolls (tests/runtime/test_memory.py), rounded up.
ARRAY_OVERHEAD = 384


def item_bytes(spec: UnrollSpec) -> int:
    """What a buffer holding one unroll of ``spec`` keeps of it, in bytes."""
    arrays = len(spec.step) + len(spec.core_state)
    return spec.nbytes + ARRAY_OVERHEAD * arrays


def _describe(buffer) -> tuple[str, str, str]:
    """(what the buffer is, what it holds, the config key of its capacity)."""
    from seed.buffers.prioritized import PrioritizedReplay
    from seed.buffers.unroll_queue import UnrollQueue
    if isinstance(buffer, PrioritizedReplay):
        return "replay", "sequences", "replay_capacity"
    if isinstance(buffer, UnrollQueue):
        return "unroll FIFO", "unrolls", "queue_capacity"
    return f"{type(buffer).__name__} buffer", "unrolls", "its capacity"


def check_buffer(buffer, spec: UnrollSpec, available: int | None = None) -> None:
    """ConfigError (one line) if ``buffer``, full of unrolls of ``spec``, would take more than
    :data:`MEMORY_SHARE` of ``available`` bytes (default: what psutil says is available)."""
    if available is None:
        available = psutil.virtual_memory().available
    each = item_bytes(spec)
    need = buffer.capacity * each
    allowed = int(MEMORY_SHARE * available)
    if need <= allowed:
        return
    what, items, key = _describe(buffer)
    raise ConfigError(
        f"the {what} of {buffer.capacity:,} {items} would take {_size(need)} "
        f"({_size(each)} each), more than {MEMORY_SHARE:.0%} of the {_size(available)} "
        f"of memory available ({_size(allowed)}); the largest {key} that fits is "
        f"{allowed // each:,}")


def _size(n: int) -> str:
    """``n`` bytes to three figures in the largest binary unit it reaches."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} bytes"
