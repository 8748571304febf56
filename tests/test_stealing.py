"""Taking queued work from a busier shard (worker/stealing.py), against the session's real
redis-server: whole prefix groups from the queue's tail, the reserved load moved with them, and
the jobs then started, stored and recovered as the taking shard's own."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from redis import Redis
from rq.job import Job
from rq.registry import StartedJobRegistry

from common import keys
from common.codec import WireCodec
from common.config import Settings
from common.schema import Completion
from producer.client import Client
from producer.items import Item
from worker.engines import SimEngine
from worker.rqbatch import Outcome, ShardQueue
from worker.runner import WorkerRunner
from worker.stealing import Queued, Stealer, queue_key, tail_groups

DOC = "The {n}th report. " + "It says a great deal about nothing in particular. " * 12


def q(job_id: str, group: str | None, tokens: int = 10) -> Queued:
    return Queued(job_id.encode(), group, tokens)


def ids(chosen: list[Queued]) -> list[str]:
    return [c.job_id.decode() for c in chosen]


def test_whole_groups_move_from_the_tail_and_the_front_group_stays() -> None:
    queue = [q("a1", "A"), q("a2", "A"), q("b1", "B"), q("b2", "B"), q("c1", "C")]
    assert ids(tail_groups(queue, 1000)) == ["b1", "b2", "c1"]
    assert ids(tail_groups(queue, 29)) == ["c1"]  # b's pair (20 tokens) would overshoot
    assert ids(tail_groups(queue, 9)) == []  # not even c fits
    assert ids(tail_groups(queue, 1000, max_jobs=2)) == ["c1"]  # b's pair would make three jobs
    assert tail_groups([q("a1", "A"), q("a2", "A")], 1000) == []  # only the front group: it stays


def test_jobs_without_a_prefix_move_alone_even_at_the_front() -> None:
    assert ids(tail_groups([q("p1", ""), q("p2", ""), q("a1", "A")], 1000)) == ["p1", "p2", "a1"]


def test_nothing_before_an_unreadable_job_moves() -> None:
    queue = [q("a1", "A"), q("x", None), q("b1", "B"), q("c1", "C")]
    assert ids(tail_groups(queue, 1000)) == ["b1", "c1"]


def _busy_shard(url: str, model_path: str, num_docs: int, per_doc: int) -> tuple[Client, list[list[str]]]:
    """A submission of ``num_docs`` documents x ``per_doc`` questions, all routed to s0 (the
    producer knows no other shard); the job ids per document."""
    client = Client(Settings.from_env({}, redis_url=url, shards=("s0",), kv_events=False))
    items = [Item.document_question(DOC.format(n=n), f"Question {i} about {n}?", tag=f"d{n}/{i}", max_tokens=4)
             for n in range(num_docs) for i in range(per_doc)]
    submission = client.submit_many(items)
    return client, [submission.job_ids[n * per_doc:(n + 1) * per_doc] for n in range(num_docs)]


def _load(redis: Redis) -> dict[str, int]:
    return {k.decode(): int(v) for k, v in redis.hgetall(keys.LOAD_KEY).items()}


def test_steal_takes_whole_documents_from_the_tail_with_their_load(redis: Redis, scratch_url: str,
                                                                    model_path: str) -> None:
    _, docs = _busy_shard(scratch_url, model_path, num_docs=6, per_doc=3)
    before = _load(redis)["s0"]
    stealer = Stealer(redis, WireCodec(), "s1", ("s0", "s1"), "rq:queue:s1:intermediate")

    moved = [i.decode() for i in stealer.steal(10**9)]

    load = _load(redis)
    assert moved and load["s0"] + load["s1"] == before  # the work moved, none was lost
    assert 0 < load["s1"] <= before // 2 <= load["s0"]  # at most half the difference
    taken = [doc for doc in docs if set(doc) <= set(moved)]
    assert sorted(moved) == sorted(j for doc in taken for j in doc)  # whole documents only
    assert docs[-1] in taken and docs[0] not in taken  # from the tail; the front document stays
    queued = [i.decode() for i in redis.lrange(queue_key("s0"), 0, -1)]
    assert not set(moved) & set(queued)
    assert [i.decode() for i in redis.lrange("rq:queue:s1:intermediate", 0, -1)] == moved
    assert stealer.num_taken == len(moved)


def test_stolen_jobs_run_as_the_taking_shards_own(redis: Redis, scratch_url: str, model_path: str) -> None:
    _, docs = _busy_shard(scratch_url, model_path, num_docs=4, per_doc=2)
    rq = ShardQueue(redis, "s1", WireCodec(), name="s1.steal-test", result_ttl_s=3600, heartbeat_ttl_s=60)
    stealer = Stealer(redis, WireCodec(), "s1", ("s0", "s1"), rq.queue.intermediate_queue_key)
    moved = stealer.steal(10**9)
    assert moved

    started = rq.start(moved)

    assert len(started) == len(moved) and all(s.error is None for s in started)
    registry = StartedJobRegistry("s1", connection=redis)
    for s in started:
        assert s.job.origin == "s1" and Job.fetch(s.job.id, connection=redis).origin == "s1"
        assert s.job.id in registry.get_job_ids()
    assert redis.llen(rq.queue.intermediate_queue_key) == 0
    rq.finish([Outcome(s, completion=Completion("ok", "stop", 10, 0, 1, shard="s1", worker=rq.name))
               for s in started])
    assert _load(redis)["s1"] == 0  # the moved reservation was released by the shard that ran it


def test_no_steal_from_a_shard_that_is_not_busier(redis: Redis, scratch_url: str, model_path: str) -> None:
    _busy_shard(scratch_url, model_path, num_docs=3, per_doc=2)
    redis.hset(keys.LOAD_KEY, "s1", _load(redis)["s0"])  # s1 as loaded as s0
    stealer = Stealer(redis, WireCodec(), "s1", ("s0", "s1"), "rq:queue:s1:intermediate")
    assert stealer.busiest(10**9) == (None, 0) and stealer.steal(10**9) == []
    assert redis.llen(queue_key("s0")) == 6


def test_a_job_pulled_meanwhile_is_not_moved(redis: Redis, scratch_url: str, model_path: str) -> None:
    _busy_shard(scratch_url, model_path, num_docs=4, per_doc=1)
    stealer = Stealer(redis, WireCodec(), "s1", ("s0", "s1"), "rq:queue:s1:intermediate")
    victim, budget = stealer.busiest(10**9)
    assert victim == "s0"
    chosen = stealer.choose(victim, budget)
    assert len(chosen) >= 2
    redis.lrem(queue_key("s0"), 1, chosen[-1].job_id)  # s0's worker pulls it first
    before = _load(redis)

    moved = stealer.move(victim, chosen)

    assert moved == [c.job_id for c in chosen[:-1]]
    moved_tokens = sum(c.tokens for c in chosen[:-1])
    assert _load(redis) == {"s0": before["s0"] - moved_tokens, "s1": before.get("s1", 0) + moved_tokens}


def test_a_tail_looked_at_again_is_not_read_again(redis: Redis, scratch_url: str, model_path: str) -> None:
    client, _ = _busy_shard(scratch_url, model_path, num_docs=4, per_doc=2)
    stealer = Stealer(redis, WireCodec(), "s1", ("s0", "s1"), "rq:queue:s1:intermediate")
    victim, budget = stealer.busiest(10**9)
    first = stealer.choose(victim, budget)
    reads = _hget_calls(redis)

    assert stealer.choose(victim, budget) == first  # the same tail: nothing read
    assert _hget_calls(redis) == reads

    late = client.submit_many([Item.document_question(DOC.format(n=9), "One more?", tag="d9/0", max_tokens=4)])
    victim, budget = stealer.busiest(10**9)
    reads = _hget_calls(redis)
    again = stealer.choose(victim, budget)
    assert _hget_calls(redis) == reads + 1  # only the job that joined the tail
    assert again[-1].job_id.decode() == late.job_ids[0] and again[-1].group


def _hget_calls(redis: Redis) -> int:
    return int(redis.info("commandstats").get("cmdstat_hget", {}).get("calls", 0))


async def _serve_until_done(runners: list[WorkerRunner], wait: Callable[[], object]) -> None:
    serving = [asyncio.create_task(r.run()) for r in runners]
    await asyncio.to_thread(wait)
    for r in runners:
        r.request_stop()
    assert await asyncio.gather(*serving) == [0] * len(runners)


def test_an_idle_worker_takes_work_from_a_slow_shard(redis: Redis, scratch_url: str, model_path: str) -> None:
    """Two workers on the sim engine (a SIMULATOR), one ten times slower, one request at a time
    each; every job routed to the slow shard. The fast worker takes whole documents from the
    slow shard's queue, every job gets one result, and both loads end at zero."""
    client, docs = _busy_shard(scratch_url, model_path, num_docs=12, per_doc=2)
    settings = Settings.from_env({}, redis_url=scratch_url, shards=("s0", "s1"), engine="sim",
                                 kv_events=False, lookahead_steps=0.5, batch_wait_ms=0)
    runners = []
    for shard, s_per_token in (("s0", 0.002), ("s1", 0.0002)):
        rq = ShardQueue(Redis.from_url(scratch_url), shard, WireCodec(), name=f"{shard}.steal-test",
                        result_ttl_s=3600, heartbeat_ttl_s=60)
        engine = SimEngine(settings, prefill_s_per_token=s_per_token, max_running=1)
        runners.append(WorkerRunner(settings, engine, rq, model="(sim)"))
    submission = client.submission(docs[0][0].rsplit("-", 1)[0])

    asyncio.run(_serve_until_done(runners, lambda: submission.wait(timeout=120)))

    results = submission.wait(timeout=10)
    assert all(r.is_ok for r in results) and len(results) == 24
    for job_id in submission.job_ids:
        assert redis.xlen(f"rq:results:{job_id}") == 1  # one result each
    shard_of = {job_id: r.completion.shard for job_id, r in zip(submission.job_ids, results)}  # type: ignore[union-attr]
    assert "s1" in shard_of.values() and runners[1].stealer is not None and runners[1].stealer.num_taken > 0
    for doc in docs:
        assert len({shard_of[j] for j in doc}) == 1, "a document's questions ran on two shards"

