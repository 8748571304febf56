"""KV-cache events into the routing state, without an engine: vLLM's own ZMQ publisher and
prefixq's (the classes an engine core runs), the real consumer, the real router script and a real
redis-server.

What a real engine publishes is tested with real vLLM in test_kvevents_vllm.py.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from common import keys
from common.blocks import block_hashes, model_seed
from producer.router import Router, RoutingConfig, parse_routes
from producer.status import cluster_status, render_cluster, routing_source
from common.codec import WireCodec
from worker import vllm_plugin
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


PUBLISHERS = ("vllm", vllm_plugin.INLINE)


def new_publisher(kind: str, endpoints: Endpoints) -> Any:
    """vLLM's ZMQ publisher, or prefixq's, which sends as each step ends (worker/vllm_plugin.py)."""
    from vllm.distributed.kv_events import ZmqEventPublisher

    cls = vllm_plugin.publisher_class() if kind == vllm_plugin.INLINE else ZmqEventPublisher
    return cls(0, endpoint=endpoints.pub, replay_endpoint=endpoints.replay, topic=TOPIC)


@pytest.fixture(params=PUBLISHERS)
def publisher(request: pytest.FixtureRequest) -> Iterator[tuple[object, Endpoints]]:
    endpoints = Endpoints.private()
    pub = new_publisher(request.param, endpoints)
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
        router.route(pipe, [(hashes, prompt_tokens)])
        (reply,) = pipe.execute()
    return parse_routes([reply])[0]


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


@pytest.mark.parametrize("kind", PUBLISHERS)
def test_when_events_stop_routing_falls_back_to_prediction_and_status_says_so(
        redis: Redis, scratch_url: str, kind: str) -> None:
    endpoints = Endpoints.private()
    pub = new_publisher(kind, endpoints)
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


# -- prefixq's publisher (worker/vllm_plugin.py) ------------------------------------------------


def _received(sock: Any, n: int) -> list[list[bytes]]:
    frames = []
    while len(frames) < n:
        assert sock.poll(5_000), f"{len(frames)} of {n} messages within 5 s"
        frames.append(sock.recv_multipart())
    return frames


def test_inline_publisher_sends_in_order_replays_and_shuts_down() -> None:
    import msgspec
    import zmq
    from vllm.distributed.kv_events import KVEventBatch

    endpoints = Endpoints.private()
    pub = new_publisher(vllm_plugin.INLINE, endpoints)
    ctx = zmq.Context.instance()
    sub, req = ctx.socket(zmq.SUB), ctx.socket(zmq.DEALER)  # the consumer asks for replays so
    sub.setsockopt_string(zmq.SUBSCRIBE, TOPIC)
    decoder = msgspec.msgpack.Decoder(type=KVEventBatch)
    try:
        steps = [[stored([bytes([i])], None, tokens(i, BLOCK))] for i in range(5)]
        for events in steps[:2]:  # nobody listens yet: PUB drops these, the replay has them
            publish(pub, *events)
        sub.connect(endpoints.pub)
        time.sleep(0.3)  # the subscription reaches the publisher
        for events in steps[2:]:
            publish(pub, *events)
        live = _received(sub, 3)
        req.connect(endpoints.replay)
        req.send_multipart([b"", (1).to_bytes(8, "big")])  # every batch from sequence number 1 on
        replayed = _received(req, 1)
        while replayed[-1][2] != (-1).to_bytes(8, "big", signed=True):  # vLLM's end marker
            replayed += _received(req, 1)

        thread = pub._thread
        assert thread.is_alive()  # the replay thread, waiting for requests
        pub.shutdown()
        assert not thread.is_alive()
        pub.shutdown()  # a second shutdown does nothing
        with pytest.raises(RuntimeError):
            publish(pub)
    finally:
        sub.close(linger=0)
        req.close(linger=0)
        endpoints.remove()
    assert [(topic, int.from_bytes(seq, "big")) for topic, seq, _ in live] == \
        [(TOPIC.encode(), i) for i in (2, 3, 4)]
    batches = [decoder.decode(payload) for _, _, payload in live]
    assert [b.events for b in batches] == steps[2:] and all(b.data_parallel_rank == 0 for b in batches)
    assert [int.from_bytes(seq, "big") for _, _, seq, _ in replayed[:-1]] == [1, 2, 3, 4]
    assert [decoder.decode(payload).events for _, _, _, payload in replayed[:-1]] == steps[1:]


def _voluntary_switches(thread: Any) -> int:
    status = Path(f"/proc/self/task/{thread.native_id}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines()
                    if line.startswith("voluntary_ctxt_switches")))


def test_inline_publishers_thread_sleeps_while_nothing_is_asked_of_it() -> None:
    """vLLM's publisher thread wakes ten times a second with nothing to send; prefixq's replay
    thread wakes only for a replay request."""
    endpoints = {kind: Endpoints.private() for kind in PUBLISHERS}
    pubs = {kind: new_publisher(kind, endpoints[kind]) for kind in PUBLISHERS}
    try:
        time.sleep(0.3)  # both threads reach their wait
        before = {kind: _voluntary_switches(pub._thread) for kind, pub in pubs.items()}
        time.sleep(1.0)
        woke = {kind: _voluntary_switches(pub._thread) - before[kind] for kind, pub in pubs.items()}
    finally:
        for kind, pub in pubs.items():
            pub.shutdown()
            endpoints[kind].remove()
    assert woke[vllm_plugin.INLINE] == 0, woke
    assert woke["vllm"] >= 3, woke  # the count itself works: vLLM's timer shows in it


def test_the_plugin_gives_prefixqs_publisher_to_engines_that_ask_for_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from vllm.config.kv_events import KVEventsConfig
    from vllm.distributed.kv_events import EventPublisherFactory, ZmqEventPublisher

    vllm_plugin.register()
    vllm_plugin.register()  # vLLM may load plugins more than once in a process
    for env, expected in ((vllm_plugin.INLINE, vllm_plugin.publisher_class()),
                          ("vllm", ZmqEventPublisher), (None, ZmqEventPublisher)):
        if env is None:
            monkeypatch.delenv(vllm_plugin.ENV, raising=False)
        else:
            monkeypatch.setenv(vllm_plugin.ENV, env)
        endpoints = Endpoints.private()
        pub = EventPublisherFactory.create(KVEventsConfig(
            enable_kv_cache_events=True, publisher="zmq", endpoint=endpoints.pub,
            replay_endpoint=endpoints.replay, topic=TOPIC))
        try:
            assert type(pub) is expected, env
        finally:
            pub.shutdown()
            endpoints.remove()


def test_a_live_key_that_would_lapse_between_refreshes_is_refused(redis: Redis) -> None:
    endpoints = Endpoints(pub="ipc:///nonexistent/pub", replay="ipc:///nonexistent/replay")
    with pytest.raises(ValueError, match="must outlast"):
        KvEventsConsumer(redis, "gpu0", 1, endpoints, block_size=16, seed=0, flush_interval_s=2.0,
                         probe_interval_s=1.0, live_ttl_s=2.0)
    consumer = KvEventsConsumer(redis, "gpu0", 1, endpoints, block_size=16, seed=0)
    assert consumer.refresh_interval_s == consumer.flush_interval_s < consumer.live_ttl_s
