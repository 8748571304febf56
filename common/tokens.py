"""Token ids on the wire: a width byte (2 or 4) and the ids as little-endian unsigned integers.

Ids below 65,536 take two bytes each. That is smaller, after zlib, than the text they stand for
(SmolLM2 on the benchmark documents: 47 KB of ids against 62 KB of text).
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Sequence

from common.errors import DecodeError

_TYPECODES = {2: "H", 4: "I"}
_BIG_ENDIAN = sys.byteorder == "big"


def pack_ids(ids: Sequence[int]) -> bytes:
    """Pack token ids (each in 0 .. 2**32 - 1)."""
    width = 2 if not ids or max(ids) < 1 << 16 else 4
    try:
        packed = array(_TYPECODES[width], ids)
    except OverflowError as e:
        raise DecodeError(f"token id out of range: {e}") from e
    if _BIG_ENDIAN:
        packed.byteswap()
    return bytes((width,)) + packed.tobytes()


def unpack_ids(data: bytes) -> array[int]:
    """The ids :func:`pack_ids` packed, as an array (``.tolist()`` makes the list)."""
    if not data or data[0] not in _TYPECODES or (len(data) - 1) % data[0]:
        raise DecodeError("malformed token ids: bad width byte or length")
    ids = array(_TYPECODES[data[0]])
    ids.frombytes(memoryview(data)[1:])
    if _BIG_ENDIAN:
        ids.byteswap()
    return ids
