"""The reliability contract, against real processes: redis-server, vLLM workers."""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis
from rq.job import Job, JobStatus
from rq.queue import Queue
from rq.results import Result

from common import keys
from common.codec import serializer
from common.config import Settings
from common.rqjob import PrefixqJob
from producer.client import Client
from producer.items import Item
from producer.launch import RedisServer, WorkerProcess

pytestmark = pytest.mark.vllm


def test_foreign_jobs_are_refused_never_run(workers: object, worker_url: str, tmp_path: Path) -> None:
    redis = Redis.from_url(worker_url)
    marker = tmp_path / "pwned"
    pickled = Queue("gpu0", connection=redis).enqueue("os.system", f"touch {marker}")  # RQ's pickle
    foreign_func = Queue("gpu1", connection=redis, serializer=serializer, job_class=PrefixqJob) \
        .enqueue("os.system", f"touch {marker}")
    for job_id, reason in ((pickled.id, "not prefixq's wire format"), (foreign_func.id, "is not")):
        _wait_for(lambda: redis.hget(Job.key_for(job_id), "status") == b"failed", 120, f"{job_id} to fail")
        assert redis.hget(Job.key_for(job_id), "status") == b"failed"
        entry = redis.xrevrange(Result.get_key(job_id), count=1)
        result = Result.restore(job_id, entry[0][0].decode(), entry[0][1], connection=redis,
                                serializer=serializer)
        assert result.type == Result.Type.FAILED and "refused" in (result.exc_string or "")
        assert reason in (result.exc_string or "")
    assert not marker.exists()


def test_poison_jobs_fail_alone(workers: object, worker_url: str) -> None:
    # The producer's own length check is lifted so the worker meets the over-long prompt.
    client = Client(Settings.from_env(redis_url=worker_url, max_tokens=8, max_model_len=100_000))
    items = [Item.prompt("What is the capital of France?", tag="ok-1", temperature=0.0),
             Item.prompt("word " * 6000, tag="too-long"),
             Item.prompt("Hello", tag="bad-temperature", temperature=-1.0),
             Item.prompt("Hello", tag="bad-max-tokens", max_tokens=0),
             Item.prompt("Name a colour.", tag="ok-2")]
    results = {r.tag: r for r in client.submit_many(items, policy="round-robin").wait(timeout=600)}
    assert results["ok-1"].is_ok and "Paris" in results["ok-1"].completion.text  # type: ignore[union-attr]
    assert results["ok-2"].is_ok
    assert "maximum context length" in (results["too-long"].error or "")
    assert "temperature" in (results["bad-temperature"].error or "")
    assert "max_tokens" in (results["bad-max-tokens"].error or "")
    # Both workers are still up and answering.
    again = client.submit_many([Item.prompt("Say yes.", tag=str(i)) for i in range(4)],
                               policy="round-robin").wait(timeout=600)
    assert all(r.is_ok for r in again)


def _wait_for(predicate: object, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@contextlib.contextmanager
def _two_shards(tmp_path: Path, *, appendonly: bool, extra_args: tuple[str, ...] = (),
                ) -> Iterator[tuple[RedisServer, dict[str, WorkerProcess]]]:
    """A private redis-server and ready workers for shards s0 and s1 (fast leases and grace)."""
    server = RedisServer(appendonly=appendonly).start()
    env = {"PREFIXQ_SHARDS": "s0,s1", "PREFIXQ_HEARTBEAT_INTERVAL_S": "1",
           "PREFIXQ_SHARD_DOWN_GRACE_S": "5"}
    procs = {shard: WorkerProcess(shard, redis_url=server.url, core=i, log_dir=tmp_path,
                                  extra_args=extra_args, env=env).start()
             for i, shard in enumerate(("s0", "s1"))}
    try:
        for proc in procs.values():
            proc.wait_ready(600)
        yield server, procs
    finally:
        for proc in procs.values():
            proc.stop(signal.SIGKILL, timeout_s=30)
        server.cleanup()


def test_crash_redis_restart_and_drain(model_path: str, tmp_path: Path) -> None:
    """SIGKILL one worker mid-batch, restart Redis, SIGTERM the other: nothing lost or doubled."""
    with _two_shards(tmp_path, appendonly=True,
                     extra_args=("--max-batch", "4", "--max-inflight", "4")) as (server, procs):
        redis = Redis.from_url(server.url)
        client = Client(Settings.from_env({}, redis_url=server.url, shards=("s0", "s1"), max_tokens=48))
        # s0 holds at most 4 jobs at a time, so at the kill some are started and some queued.
        items = [Item.prompt(f"Write a long story about the number {i}.", tag=str(i), ignore_eos=True)
                 for i in range(12)]
        submission = client.submit_many(items, policy="round-robin")

        # Kill s0's worker while it holds started jobs.
        _wait_for(lambda: redis.zcard("rq:wip:s0") > 0, 300, "s0 to start jobs")
        procs["s0"].stop(signal.SIGKILL)

        # Restart Redis (AOF on) while s1 works; it reconnects and carries on.
        server.stop()
        time.sleep(1.0)
        server.start()

        results = submission.wait(timeout=900)
        assert [r.tag for r in results] == [str(i) for i in range(12)]
        assert all(r.is_ok for r in results), [r.error for r in results if not r.is_ok]
        for job_id in submission.job_ids:
            assert redis.xlen(Result.get_key(job_id)) == 1  # exactly one stored result
            assert redis.exists(keys.claim_key(job_id))
        recovered = [r for r in results if int(redis.hget(Job.key_for(r.job_id), keys.ATTEMPTS_FIELD) or 0) > 1]
        assert recovered, "no job was rerun after the crash"
        assert all(r.completion.shard == "s1" for r in recovered)  # type: ignore[union-attr]

        # SIGTERM drains: in-flight work finishes, the rest stays queued, exit code 0.
        more = client.submit_many([Item.prompt(f"Count to {i}.", tag=str(i), max_tokens=32)
                                   for i in range(8)], policy="round-robin")
        _wait_for(lambda: redis.zcard("rq:wip:s1") > 0, 300, "s1 to start jobs")
        assert procs["s1"].stop(signal.SIGTERM) == 0
        statuses = [Job.fetch(j, connection=redis, serializer=serializer).get_status() for j in more.job_ids]
        assert all(s in (JobStatus.FINISHED, JobStatus.QUEUED) for s in statuses), statuses
        assert JobStatus.FINISHED in statuses
        assert redis.llen("rq:queue:s1:intermediate") == 0


def test_engine_death_ends_the_worker_and_its_jobs_are_recovered(model_path: str, tmp_path: Path) -> None:
    """Kill a worker's vLLM engine processes: the worker exits non-zero, a live worker finishes its jobs."""
    import psutil

    with _two_shards(tmp_path, appendonly=False) as (server, procs):
        redis = Redis.from_url(server.url)
        client = Client(Settings.from_env({}, redis_url=server.url, shards=("s0", "s1"), max_tokens=48))
        submission = client.submit_many(
            [Item.prompt(f"Write a long story about the number {i}.", tag=str(i), ignore_eos=True)
             for i in range(8)], policy="round-robin")
        _wait_for(lambda: redis.zcard("rq:wip:s0") > 0, 300, "s0 to start jobs")
        worker = procs["s0"].proc
        assert worker is not None
        for child in psutil.Process(worker.pid).children(recursive=True):
            child.kill()  # the engine core and its workers
        assert worker.wait(timeout=300) == 1
        assert "engine died" in procs["s0"].log_text()

        results = submission.wait(timeout=900)
        assert all(r.is_ok for r in results), [r.error for r in results if not r.is_ok]
        for job_id in submission.job_ids:
            assert redis.xlen(Result.get_key(job_id)) == 1
        assert any(r.completion.shard == "s1" and int(redis.hget(Job.key_for(r.job_id), keys.ATTEMPTS_FIELD) or 0) > 1
                   for r in results)  # type: ignore[union-attr]
