"""KV-cache events into the routing state, without an engine: vLLM's own ZMQ publisher (the class
the engine core runs), the real consumer, the real router script and a real redis-server.

What a real engine publishes is tested with real vLLM in test_kvevents_vllm.py.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Sequence

import pytest
from redis import Redis

from common import keys
from common.blocks import block_hashes, model_seed
from producer.router import Router, RoutingConfig, parse_route
from producer.status import cluster_status, render_cluster, routing_source
from common.codec import WireCodec
from worker.kvevents import TOPIC, BlockMap, Changes, Endpoints, KvEventsConsumer

SEED = model_seed("kv-events-test-model")
BLOCK = 32
SHARDS = ("s0", "s1")


def tokens(marker: int, n: int) -> list[int]:
    rng = random.Random(marker)
    return [marker] + [rng.randrange(50_000) for _ in range(n - 1)]


# -- BlockMap: vLLM's blocks -> the producers' keys ------------------------------------------------


def test_stored_blocks_map_to_the_producers_keys_across_events() -> None:
    toks = tokens(1, 5 * BLOCK)
    expected = block_hashes(toks, BLOCK, SEED)
    blocks, changes = BlockMap(BLOCK, SEED), Changes()
    # vLLM reports the first two blocks, then the next three chained on its own hash of block 2.
    blocks.stored(["v1", "v2"], None, toks[:2 * BLOCK], BLOCK, changes)
    blocks.stored(["v3", "v4", "v5"], "v2", toks[2 * BLOCK:], BLOCK, changes)
    assert changes.added == set(expected) and not changes.removed
    assert len(blocks) == 5 and blocks.skipped == 0


def test_a_block_whose_parent_is_unknown_or_of_another_size_is_skipped() -> None:
    toks = tokens(2, 2 * BLOCK)
    blocks, changes = BlockMap(BLOCK, SEED), Changes()
    blocks.stored(["v2"], "never-seen", toks[BLOCK:], BLOCK, changes)
    blocks.stored(["w1"], None, toks[:16], 16, changes)
    assert not changes and blocks.skipped == 2


def test_a_key_held_by_two_blocks_stays_until_both_are_removed() -> None:
    toks = tokens(3, BLOCK)
    (key,) = block_hashes(toks, BLOCK, SEED)
    blocks, changes = BlockMap(BLOCK, SEED), Changes()
    blocks.stored(["a"], None, toks, BLOCK, changes)
    blocks.stored(["b"], None, toks, BLOCK, changes)  # the same content computed twice
    blocks.removed(["a"], changes)
    assert changes.added == {key} and not changes.removed
    blocks.removed(["b", "unknown"], changes)
    assert changes.removed == {key} and not changes.added


def test_clearing_forgets_everything_and_marks_the_set_for_deletion() -> None:
    toks = tokens(4, 2 * BLOCK)
    blocks, changes = BlockMap(BLOCK, SEED), Changes()
    blocks.stored(["a", "b"], None, toks, BLOCK, changes)
    blocks.cleared(changes)
    assert changes.cleared and not changes.added and len(blocks) == 0


# -- the consumer against vLLM's publisher, Redis and the router -------------------------------


@pytest.fixture
def publisher() -> Iterator[tuple[object, Endpoints]]:
    from vllm.distributed.kv_events import ZmqEventPublisher

    endpoints = Endpoints.private()
    pub = ZmqEventPublisher(0, endpoint=endpoints.pub, replay_endpoint=endpoints.replay, topic=TOPIC)
    yield pub, endpoints
    pub.shutdown()
    endpoints.remove()


def publish(pub: object, *events: object) -> None:
    from vllm.distributed.kv_events import KVEventBatch

    pub.publish(KVEventBatch(ts=time.time(), events=list(events)))  # type: ignore[attr-defined]


def stored(vllm_hashes: Sequence[bytes], parent: bytes | None, toks: Sequence[int]) -> object:
    from vllm.distributed.kv_events import BlockStored

    return BlockStored(block_hashes=list(vllm_hashes), parent_block_hash=parent, token_ids=list(toks),
                       block_size=BLOCK, lora_id=None, medium="GPU", lora_name=None)


def wait_for(check: Callable[[], bool], what: str, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def confirmed(redis: Redis, shard: str) -> set[bytes]:
    return set(redis.smembers(keys.kv_confirmed_key(shard)))


def route(redis: Redis, router: Router, hashes: Sequence[bytes], prompt_tokens: int):  # type: ignore[no-untyped-def]
    with redis.pipeline(transaction=False) as pipe:
        router.route(pipe, hashes, prompt_tokens)
        (reply,) = pipe.execute()
    return parse_route(reply)


def start_consumer(redis: Redis, endpoints: Endpoints, epoch: int = 1) -> KvEventsConsumer:
    redis.hset(keys.EPOCH_KEY, mapping={"s0": epoch, "s1": 1})
    return KvEventsConsumer(redis, "s0", epoch, endpoints, block_size=BLOCK, seed=SEED,
                            flush_interval_s=0.01, probe_interval_s=0.2, live_ttl_s=1).start()


def test_stored_and_removed_blocks_are_mirrored_in_redis(redis: Redis, publisher) -> None:  # type: ignore[no-untyped-def]
    pub, endpoints = publisher
    consumer = start_consumer(redis, endpoints)
    try:
        toks = tokens(5, 3 * BLOCK)
        expected = block_hashes(toks, BLOCK, SEED)
        # Published before the subscriber may have joined: the replay endpoint fills the gap.
        publish(pub, stored([b"v1", b"v2"], None, toks[:2 * BLOCK]))
        publish(pub, stored([b"v3"], b"v2", toks[2 * BLOCK:]))
        wait_for(lambda: confirmed(redis, "s0") == set(expected), "the stored blocks in Redis")
        wait_for(lambda: routing_source(1, redis.get(keys.kv_events_key("s0")),
                                        redis.get(keys.kv_live_key("s0"))) == "confirmed", "live events")

        from vllm.distributed.kv_events import AllBlocksCleared, BlockRemoved
        publish(pub, BlockRemoved(block_hashes=[b"v3"], medium="GPU"))
        wait_for(lambda: confirmed(redis, "s0") == set(expected[:2]), "the evicted block gone")
        publish(pub, AllBlocksCleared())
        wait_for(lambda: not confirmed(redis, "s0"), "a cleared cache")
    finally:
        consumer.stop(forget=True)
    assert not redis.exists(keys.kv_confirmed_key("s0"), keys.kv_live_key("s0"), keys.kv_events_key("s0"))


def test_a_worker_of_an_old_epoch_writes_nothing(redis: Redis, publisher) -> None:  # type: ignore[no-untyped-def]
    pub, endpoints = publisher
    consumer = start_consumer(redis, endpoints, epoch=1)
    try:
        publish(pub, stored([b"v1"], None, tokens(6, BLOCK)))
        wait_for(lambda: len(confirmed(redis, "s0")) == 1, "the first block")
        redis.hset(keys.EPOCH_KEY, "s0", 2)  # a new worker took the shard
        redis.delete(keys.kv_confirmed_key("s0"))
        publish(pub, stored([b"w1"], None, tokens(7, BLOCK)))
        wait_for(lambda: consumer.batches >= 2, "the second batch consumed")
        time.sleep(0.2)  # more than a flush interval
        assert not confirmed(redis, "s0")
    finally:
        consumer.stop(forget=False)


def test_router_counts_confirmed_blocks_and_they_replace_predictions(redis: Redis, publisher) -> None:  # type: ignore[no-untyped-def]
    pub, endpoints = publisher
    router = Router(redis, SHARDS, BLOCK, RoutingConfig(min_match_blocks=1, min_match_fraction=0.25))
    consumer = start_consumer(redis, endpoints)
    try:
        doc = tokens(8, 4 * BLOCK)
        hashes = block_hashes(doc, BLOCK, SEED)
        redis.hset(keys.LOAD_KEY, mapping={"s0": 1_000, "s1": 0})  # under the guard; s1 is least loaded
        publish(pub, stored([b"a", b"b", b"c"], None, doc[:3 * BLOCK]))  # s0 holds 3 of 4 blocks
        wait_for(lambda: len(confirmed(redis, "s0")) == 3, "three confirmed blocks")
        wait_for(lambda: redis.get(keys.kv_live_key("s0")) == b"1", "live events")

        r = route(redis, router, hashes, 4 * BLOCK + 10)
        assert (r.shard, r.matched_blocks, r.confirmed_blocks) == ("s0", 3, 3)
        assert r.load_tokens == BLOCK + 10  # only the unconfirmed block and the question
        # Only the block s0 is not confirmed to hold is predicted, with the short expiry.
        aff = [redis.get(keys.AFFINITY_PREFIX.encode() + h) for h in hashes]
        assert aff[:3] == [None, None, None] and aff[3] == b"s0|1"
        assert 0 < redis.ttl(keys.AFFINITY_PREFIX.encode() + hashes[3]) <= RoutingConfig().predicted_ttl_s

        # The fourth block is confirmed: its prediction is dropped, and only this shard's
        # entry where the block was sent to another shard too.
        other = keys.AFFINITY_PREFIX.encode() + block_hashes(tokens(9, BLOCK), BLOCK, SEED)[0]
        redis.set(other, "s1|0,s0|1,s2|4", ex=100)
        publish(pub, stored([b"d"], b"c", doc[3 * BLOCK:]))
        publish(pub, stored([b"e"], None, tokens(9, BLOCK)))
        wait_for(lambda: redis.get(keys.AFFINITY_PREFIX.encode() + hashes[3]) is None, "the prediction dropped")
        wait_for(lambda: redis.get(other) == b"s1|0,s2|4", "the shard's own entry dropped")
        assert 0 < redis.ttl(other) <= 100

        # Evicted from s0: the next request is routed as if the document were new.
        from vllm.distributed.kv_events import BlockRemoved
        publish(pub, BlockRemoved(block_hashes=[b"a", b"b", b"c", b"d", b"e"], medium="GPU"))
        wait_for(lambda: not confirmed(redis, "s0"), "the evicted blocks gone")
        r = route(redis, router, hashes, 4 * BLOCK + 10)
        assert (r.shard, r.matched_blocks, r.confirmed_blocks) == ("s1", 0, 0)
    finally:
        consumer.stop(forget=True)


def test_when_events_stop_routing_falls_back_to_prediction_and_status_says_so(
        redis: Redis, scratch_url: str) -> None:
    from vllm.distributed.kv_events import ZmqEventPublisher

    endpoints = Endpoints.private()
    pub = ZmqEventPublisher(0, endpoint=endpoints.pub, replay_endpoint=endpoints.replay, topic=TOPIC)
    router = Router(redis, SHARDS, BLOCK, RoutingConfig(min_match_blocks=1, min_match_fraction=0.25))
    consumer = start_consumer(redis, endpoints)
    try:
        doc = tokens(9, 2 * BLOCK)
        hashes = block_hashes(doc, BLOCK, SEED)
        publish(pub, stored([b"a", b"b"], None, doc))
        wait_for(lambda: len(confirmed(redis, "s0")) == 2 and redis.get(keys.kv_live_key("s0")) == b"1",
                 "confirmed blocks and live events")
        pub.shutdown()  # the engine's publisher is gone: no answer to the consumer's probes
        wait_for(lambda: redis.get(keys.kv_live_key("s0")) is None, "the live key to lapse")
        assert not consumer.live

        status = cluster_status(redis, SHARDS, WireCodec(), result_ttl_s=60)
        s0 = next(s for s in status.shards if s.shard == "s0")
        assert s0.routing == "predicted (events down)"
        assert "predicted (events down)" in render_cluster(status)

        # Confirmed entries no longer count; prediction takes over, with its long expiry.
        redis.hset(keys.LOAD_KEY, mapping={"s0": 1_000, "s1": 0})  # under the guard
        first = route(redis, router, hashes, 2 * BLOCK + 5)
        assert (first.shard, first.confirmed_blocks) == ("s1", 0)
        second = route(redis, router, hashes, 2 * BLOCK + 5)
        assert (second.shard, second.matched_blocks) == ("s1", 2)  # predicted on s1
        assert redis.ttl(keys.AFFINITY_PREFIX.encode() + hashes[0]) > RoutingConfig().predicted_ttl_s
    finally:
        consumer.stop(forget=True)
        endpoints.remove()
