"""KV-cache events from real vLLM (the built-in model, on the CPU) into Redis: a document's blocks
are confirmed for the shard that answered it, and leave Redis when the KV cache evicts them."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis

from common import keys
from common.blocks import model_seed
from common.config import Settings
from common.model import BUILTIN_MODEL_NAME
from common.prompts import load_tokenizer
from producer.client import Client
from producer.items import Item
from producer.launch import RedisServer, WorkerProcess
from producer.prepare import prepare
from producer.status import cluster_status
from common.codec import WireCodec

pytestmark = pytest.mark.vllm

KV_DB = 13
NUM_BLOCKS = 40  # 1,280 tokens of KV cache: three documents' worth
MAX_MODEL_LEN = 1024


def document(i: int) -> str:
    """About 400 tokens of text unique to document ``i`` from its first sentence on."""
    facts = " ".join(f"In district {i}-{j}, the river is called R{i * 100 + j} and the main square has "
                     f"{j + 3} fountains." for j in range(14))
    return f"Report number {i}. {facts}"


@pytest.fixture
def tiny_cache_worker(redis_server: RedisServer, model_path: str,
                      tmp_path: Path) -> Iterator[tuple[str, WorkerProcess]]:
    """One worker for shard kv0 whose KV cache holds only 40 blocks."""
    url = f"redis://127.0.0.1:{redis_server.port}/{KV_DB}"
    Redis.from_url(url).flushdb()
    env = {"PREFIXQ_SHARDS": "kv0", "VLLM_LOGGING_LEVEL": "INFO"}  # INFO: the engine names its publisher
    proc = WorkerProcess("kv0", redis_url=url, core=0, log_dir=tmp_path, env=env,
                         extra_args=("--kv-cache-blocks", str(NUM_BLOCKS),
                                     "--max-model-len", str(MAX_MODEL_LEN))).start()
    try:
        proc.wait_ready(600)
        yield url, proc
    finally:
        proc.stop()


def _wait_for(check, what: str, timeout_s: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def test_answered_blocks_are_confirmed_and_evicted_ones_leave_redis(
        tiny_cache_worker: tuple[str, WorkerProcess], model_path: str) -> None:
    url, worker = tiny_cache_worker
    # The engine publishes through prefixq's plugin (worker/vllm_plugin.py), which vLLM loaded.
    assert "KV-cache events sent as each step ends (prefixq's publisher)" in worker.log_text()
    redis = Redis.from_url(url)
    settings = Settings.from_env({}, redis_url=url, shards=("kv0",), max_tokens=8,
                                 max_model_len=MAX_MODEL_LEN)
    client = Client(settings)
    first = Item.document_question(document(0), "What is the river in district 0-3 called?")
    # The producers' block keys of the first document (its shared head), as routing computes them.
    (prepared,) = prepare(load_tokenizer(model_path), [first], settings.block_size,
                          model_seed(BUILTIN_MODEL_NAME))
    doc_keys = set(prepared.hashes)
    assert len(doc_keys) >= 8

    (result,) = client.submit_many([first]).wait(timeout=300)
    assert result.is_ok and result.completion is not None
    confirmed = keys.kv_confirmed_key("kv0")
    _wait_for(lambda: doc_keys <= set(redis.smembers(confirmed)), "the document's blocks confirmed")
    status = cluster_status(redis, ("kv0",), WireCodec(), result_ttl_s=settings.result_ttl_s)
    assert status.shards[0].routing == "confirmed" and status.shards[0].confirmed_blocks >= len(doc_keys)

    # Other documents, one after another, need more blocks than the cache has left: vLLM evicts
    # the first document's blocks, and its events take them out of Redis.
    for i in range(1, 9):
        (other,) = client.submit_many([Item.document_question(document(i), "How many fountains?")]) \
            .wait(timeout=300)
        assert other.is_ok
    _wait_for(lambda: not doc_keys & set(redis.smembers(confirmed)), "the evicted blocks gone from Redis")
    assert redis.scard(confirmed) <= NUM_BLOCKS  # never more than the cache can hold
