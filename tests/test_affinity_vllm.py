"""Prefix affinity on real workers: a slice of the reuse burst reaches the oracle's cache hits."""

from __future__ import annotations

import pytest

from benchmarks.routing import oracle_cached_tokens
from benchmarks.workloads import WORKLOADS, load_items
from common.config import Settings
from producer.client import Client

pytestmark = pytest.mark.vllm


@pytest.mark.skipif(not (WORKLOADS / "reuse-256.jsonl").exists(), reason="shared/workloads not present")
def test_reuse_slice_cached_fraction_reaches_oracle(worker_url: str, workers: object) -> None:
    settings = Settings.from_env(redis_url=worker_url)
    client = Client(settings)
    items = load_items("reuse-256", max_tokens=4, temperature=0.0)[40:72]  # 8 documents x 4 questions
    results = client.submit_many(items).wait(timeout=900)
    assert all(r.is_ok for r in results), [r.error for r in results if not r.is_ok]
    completions = [r.completion for r in results if r.completion is not None]

    by_doc: dict[str, set[str]] = {}
    for r in results:
        assert r.completion is not None
        by_doc.setdefault(r.tag.rsplit("/", 1)[0], set()).add(r.completion.shard)
    assert len(by_doc) == 8 and all(len(shards) == 1 for shards in by_doc.values())

    oracle, total = oracle_cached_tokens(client, items, settings.block_size)
    cached = sum(c.cached_tokens for c in completions)
    assert total == sum(c.prompt_tokens for c in completions)  # the producer counts as vLLM does
    assert oracle > 0 and cached >= 0.95 * oracle, f"cached {cached} of oracle {oracle} (of {total})"
