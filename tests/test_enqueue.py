"""The producer's scripted enqueue leaves Redis exactly as RQ's ``Queue.enqueue_many`` would.

``producer.enqueue`` writes a submission's job hashes and queue entries from one template per
shard in Lua instead of through RQ's ``Job`` objects. Here the same jobs are enqueued both
ways into a real redis-server, with RQ's clock fixed so that both runs stamp the same times,
and every key is compared (type, content, expiry). The Client's own submissions are checked the
same way: what ``submit_many`` leaves for its jobs is what ``enqueue_many`` leaves for them.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from redis import Redis
from rq.job import Job, JobStatus
from rq.queue import Queue

import rq.job
import rq.queue
from common import keys
from common.codec import WireCodec
from common.config import Settings
from common.rqjob import PrefixqJob
from producer import enqueue
from producer.client import Client
from producer.items import Item

CLOCK = datetime(2026, 12, 4, 3, 30, 1, 234567, tzinfo=timezone.utc)
OPTIONS = {"timeout": 600, "result_ttl": 604800, "failure_ttl": 604800}


@pytest.fixture
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """RQ's ``now`` fixed: every job is created and enqueued at the same instant, both ways."""
    monkeypatch.setattr(rq.job, "now", lambda: CLOCK)
    monkeypatch.setattr(rq.queue, "now", lambda: CLOCK)


def _state(redis: Redis) -> dict[bytes, Any]:
    """Every key: type, content and whether it expires."""
    state: dict[bytes, Any] = {}
    for k in sorted(redis.keys("*")):
        kind = redis.type(k).decode()
        content = {"hash": redis.hgetall, "list": lambda key: redis.lrange(key, 0, -1),
                   "set": redis.smembers, "string": redis.get}[kind](k)
        state[k] = (kind, content, redis.pttl(k) >= 0)
    return state


def _queues(redis: Redis, codec: WireCodec, shards: tuple[str, ...]) -> dict[str, Queue]:
    return {shard: Queue(keys.queue_name(shard), connection=redis, serializer=codec, job_class=PrefixqJob)
            for shard in shards}


def _jobs(shards: tuple[str, ...], per_shard: int) -> dict[str, list[enqueue.NewJob]]:
    return {shard: [enqueue.NewJob(f"sub-{shard}-{i}", f"request {i} for {shard}".encode() * (i + 1),
                                   f"{i} ({shard})") for i in range(per_shard)]
            for shard in shards}


def _rq_enqueue(queues: dict[str, Queue], jobs: dict[str, list[enqueue.NewJob]]) -> None:
    """The RQ way: ``enqueue_many`` per shard into one transaction, as the producer used to."""
    redis = next(iter(queues.values())).connection
    with redis.pipeline() as pipe:
        for shard, new in jobs.items():
            if new:
                queues[shard].enqueue_many([Queue.prepare_data(
                    keys.JOB_FUNC, args=(j.wire,), job_id=j.job_id, description=j.description, **OPTIONS)
                    for j in new], pipeline=pipe)
        pipe.execute()


def _scripted_enqueue(queues: dict[str, Queue], jobs: dict[str, list[enqueue.NewJob]]) -> int:
    redis = next(iter(queues.values())).connection
    script = redis.register_script(enqueue.ENQUEUE_LUA)
    calls = enqueue.payloads(queues, jobs, keys.JOB_FUNC, **OPTIONS)
    with redis.pipeline() as pipe:
        for payload in calls:
            script(args=[payload], client=pipe)
        return sum(pipe.execute())


@pytest.mark.parametrize("chunk", [enqueue.CHUNK_JOBS, 3])
def test_the_script_writes_what_enqueue_many_writes(redis: Redis, fixed_clock: None,
                                                    monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    monkeypatch.setattr(enqueue, "CHUNK_JOBS", chunk)  # 3: the jobs split over several calls
    codec = WireCodec()
    queues = _queues(redis, codec, ("gpu0", "gpu1", "gpu2"))
    jobs = _jobs(("gpu0", "gpu1"), 5) | {"gpu2": []}
    _rq_enqueue(queues, jobs)
    expected = _state(redis)
    redis.flushdb()
    assert _scripted_enqueue(queues, jobs) == 10
    got = _state(redis)
    assert got == expected
    assert redis.lrange(queues["gpu1"].key, 0, -1) == [f"sub-gpu1-{i}".encode() for i in range(5)]
    assert not redis.exists(queues["gpu2"].key)
    # What was written is a job RQ reads back as it wrote it.
    job = PrefixqJob.fetch("sub-gpu0-3", connection=redis, serializer=codec)
    assert (job.func_name, job.args, job.origin, job.description) == (
        keys.JOB_FUNC, [b"request 3 for gpu0" * 4], "gpu0", "3 (gpu0)")
    assert (job.get_status(), job.timeout, job.result_ttl, job.enqueued_at) == (
        JobStatus.QUEUED, 600, 604800, CLOCK)


@pytest.mark.parametrize("chunk", [enqueue.CHUNK_JOBS, 2])
def test_a_submission_leaves_its_jobs_as_enqueue_many_would(redis: Redis, scratch_url: str,
                                                            fixed_clock: None, chunk: int,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Client.submit_many's jobs (routed over two shards) against enqueue_many given the same
    ids, data and descriptions, read back from what the Client wrote; with chunks of 2, the
    submission goes as several script calls and the submission's keys in one transaction."""
    monkeypatch.setattr(enqueue, "CHUNK_JOBS", chunk)
    client = Client(Settings.from_env(redis_url=scratch_url, shards=("gpu0", "gpu1"), policy="round-robin",
                                      job_timeout_s=OPTIONS["timeout"], result_ttl_s=OPTIONS["result_ttl"]))
    items = [Item.prompt(f"Question number {i}?", tag=f"q{i}", max_tokens=4) for i in range(6)]
    submission = client.submit_many(items, submission_id="sub1")
    job_keys = [Job.key_for(j) for j in submission.job_ids]
    written = {k: v for k, v in _state(redis).items() if k.startswith(b"rq:")}
    by_shard: dict[str, list[enqueue.NewJob]] = {"gpu0": [], "gpu1": []}
    queues = _queues(redis, client.codec, ("gpu0", "gpu1"))
    queued = {shard: [j.decode() for j in redis.lrange(queues[shard].key, 0, -1)] for shard in queues}
    assert sorted(queued["gpu0"] + queued["gpu1"]) == sorted(submission.job_ids)
    assert queued["gpu0"] and queued["gpu1"]  # round-robin: both shards got jobs
    for shard, ids in queued.items():
        for job_id in ids:
            job = PrefixqJob.fetch(job_id, connection=redis, serializer=client.codec)
            by_shard[shard].append(enqueue.NewJob(job_id, job.args[0], job.description))
    redis.delete(*job_keys, *(q.key for q in queues.values()), Queue.redis_queues_keys)
    _rq_enqueue(queues, by_shard)
    expected = {k: v for k, v in _state(redis).items() if k.startswith(b"rq:")}
    assert written == expected
    assert client.submission("sub1").job_ids == submission.job_ids  # the submission's own keys
