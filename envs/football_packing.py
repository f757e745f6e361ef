"""Bit packing of Google Research Football's binary observation planes (NumPy only).

The Super Mini Map (SMM) observation is ``[H, W, P]`` uint8 where every value is
0 or 255. Packing keeps one bit per value: plane ``p`` becomes bit ``7 - p % 8``
of byte ``p // 8`` (most significant bit first, NumPy's ``packbits`` order), so
16 stacked planes ``[72, 96, 16]`` travel as ``[72, 96, 2]`` uint8, 8x smaller.
The TensorFlow inverse used by the network is
:func:`seed.networks.football.unpack_planes`; it follows the same bit order.
"""

from __future__ import annotations

import numpy as np


def packed_depth(num_planes: int) -> int:
    """Bytes along the last axis that ``num_planes`` binary planes pack into."""
    if num_planes < 1:
        raise ValueError(f"num_planes must be at least 1, got {num_planes}")
    return (num_planes + 7) // 8


def pack_planes(planes: np.ndarray) -> np.ndarray:
    """Pack binary planes ``[..., P]`` (any nonzero value is 1) into ``[..., ceil(P/8)]`` uint8."""
    planes = np.asarray(planes)
    if planes.ndim < 1 or planes.shape[-1] < 1:
        raise ValueError(f"expected planes on the last axis, got shape {planes.shape}")
    return np.packbits(planes != 0, axis=-1)


def unpack_planes(packed: np.ndarray, num_planes: int, value: int = 1) -> np.ndarray:
    """Inverse of :func:`pack_planes`: ``[..., ceil(P/8)]`` uint8 -> ``[..., P]`` uint8 of 0/``value``."""
    packed = np.asarray(packed)
    if packed.dtype != np.uint8:
        raise ValueError(f"packed planes must be uint8, got {packed.dtype}")
    if packed.shape[-1] != packed_depth(num_planes):
        raise ValueError(f"{num_planes} planes pack into {packed_depth(num_planes)} bytes, "
                         f"got last axis {packed.shape[-1]}")
    bits = np.unpackbits(packed, axis=-1, count=num_planes)
    return bits * np.uint8(value)
