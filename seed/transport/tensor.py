"""NumPy arrays <-> Tensor messages: dtype name + shape + raw bytes, never pickle."""

from __future__ import annotations

import numpy as np

from seed.transport.proto import pb2

# Every dtype the suite puts on the wire. Anything else is refused both ways.
WIRE_DTYPES = frozenset({
    "bool", "uint8", "int8", "uint16", "int16", "int32", "uint32", "int64",
    "float16", "float32", "float64",
})


class WireError(ValueError):
    """A Tensor message that does not decode, or does not match what was expected."""


def encode(array) -> "pb2.Tensor":
    a = np.asarray(array)
    name = a.dtype.name
    if name not in WIRE_DTYPES:
        raise WireError(f"dtype {name} cannot cross the wire (allowed: {sorted(WIRE_DTYPES)})")
    a = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<"))
    return pb2.Tensor(dtype=name, shape=list(a.shape), data=a.tobytes())


def decode(msg, *, dtype: str | None = None, shape: tuple | None = None,
           name: str = "tensor") -> np.ndarray:
    """Decode a Tensor; check dtype and shape when given (``None`` in shape = any)."""
    if msg.dtype not in WIRE_DTYPES:
        raise WireError(f"{name}: unknown dtype {msg.dtype!r}")
    if dtype is not None and msg.dtype != dtype:
        raise WireError(f"{name}: expected dtype {dtype}, got {msg.dtype}")
    got_shape = tuple(int(d) for d in msg.shape)
    if any(d < 0 for d in got_shape):
        raise WireError(f"{name}: negative dimension in shape {got_shape}")
    if shape is not None:
        if len(shape) != len(got_shape) or any(
                want is not None and want != got for want, got in zip(shape, got_shape)):
            want = tuple("?" if d is None else d for d in shape)
            raise WireError(f"{name}: expected shape {want}, got {got_shape}")
    dt = np.dtype(msg.dtype).newbyteorder("<")
    expected = int(np.prod(got_shape, dtype=np.int64)) * dt.itemsize
    if len(msg.data) != expected:
        raise WireError(
            f"{name}: {len(msg.data)} bytes do not fill shape {got_shape} of {msg.dtype} "
            f"({expected} bytes)")
    return np.frombuffer(msg.data, dtype=dt).reshape(got_shape).astype(dt.newbyteorder("="),
                                                                       copy=False)
