"""The worker's pull against a real redis-server: batches, blocking on an empty queue, and
waking a blocked pull to stop. Pulls move ids only, so bare ids on the queue list suffice."""

from __future__ import annotations

import threading

from redis import Redis

from common.codec import WireCodec
from worker.rqbatch import ShardQueue


def shard_queue(redis: Redis) -> ShardQueue:
    rq = ShardQueue(redis, "gpu0", WireCodec(), name="gpu0.pulltest", result_ttl_s=3600,
                    heartbeat_ttl_s=60)
    rq.announce()
    return rq


def test_a_pull_after_the_queue_was_emptied_still_gets_what_arrived_meanwhile(redis: Redis) -> None:
    rq = shard_queue(redis)
    redis.rpush(rq.queue.key, b"a", b"b", b"c")
    assert rq.pull(2, 1.0) == [b"a", b"b"]
    assert rq.pull(2, 1.0) == [b"c"]  # fewer than asked: the queue is empty now
    redis.rpush(rq.queue.key, b"d", b"e")
    # This pull goes straight to the blocking move; the window lets the rest follow.
    assert rq.pull(2, 1.0, 0.01) == [b"d", b"e"]
    redis.rpush(rq.queue.key, b"f")
    assert rq.pull(2, 1.0) == [b"f"]
    redis.rpush(rq.queue.key, b"g")
    assert rq.pull(2, 0) == [b"g"]  # a pull that must not block always asks
    assert redis.lrange(rq.queue.intermediate_queue_key, 0, -1) == [b"a", b"b", b"c", b"d", b"e", b"f", b"g"]


def test_wake_ends_a_pull_blocked_on_the_empty_queue(redis: Redis) -> None:
    rq = shard_queue(redis)
    assert rq.wake() == 0  # nothing blocked yet
    pulled: list[list[bytes]] = []
    # Blocked for an hour, the pull can only end within the test's timeout by being woken.
    puller = threading.Thread(target=lambda: pulled.append(rq.pull(8, 3600.0)))
    puller.start()
    # Until Redis shows the pull blocked (flag b): an earlier test's connection of the same name
    # may still be open with BLMOVE as its last command, and waking before the block wakes nothing.
    while not any(c.get("name") == rq.pull_client_name and "b" in c.get("flags", "")
                  for c in redis.client_list()):
        puller.join(0.01)
    woken = rq.wake()
    puller.join()
    assert woken == 1 and not puller.is_alive()
    assert pulled == [[]]
    redis.rpush(rq.queue.key, b"x")  # the blocking connection is still usable
    assert rq.pull(8, 5.0) == [b"x"]
