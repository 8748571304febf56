"""The wire codec: msgpack, compressed with zlib level 1, behind a 3-byte prefixq header.

It has RQ's serializer shape (``dumps``/``loads``), so it plugs in as ``serializer=`` for
queues, workers, ``rq info --serializer common.codec.serializer`` and the dashboard. It never
unpickles: anything without its header is refused, and decompression is bounded so a small
payload cannot expand into gigabytes.
"""

from __future__ import annotations

import zlib
from typing import Any

import msgpack

from common.errors import DecodeError

MAGIC = b"PQ\x01"  # 'P' (0x50) is no valid zlib header byte, so RQ's own inflate attempt fails fast.
ZLIB_LEVEL = 1
DEFAULT_MAX_DECODED_BYTES = 64 * 1024 * 1024


class WireCodec:
    """msgpack + zlib(level 1) with a header; refuses foreign bytes; bounded inflate."""

    def __init__(self, max_decoded_bytes: int = DEFAULT_MAX_DECODED_BYTES) -> None:
        self.max_decoded_bytes = max_decoded_bytes

    def dumps(self, obj: Any) -> bytes:
        """Encode ``obj`` (msgpack types: None, bool, int, float, str, bytes, list, tuple, dict)."""
        try:
            packed = msgpack.packb(obj, use_bin_type=True)
        except (TypeError, ValueError, OverflowError) as e:
            raise DecodeError(f"cannot encode {type(obj).__name__} for the wire: {e}") from e
        return MAGIC + zlib.compress(packed, ZLIB_LEVEL)

    def loads(self, data: bytes) -> Any:
        """Decode bytes made by :meth:`dumps`; raise :class:`DecodeError` for anything else."""
        if not is_own_format(data):
            raise DecodeError("not prefixq wire data (missing header): refusing to decode")
        packed = inflate_bounded(memoryview(data)[len(MAGIC):], self.max_decoded_bytes)
        try:
            return msgpack.unpackb(packed, raw=False, strict_map_key=False)
        except (msgpack.ExtraData, msgpack.FormatError, msgpack.StackError, ValueError) as e:
            raise DecodeError(f"corrupt msgpack payload: {e}") from e


def is_own_format(data: bytes | bytearray | memoryview) -> bool:
    """Whether ``data`` starts with prefixq's header (cheap; decodes nothing)."""
    return bytes(data[: len(MAGIC)]) == MAGIC


def inflate_bounded(data: bytes | memoryview, max_bytes: int) -> bytes:
    """zlib-decompress ``data``, refusing output larger than ``max_bytes``."""
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(data, max_bytes)
    except zlib.error as e:
        raise DecodeError(f"corrupt compressed payload: {e}") from e
    if inflater.unconsumed_tail:
        raise DecodeError(f"payload inflates beyond the limit of {max_bytes} bytes")
    if not inflater.eof:
        raise DecodeError("truncated compressed payload")
    return out


# The default instance: `serializer=common.codec.serializer` wherever RQ asks for one.
serializer = WireCodec()
# Its import path, for RQ APIs that record a serializer by name (workers, `rq info --serializer`).
SERIALIZER_PATH = "common.codec.serializer"
