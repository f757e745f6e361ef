import numpy as np
import pytest

from seed.transport import tensor as wire
from seed.transport.proto import pb2


@pytest.mark.parametrize("dtype", sorted(wire.WIRE_DTYPES))
def test_round_trip_every_wire_dtype(dtype):
    rng = np.random.default_rng(0)
    a = (rng.integers(0, 100, size=(3, 4, 2)) % (2 if dtype == "bool" else 100)).astype(dtype)
    msg = wire.encode(a)
    assert msg.dtype == dtype and list(msg.shape) == [3, 4, 2]
    assert len(msg.data) == a.nbytes
    b = wire.decode(pb2.Tensor.FromString(msg.SerializeToString()))
    assert b.dtype == a.dtype and b.shape == a.shape
    np.testing.assert_array_equal(a, b)


def test_scalar_and_empty_and_non_contiguous():
    assert wire.decode(wire.encode(np.float32(2.5))) == np.float32(2.5)
    e = wire.decode(wire.encode(np.zeros((0, 5), np.uint8)))
    assert e.shape == (0, 5)
    a = np.arange(20, dtype=np.int32).reshape(4, 5)[:, ::2]
    np.testing.assert_array_equal(wire.decode(wire.encode(a)), a)


def test_bytes_are_little_endian_c_order():
    msg = wire.encode(np.array([[1, 2], [3, 4]], np.uint16))
    assert msg.data == bytes([1, 0, 2, 0, 3, 0, 4, 0])


def test_refuses_unknown_dtype_both_ways():
    with pytest.raises(wire.WireError, match="cannot cross the wire"):
        wire.encode(np.array(["a"]))
    with pytest.raises(wire.WireError, match="unknown dtype"):
        wire.decode(pb2.Tensor(dtype="object", shape=[1], data=b"x"))


def test_checks_dtype_shape_and_size():
    msg = wire.encode(np.zeros((2, 3), np.float32))
    with pytest.raises(wire.WireError, match="expected dtype uint8, got float32"):
        wire.decode(msg, dtype="uint8")
    with pytest.raises(wire.WireError, match=r"expected shape \(2, 4\)"):
        wire.decode(msg, shape=(2, 4))
    assert wire.decode(msg, shape=(None, 3)).shape == (2, 3)
    bad = pb2.Tensor(dtype="float32", shape=[2, 3], data=b"\0" * 7)
    with pytest.raises(wire.WireError, match="7 bytes do not fill"):
        wire.decode(bad)
