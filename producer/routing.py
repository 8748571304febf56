"""Choosing a shard for a request.

This first router sends every request with the same routing key (a document's text, or the
prompt itself) to the same shard by a stable hash. It is the placeholder for the
prefix-affinity router; the one-queue-per-shard layout it feeds is final.
"""

from __future__ import annotations

from collections.abc import Sequence

import xxhash


def shard_for_key(route_key: str, shards: Sequence[str]) -> str:
    """The shard for ``route_key``: stable across processes and hosts (xxhash, never ``hash()``)."""
    return shards[xxhash.xxh64_intdigest(route_key.encode("utf-8")) % len(shards)]
