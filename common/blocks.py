"""Prefix block hashes: full token blocks, each hash chained on its parent's (xxhash, seeded).

Two prompts share the first ``k`` hashes exactly when they share their first ``k`` full blocks
of tokens, so the longest run of known hashes measures how much of a prompt a shard may hold
in its KV cache. The seed is derived from the model name: different models never collide.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

import xxhash

DEFAULT_BLOCK_SIZE = 16  # vLLM's default KV-cache block size


def model_seed(model_name: str) -> int:
    """The hash seed for ``model_name`` (stable across processes and hosts)."""
    return xxhash.xxh64_intdigest(model_name.encode("utf-8"))


def block_hashes(token_ids: Sequence[int], block_size: int, seed: int,
                 parent: bytes | None = None) -> list[bytes]:
    """One 8-byte hash per full block of ``token_ids``; block ``i`` chains on block ``i-1``.

    ``parent`` continues a chain: the hash of the block just before ``token_ids`` (the
    workers recompute the keys of blocks vLLM reports stored this way).
    """
    if block_size <= 0:
        raise ValueError(f"block_size must be positive, got {block_size}")
    tokens = array("I", token_ids).tobytes()
    step = block_size * 4
    parent = seed.to_bytes(8, "little") if parent is None else parent
    hashes: list[bytes] = []
    for start in range(0, (len(token_ids) // block_size) * step, step):
        parent = xxhash.xxh64_digest(parent + tokens[start:start + step], seed=seed)
        hashes.append(parent)
    return hashes
