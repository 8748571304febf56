"""A worker's batch start, heartbeat and finish leave Redis exactly as RQ's own methods would.

``worker.rqwrites`` writes RQ's job, execution, registry and result keys from a compact list in
Lua instead of through RQ's objects. Here the same jobs (enqueued by the real Client into a real
redis-server) are started and finished twice from the same saved state: once with RQ 3.0.0's own
methods (``Execution.create``, ``Job.prepare_for_execution``, ``Execution.heartbeat``,
``Job.heartbeat``, ``Result.create``, ``FinishedJobRegistry.add``, ``Execution.delete``), once with the worker's ``ShardQueue``; every
key is then compared (type, content, expiry). The clock and the execution ids are fixed for
both runs, so timestamps and scores must match to the digit.
"""

from __future__ import annotations

import itertools
import sys
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

import pytest
from redis import Redis
from rq.executions import Execution
from rq.job import JobStatus
from rq.registry import FinishedJobRegistry
from rq.results import Result
from rq.utils import utcformat
from rq.worker import WorkerStatus

import rq.utils
from common import keys
from common.codec import WireCodec
from common.config import Settings
from common.rqjob import PrefixqJob, PrefixqResult
from common.schema import Completion
from producer.client import Client
from worker import rqwrites
from worker.rqbatch import Outcome, ShardQueue, Started, store_failure

CLOCK = [datetime(2026, 12, 3, 7, 30, 1, 234567, tzinfo=timezone.utc)]


@pytest.fixture
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """RQ's ``now``/``current_timestamp`` and every execution id fixed; call the result to
    rewind the execution ids (each run must draw the same ones)."""
    real_now, real_stamp = rq.utils.now, rq.utils.current_timestamp
    for module in list(sys.modules.values()):
        name = getattr(module, "__name__", "")
        if name.startswith(("rq", "worker", "common")):
            if getattr(module, "now", None) is real_now:
                monkeypatch.setattr(module, "now", lambda: CLOCK[0])
            if getattr(module, "current_timestamp", None) is real_stamp:
                monkeypatch.setattr(module, "current_timestamp", lambda: int(CLOCK[0].timestamp()))
    # store_failure (the same code in both runs) scores the failed registry by time.time().
    monkeypatch.setattr(time, "time", lambda: CLOCK[0].timestamp())
    ids: list[Any] = [None]

    def rewind() -> None:
        ids[0] = (f"{n:032x}" for n in itertools.count(1))

    rewind()
    monkeypatch.setattr("rq.executions.uuid4", lambda: type("U", (), {"hex": next(ids[0])})())
    monkeypatch.setattr(rqwrites, "new_execution_id", lambda: next(ids[0]))
    return rewind


def _saved(redis: Redis) -> dict[bytes, tuple[bytes, int]]:
    return {k: (redis.dump(k), redis.pttl(k)) for k in redis.keys("*")}


def _restore(redis: Redis, saved: dict[bytes, tuple[bytes, int]]) -> None:
    redis.flushdb()
    for k, (data, pttl) in saved.items():
        redis.restore(k, max(pttl, 0), data)


def _state(redis: Redis) -> dict[bytes, Any]:
    """Every key: type, content (streams by their entries' fields, since entry ids carry the
    real time) and its remaining time to live in ms (negative: none)."""
    state: dict[bytes, Any] = {}
    for k in sorted(redis.keys("*")):
        kind = redis.type(k).decode()
        content: Any = {
            "string": lambda: redis.get(k), "hash": lambda: redis.hgetall(k),
            "list": lambda: redis.lrange(k, 0, -1), "set": lambda: redis.smembers(k),
            "zset": lambda: redis.zrange(k, 0, -1, withscores=True),
            "stream": lambda: [fields for _, fields in redis.xrange(k)],
        }[kind]()
        state[k] = (kind, content, redis.pttl(k))
    return state


def _differences(got: dict[bytes, Any], expected: dict[bytes, Any]) -> list[bytes]:
    """The keys whose type, content or expiry differ. A time to live runs down on Redis's own
    clock (not the fixed one) from when each run set or restored it, so two are the same if both
    are unset or both set and within 5 s of each other (the ones written here are 60 s or more)."""
    differ = []
    for k in sorted(set(got) | set(expected)):
        a, b = got.get(k), expected.get(k)
        if a is None or b is None or a[:2] != b[:2] or (a[2] < 0) != (b[2] < 0) or abs(a[2] - b[2]) > 5000:
            differ.append(k)
    return differ


def _completion(job_id: str) -> Completion:
    return Completion(text=f"answer to {job_id}", finish_reason="stop", prompt_tokens=300,
                      cached_tokens=128, completion_tokens=7, shard="gpu0", worker="w",
                      timings_ms={"engine": 12.5})


def _rq_start(q: ShardQueue, job_ids: list[bytes]) -> list[Started]:
    """The start, the RQ way: RQ's methods write each job's execution and state."""
    started = []
    with q.connection.pipeline() as pipe:
        for job_id in job_ids:
            raw = q.connection.hgetall(PrefixqJob.key_for(job_id.decode()))
            pipe.lrem(q.queue.intermediate_queue_key, 1, job_id)
            if raw.get(b"status", b"").decode() == JobStatus.CANCELED.value:
                # The worker draws an execution id for every id it pulled (which jobs are
                # skipped it learns only in Redis): draw one here too, so that both runs give
                # the same (fixed) ids to the same jobs.
                rqwrites.new_execution_id()
                continue
            job = PrefixqJob(job_id.decode(), connection=q.connection, serializer=q.codec)
            job.restore(raw)
            request, error = q._decode(job, raw[b"data"])  # the worker's own decoding (not what is compared)
            if job.origin != q.queue.name:
                job.origin = q.queue.name
                pipe.hset(job.key, "origin", job.origin)
            execution = Execution.create(job, q.heartbeat_ttl_s, pipeline=pipe, worker_name=q.name)
            job.prepare_for_execution(q.name, pipeline=pipe)
            pipe.hincrby(job.key, keys.ATTEMPTS_FIELD, 1)
            started.append(Started(job, execution, request, error))
        q.set_state(WorkerStatus.BUSY, pipeline=pipe)
        pipe.execute()
    return started


def _as_read(s: Started) -> tuple[Any, ...]:
    job = s.job
    return (job.id, job.origin, job.timeout, job.result_ttl, job.failure_ttl, job.enqueued_at,
            job.func_name, job.args, job.get_status(refresh=False), job.worker_name, job.started_at,
            s.execution.id, s.execution.created_at, s.request, s.error)


def _rq_beat(q: ShardQueue, started: list[Started]) -> None:
    """The heartbeat, the RQ way: the worker's and every running execution's and job's."""
    with q.connection.pipeline() as pipe:
        q.heartbeat(q.heartbeat_ttl_s + 60, pipeline=pipe)
        pipe.set(keys.alive_key(q.shard), q.name, ex=q.heartbeat_ttl_s)
        stamp = rq.utils.now()
        for s in started:
            s.execution.heartbeat(s.job.started_job_registry, q.heartbeat_ttl_s, pipeline=pipe)
            s.job.heartbeat(stamp, q.heartbeat_ttl_s, pipeline=pipe, xx=True)
        pipe.execute()


def _rq_finish(q: ShardQueue, outcomes: list[Outcome]) -> None:
    """The finish, the RQ way: the first execution of a job claims its result; RQ's methods
    write each claimed outcome, a duplicate only has its execution freed; then the counters."""
    with q.connection.pipeline() as pipe:
        for o in outcomes:
            pipe.set(keys.claim_key(o.started.job.id), o.started.execution.id, nx=True, ex=q.default_result_ttl)
        claimed = pipe.execute()
    counts: Counter[str] = Counter()
    done_keys: set[str] = set()
    finished = FinishedJobRegistry(q.queue.name, connection=q.connection, job_class=PrefixqJob, serializer=q.codec)
    with q.connection.pipeline() as pipe:
        for o, first in zip(outcomes, claimed):
            job, execution = o.started.job, o.started.execution
            if not first:
                execution.delete(job=job, pipeline=pipe)
                continue
            ended = rq.utils.now()
            done = keys.submission_done_key(job.id.rpartition("-")[0])
            if o.completion is not None:
                ttl = job.result_ttl if job.result_ttl is not None else q.default_result_ttl
                pipe.hset(job.key, mapping={"status": JobStatus.FINISHED.value, "ended_at": utcformat(ended)})
                PrefixqResult.create(job, Result.Type.SUCCESSFUL, ttl, return_value=o.completion.to_wire(),
                                     worker_name=q.name, pipeline=pipe, execution_id=execution.id,
                                     execution_started_at=execution.created_at, execution_ended_at=ended)
                finished.add(job, ttl, pipe)
                if ttl > 0:
                    pipe.expire(job.key, ttl)
                counts.update(jobs=1, prompt_tokens=o.completion.prompt_tokens,
                              cached_tokens=o.completion.cached_tokens)
            else:
                ttl = job.failure_ttl if job.failure_ttl is not None else q.default_result_ttl
                store_failure(pipe, job, job.origin, o.error or "", ttl, q.name, execution)
                counts.update(failed=1)
            execution.delete(job=job, pipeline=pipe)
            pipe.xadd(done, {"job": job.id, "ok": int(o.completion is not None)})
            done_keys.add(done)
            assert o.started.request is not None
            counts.update(load_tokens=o.started.request.load_tokens)
        if counts["load_tokens"]:
            pipe.hincrby(keys.LOAD_KEY, q.shard, -counts["load_tokens"])
        if counts["jobs"]:
            for field in ("jobs", "prompt_tokens", "cached_tokens"):
                pipe.hincrby(keys.shard_stats_key(q.shard), field, counts[field])
            pipe.hincrby(q.key, "successful_job_count", counts["jobs"])
        if counts["failed"]:
            pipe.hincrby(q.key, "failed_job_count", counts["failed"])
        for done in done_keys:
            pipe.expire(done, q.default_result_ttl)
        pipe.execute()


def test_start_and_finish_write_what_rqs_own_methods_write(redis: Redis, scratch_url: str,
                                                            fixed_clock: Callable[[], None]) -> None:
    client = Client(Settings.from_env(redis_url=scratch_url))
    # Several documents, so that both shards get jobs: one of the other shard's jobs is taken
    # into this shard's batch (as stealing does), and one job is canceled before it starts.
    for d in range(4):
        client.submit_document(f"Document {d} about rivers. " * 30, ["Which river?", "How long?"],
                               doc_id=f"d{d}")
    q = ShardQueue(redis, "gpu0", WireCodec(), name="gpu0.rqwrites-test", result_ttl_s=3600,
                   heartbeat_ttl_s=60)
    q.announce()
    assert redis.llen("rq:queue:gpu0") and redis.llen("rq:queue:gpu1")
    ids = q.pull(100, 0)
    ids.append(redis.lmove("rq:queue:gpu1", q.queue.intermediate_queue_key, "LEFT", "RIGHT"))
    redis.hset(PrefixqJob.key_for(ids[1].decode()), "status", JobStatus.CANCELED.value)
    redis.hset(PrefixqJob.key_for(ids[2].decode()), "result_ttl", "-1")  # kept forever
    redis.hset(PrefixqJob.key_for(ids[0].decode()), mapping={"timeout": "90", "failure_ttl": "600"})
    # Another execution of this job stored its result first: this run of it is a duplicate.
    assert len(ids) >= 5
    redis.set(keys.claim_key(ids[3].decode()), "an-earlier-execution")
    before = _saved(redis)

    def outcomes(started: list[Started]) -> list[Outcome]:
        # The last job fails (RQ's own path in both runs, in the same transaction as the rest).
        return [Outcome(s, completion=_completion(s.job.id)) for s in started[:-1]] + \
               [Outcome(started[-1], error="engine said no")]

    start_clock, beat_clock = CLOCK[0], CLOCK[0] + timedelta(seconds=7, microseconds=250001)
    try:
        started = theirs = _rq_start(q, ids)
        after_start = _state(redis)
        CLOCK[0] = beat_clock  # a heartbeat 7.25 s later: new stamps and scores
        _rq_beat(q, started)
        after_beat = _state(redis)
        _rq_finish(q, outcomes(started))
        after_finish = _state(redis)

        _restore(redis, before)
        CLOCK[0] = start_clock
        fixed_clock()
        started = q.start(ids)
        assert [s.job.id for s in started] == [i.decode() for i in ids if i != ids[1]]
        assert _differences(_state(redis), after_start) == []
        # The jobs as the worker read them (five fields from the start script) are what RQ's
        # restore of the whole hash makes of them, in every field the worker uses.
        assert [_as_read(s) for s in started] == [_as_read(s) for s in theirs]
        assert started[0].job.timeout == 90 and started[0].job.failure_ttl == 600
        assert started[1].job.result_ttl == -1 and started[-1].job.origin == "gpu0"
        CLOCK[0] = beat_clock
        q.beat(started)
        assert _differences(_state(redis), after_beat) == []
        q.finish(outcomes(started))
        assert _differences(_state(redis), after_finish) == []
    finally:
        CLOCK[0] = start_clock
    # The heartbeat moved every running execution's scores and stamps (the check saw a change).
    assert len(_differences(after_beat, after_start)) >= 3 * len(started)
    # What the comparison covered: every kind of key the two paths write.
    def families(state: dict[bytes, Any]) -> set[bytes]:
        return {b":".join(k.split(b":")[:2]) for k in state}

    assert {b"rq:execution", b"rq:executions", b"rq:wip", b"rq:worker"} <= families(after_start)
    assert {b"rq:results", b"rq:finished", b"rq:failed", b"prefixq:claim", b"prefixq:stats"} <= families(after_finish)
    assert not {b"rq:execution", b"rq:executions", b"rq:wip"} & families(after_finish)
    assert redis.ttl(PrefixqResult.get_key(ids[2].decode())) == -1
    # The duplicate stored nothing and kept nothing: no result, its execution freed, the claim
    # still the earlier execution's (the comparison above checked that RQ's way agrees).
    duplicate = ids[3].decode()
    assert not redis.exists(PrefixqResult.get_key(duplicate))
    assert redis.get(keys.claim_key(duplicate)) == b"an-earlier-execution"
    assert not redis.keys(f"rq:execution:{duplicate}:*")
