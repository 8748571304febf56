"""`prefixq cleanup` (producer.retention) against a real redis-server, no engine.

Jobs are enqueued by the real Client. Finishing them is a worker's Redis bookkeeping done with
the worker's own ShardQueue and a HAND-MADE completion (bookkeeping without an engine), as in
tests/test_cli.py.
"""

from __future__ import annotations

import json
import time

import pytest
from click.testing import CliRunner
from redis import Redis

from common import keys
from common.codec import WireCodec
from common.config import Settings
from common.schema import Completion
from producer import retention
from producer.admin import cancel_submission
from producer.cli import main
from producer.client import Client, Submission
from producer.items import Item
from worker.recovery import Reaper
from worker.rqbatch import Outcome, ShardQueue, Started, new_worker_name


@pytest.fixture
def client(redis: Redis, scratch_url: str, model_path: str) -> Client:
    return Client(Settings.from_env({}, redis_url=scratch_url))


def submit(client: Client, submission_id: str, n: int) -> Submission:
    items = [Item.prompt(f"Say the number {i}.", tag=f"p{i}") for i in range(n)]
    return client.submit_many(items, submission_id=submission_id, policy="round-robin")


def start_jobs(redis: Redis, shard: str, num_jobs: int) -> tuple[ShardQueue, list[Started]]:
    """Pull and start ``num_jobs`` of ``shard``'s jobs as a worker would (no engine)."""
    rq = ShardQueue(redis, shard, WireCodec(), name=new_worker_name(shard), result_ttl_s=3600,
                    heartbeat_ttl_s=60)
    rq.announce()
    started = rq.start(rq.pull(num_jobs, 0))
    assert len(started) == num_jobs
    return rq, started


def finish_without_engine(redis: Redis, shard: str, num_jobs: int, error: str | None = None) -> None:
    """Start ``num_jobs`` of ``shard``'s jobs and store a HAND-MADE completion (or ``error``)."""
    rq, started = start_jobs(redis, shard, num_jobs)
    rq.finish([Outcome(s, error=error) if error else Outcome(s, completion=Completion(
        text="made-up", finish_reason="stop", prompt_tokens=8, cached_tokens=0,
        completion_tokens=2, shard=shard, worker=rq.name)) for s in started])


def finish_all(redis: Redis) -> None:
    for shard in ("gpu0", "gpu1"):
        finish_without_engine(redis, shard, redis.llen(f"rq:queue:{shard}"))


def traces(redis: Redis, submission_id: str) -> set[str]:
    """Every key naming the submission or one of its jobs, and every registry member of them
    (but a reaper's lock, ``prefixq:reaping:*``, which expires on its own within minutes)."""
    found = {k.decode() for k in redis.scan_iter(match=f"*{submission_id}*")
             if not k.startswith(b"prefixq:reaping:")}
    for key in redis.scan_iter(match="rq:*"):
        if redis.type(key) == b"zset":
            members: list[bytes] = redis.zrange(key, 0, -1)  # type: ignore[assignment]
            found |= {f"{key.decode()} <- {m.decode()}" for m in members
                      if m.decode().startswith(f"{submission_id}-")}
    return found


def test_cleanup_deletes_only_old_finished_submissions(client: Client, redis: Redis,
                                                       scratch_url: str) -> None:
    old = submit(client, "oldsub", 4)
    finish_without_engine(redis, "gpu0", 2)
    finish_without_engine(redis, "gpu1", 2, error="engine said no")  # failed jobs end a submission too
    time.sleep(1.5)

    recent = submit(client, "recentsub", 2)
    finish_all(redis)
    busy = submit(client, "busysub", 4)  # two jobs finished, one started, one still queued
    finish_without_engine(redis, "gpu0", 2)
    start_jobs(redis, "gpu1", 1)
    assert redis.llen("rq:queue:gpu1") == 1

    before = {sub: traces(redis, sub) for sub in ("oldsub", "busysub", "recentsub")}
    assert any(t.startswith("rq:finished:gpu0 <- ") for t in before["oldsub"])
    assert any(t.startswith("rq:failed:gpu1 <- ") for t in before["oldsub"])
    assert f"prefixq:claim:{old.job_ids[0]}" in before["oldsub"]

    dry = retention.cleanup(redis, ("gpu0", "gpu1"), older_than_s=1.0, dry_run=True)
    assert {sub: traces(redis, sub) for sub in before} == before  # a dry run deletes nothing
    real = retention.cleanup(redis, ("gpu0", "gpu1"), older_than_s=1.0)

    assert real.deleted == ["oldsub"] and real.submissions_seen == 3
    assert (real.kept_active, real.kept_recent, real.kept_changed) == (1, 1, 0)
    # Per job: hash, result stream, claim; per submission: meta, jobs, tags, done marks.
    assert (real.jobs_deleted, real.keys_deleted, real.registry_entries_removed) == (4, 4 * 3 + 4, 4)
    assert {**vars(dry), "dry_run": False} == vars(real)

    assert traces(redis, "oldsub") == set()
    assert traces(redis, "busysub") == before["busysub"]
    assert traces(redis, "recentsub") == before["recentsub"]
    assert all(r is not None and r.is_ok for r in recent.results())
    assert sum(r is not None for r in busy.results()) == 2


def test_ended_means_finished_failed_or_canceled(client: Client, redis: Redis, scratch_url: str) -> None:
    submit(client, "canceled", 3)
    cancel_submission(redis, "canceled", WireCodec(), result_ttl_s=3600)
    gave_up = submit(client, "gaveup", 1)  # its worker died on every attempt: the reaper failed it
    origin: bytes = redis.hget(f"rq:job:{gave_up.job_ids[0]}", "origin")  # type: ignore[assignment]
    shard = origin.decode()
    rq, started = start_jobs(redis, shard, 1)
    redis.hset(f"rq:job:{gave_up.job_ids[0]}", keys.ATTEMPTS_FIELD, 3)
    redis.zadd(f"rq:wip:{shard}", {f"{started[0].job.id}:{started[0].execution.id}": 1})  # lease ran out
    assert Reaper(redis, WireCodec(), ("gpu0", "gpu1"), name="reaper", max_attempts=3,
                  result_ttl_s=3600, down_grace_s=120).reap() == 1
    assert redis.hget(f"rq:job:{gave_up.job_ids[0]}", "status") == b"failed"

    report = retention.cleanup(redis, ("gpu0", "gpu1"), older_than_s=0)
    assert report.deleted == ["canceled", "gaveup"]
    assert traces(redis, "canceled") == set() and traces(redis, "gaveup") == set()


def test_the_reapers_log_names_the_attempts_as_a_number(client: Client, redis: Redis, scratch_url: str,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    """Found while testing (worker/, not owned here): a cosmetic bug in the reaper's log line."""
    sub = submit(client, "gaveup", 1)
    origin: bytes = redis.hget(f"rq:job:{sub.job_ids[0]}", "origin")  # type: ignore[assignment]
    _, started = start_jobs(redis, origin.decode(), 1)
    redis.hset(f"rq:job:{sub.job_ids[0]}", keys.ATTEMPTS_FIELD, 3)
    redis.zadd(f"rq:wip:{origin.decode()}", {f"{started[0].job.id}:{started[0].execution.id}": 1})
    Reaper(redis, WireCodec(), ("gpu0", "gpu1"), name="reaper", max_attempts=3, result_ttl_s=3600,
           down_grace_s=120).reap()
    assert "job gaveup-0 failed after 3 attempts" in caplog.text


def test_a_job_requeued_meanwhile_keeps_its_submission(client: Client, redis: Redis,
                                                       scratch_url: str) -> None:
    submit(client, "sub", 2)
    finish_all(redis)
    inspected = retention._inspect(redis, "sub")
    assert inspected.statuses == ["finished", "finished"]
    redis.hset("rq:job:sub-1", "status", "queued")  # e.g. requeued from the dashboard just now
    before = traces(redis, "sub")
    report = retention.CleanupReport(dry_run=False, older_than_s=0)
    script = redis.register_script(retention._DELETE_LUA)
    assert not retention._delete(redis, script, inspected, {"gpu0", "gpu1"}, False, report)
    assert traces(redis, "sub") == before  # checked and deleted in one atomic step: nothing went


def test_large_submissions_are_deleted_chunk_by_chunk(client: Client, redis: Redis, scratch_url: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retention, "CHUNK_JOBS", 2)
    submit(client, "big", 5)
    finish_all(redis)
    report = retention.cleanup(redis, ("gpu0", "gpu1"), older_than_s=0)
    assert report.deleted == ["big"] and report.jobs_deleted == 5
    assert traces(redis, "big") == set()


def test_leftovers_of_an_expired_submission_are_found(redis: Redis, scratch_url: str) -> None:
    """Only a done-marks stream is left (the rest expired): its jobs are named there."""
    redis.xadd(keys.submission_done_key("ghost"), {"job": "ghost-0", "ok": 1})
    redis.set(keys.claim_key("ghost-0"), "x")
    report = retention.cleanup(redis, ("gpu0", "gpu1"), older_than_s=0)
    assert report.deleted == ["ghost"] and report.keys_deleted == 2
    assert traces(redis, "ghost") == set()


def test_cleanup_command(client: Client, redis: Redis, scratch_url: str) -> None:
    submit(client, "one", 2)
    finish_all(redis)
    submit(client, "two", 2)

    def run(*args: str) -> str:
        result = CliRunner().invoke(main, ["cleanup", *args, "--redis-url", scratch_url])
        assert result.exit_code == 0, result.output
        return result.stdout

    assert run("--dry-run") == ("would delete 0 of 2 submission(s): 0 job(s), 0 key(s), 0 registry "
                                "entries; kept 1 with queued or started jobs, 1 ended less than "
                                "86400 s ago\n")
    assert json.loads(run("--older-than", "0", "--dry-run", "--json"))["deleted"] == ["one"]
    assert redis.exists(keys.submission_key("one"))
    report = json.loads(run("--older-than", "0", "--json"))
    assert report["deleted"] == ["one"] and report["jobs_deleted"] == 2 and report["kept_active"] == 1
    assert not redis.exists(keys.submission_key("one")) and redis.exists(keys.submission_key("two"))

    bad = CliRunner().invoke(main, ["cleanup", "--older-than", "-1", "--redis-url", scratch_url])
    assert bad.exit_code == 2
