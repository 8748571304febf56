"""prefixq's RQ job and result classes read and write what RQ's own classes do (real redis-server)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from redis import Redis
from rq.job import Job
from rq.queue import Queue
from rq.results import Result
from rq.serializers import DefaultSerializer
from rq.utils import now, utcformat

from common import keys
from common.codec import SERIALIZER_PATH, WireCodec
from common.rqjob import PrefixqJob, PrefixqResult

# What a restore fills in from a job hash (``connection``, ``log`` and the like are not read).
RESTORED = ("id", "data", "func_name", "args", "kwargs", "created_at", "origin", "worker_name",
            "description", "enqueued_at", "started_at", "ended_at", "last_heartbeat", "timeout",
            "result_ttl", "failure_ttl", "ttl", "meta", "group_id")


def _enqueued(redis: Redis, codec: WireCodec) -> PrefixqJob:
    queue = Queue("gpu0", connection=redis, serializer=codec, job_class=PrefixqJob)
    return queue.enqueue(keys.JOB_FUNC, {"prompt": "What is the capital of France?"}, job_id="s1-0",
                         description="q (gpu0)", result_ttl=600, job_timeout=90)


def _restored(cls: type[Job], redis: Redis, codec: WireCodec, job_id: str) -> Job:
    job = cls(job_id, connection=redis, serializer=codec)
    job.restore(redis.hgetall(job.key))
    return job


def test_restore_reads_every_field_as_rq_does(redis: Redis) -> None:
    codec = WireCodec()
    job = _enqueued(redis, codec)
    started = now() - timedelta(seconds=3)
    redis.hset(job.key, mapping={"started_at": utcformat(started), "ended_at": utcformat(now()),
                                 "last_heartbeat": utcformat(started), "worker_name": "gpu0.w"})
    ours, theirs = (_restored(cls, redis, codec, job.id) for cls in (PrefixqJob, Job))
    for name in RESTORED:
        assert getattr(ours, name) == getattr(theirs, name), name
    assert ours.started_at == started
    assert ours.enqueued_at is not None and ours.enqueued_at.tzinfo == timezone.utc
    assert ours.args == [{"prompt": "What is the capital of France?"}]


def test_restore_without_timestamps_matches_rq(redis: Redis) -> None:
    codec = WireCodec()
    job = _enqueued(redis, codec)
    redis.hdel(job.key, "created_at", "enqueued_at")
    before = now()
    ours, theirs = (_restored(cls, redis, codec, job.id) for cls in (PrefixqJob, Job))
    assert ours.enqueued_at is None and theirs.enqueued_at is None
    assert ours.created_at >= before  # RQ's default for a hash without one: now
    assert ours.description == theirs.description == "q (gpu0)"


def test_restore_reads_rq_s_older_timestamp_format(redis: Redis) -> None:
    codec = WireCodec()
    job = _enqueued(redis, codec)
    redis.hset(job.key, "enqueued_at", "2026-11-30T08:15:00Z")  # RQ's format before microseconds
    ours, theirs = (_restored(cls, redis, codec, job.id) for cls in (PrefixqJob, Job))
    assert ours.enqueued_at == theirs.enqueued_at == datetime(2026, 11, 30, 8, 15, tzinfo=timezone.utc)


def test_serializer_is_resolved_as_rq_resolves_it(redis: Redis) -> None:
    codec = WireCodec()
    assert PrefixqJob("a", connection=redis, serializer=codec).serializer is codec
    by_path = PrefixqJob("a", connection=redis, serializer=SERIALIZER_PATH).serializer
    assert isinstance(by_path, WireCodec)  # the import path names the codec, as for RQ's Job
    assert PrefixqJob("a", connection=redis).serializer is Job("a", connection=redis).serializer \
        is DefaultSerializer


def test_result_is_stored_as_rq_stores_it(redis: Redis) -> None:
    codec = WireCodec()
    job = _enqueued(redis, codec)
    with redis.pipeline() as pipe:
        result = PrefixqResult.create(job, Result.Type.SUCCESSFUL, 600, return_value={"text": "Paris."},
                                      worker_name="gpu0.w", pipeline=pipe)
        pipe.execute()
    assert result.serializer is codec
    stored = Result.fetch_latest(Job.fetch(job.id, connection=redis, serializer=codec), serializer=codec)
    assert stored is not None and stored.type == Result.Type.SUCCESSFUL
    assert stored.return_value == {"text": "Paris."} and stored.worker_name == "gpu0.w"
    assert 0 < redis.ttl(Result.get_key(job.id)) <= 600
