"""What ``prefixq status`` reports: per-shard queues and registries, workers, load, hit rates,
throughput, and the progress of one submission.

Everything is read from Redis in a few pipelined round trips (plus RQ's own worker lookup), so
it works from any host that reaches Redis and needs no worker to answer.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from redis import Redis
from rq.job import Job
from rq.queue import Queue
from rq.registry import CanceledJobRegistry, FailedJobRegistry, FinishedJobRegistry, StartedJobRegistry
from rq.worker import Worker

from common import keys
from common.codec import SERIALIZER_PATH, WireCodec
from common.errors import InputError
from common.rqjob import PrefixqJob

THROUGHPUT_WINDOW_S = 60


@dataclass(frozen=True)
class ShardStatus:
    """One shard (RQ queue): job counts, outstanding prefill load and prefix-cache hit rate."""

    shard: str
    queued: int
    started: int
    finished: int
    failed: int
    canceled: int
    load_tokens: int  # uncached prompt tokens routed here and not yet finished
    jobs: int  # completed jobs the worker counted for hit rates
    prompt_tokens: int
    cached_tokens: int
    ended_in_window: int  # jobs finished or failed during the last window_s
    routing: str = "predicted"  # what routing knows of its KV cache: see routing_source()
    confirmed_blocks: int = 0  # blocks its engine's KV events confirm it holds

    @property
    def hit_rate(self) -> float | None:
        """Fraction of prompt tokens served from vLLM's prefix cache (None before any job)."""
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else None


@dataclass(frozen=True)
class WorkerRow:
    """One RQ worker as its hash in Redis describes it."""

    name: str
    state: str
    queues: list[str]
    successful_jobs: int
    failed_jobs: int
    in_flight: int
    heartbeat_age_s: float | None


@dataclass(frozen=True)
class ClusterStatus:
    """Everything ``prefixq status`` prints without a submission id."""

    shards: list[ShardStatus]
    workers: list[WorkerRow]
    window_s: int

    @property
    def jobs_per_s(self) -> float:
        """Jobs finished or failed per second over the last ``window_s`` seconds."""
        return sum(s.ended_in_window for s in self.shards) / self.window_s


@dataclass(frozen=True)
class SubmissionStatus:
    """A submission's jobs counted by RQ status (``missing``: the job hash has expired)."""

    submission_id: str
    total: int
    counts: dict[str, int]
    by_shard: dict[str, int] = field(default_factory=dict)

    @property
    def done(self) -> int:
        """Jobs that have ended and have a result: finished, failed, canceled or stopped."""
        return sum(self.counts.get(s, 0) for s in ("finished", "failed", "canceled", "stopped"))


def cluster_status(redis: Redis, shards: tuple[str, ...], codec: WireCodec, *, result_ttl_s: int,
                   window_s: int = THROUGHPUT_WINDOW_S) -> ClusterStatus:
    """Gather the status of ``shards`` (and of any other RQ queue in this Redis).

    Throughput counts registry entries added in the last ``window_s`` seconds: RQ scores a
    finished or failed job with its end time plus its result TTL, so with ``result_ttl_s`` (the
    TTL prefixq gives every job) the window is a score range, counted without reading any job.
    """
    names = list(shards) + sorted({q.name for q in Queue.all(connection=redis)} - set(shards))
    now = int(time.time())
    low, high = now - window_s + result_ttl_s, now + result_ttl_s
    with redis.pipeline(transaction=False) as pipe:
        pipe.hgetall(keys.LOAD_KEY)
        pipe.hgetall(keys.EPOCH_KEY)
        for name in names:
            finished = FinishedJobRegistry(name, connection=redis).key
            failed = FailedJobRegistry(name, connection=redis).key
            pipe.llen(Queue(name, connection=redis).key)
            pipe.zcard(StartedJobRegistry(name, connection=redis).key)
            pipe.zcard(finished)
            pipe.zcard(failed)
            pipe.zcard(CanceledJobRegistry(name, connection=redis).key)
            pipe.zcount(finished, low, high)
            pipe.zcount(failed, low, high)
            pipe.hgetall(keys.shard_stats_key(name))
            pipe.get(keys.kv_events_key(name))
            pipe.get(keys.kv_live_key(name))
            pipe.scard(keys.kv_confirmed_key(name))
        replies = pipe.execute()
    load, epochs = _int_hash(replies[0]), _int_hash(replies[1])
    rows = []
    for i, name in enumerate(names):
        queued, started, finished, failed, canceled, ok_recent, failed_recent, raw_stats, \
            events_epoch, live_epoch, num_confirmed = replies[2 + 11 * i: 13 + 11 * i]
        stats = _int_hash(raw_stats)
        epoch = epochs.get(name)
        rows.append(ShardStatus(
            shard=name, queued=queued, started=started, finished=finished, failed=failed,
            canceled=canceled, load_tokens=load.get(name, 0), jobs=stats.get("jobs", 0),
            prompt_tokens=stats.get("prompt_tokens", 0), cached_tokens=stats.get("cached_tokens", 0),
            ended_in_window=ok_recent + failed_recent,
            routing=routing_source(epoch, events_epoch, live_epoch), confirmed_blocks=num_confirmed))
    return ClusterStatus(rows, list_workers(redis, codec), window_s)


def list_workers(redis: Redis, codec: WireCodec) -> list[WorkerRow]:
    """Every RQ worker registered in this Redis, read with prefixq's serializer."""
    now = time.time()
    rows = []
    for worker in Worker.all(connection=redis, job_class=PrefixqJob, serializer=SERIALIZER_PATH):
        worker.serializer = codec  # the configured bound on decoded size
        beat = worker.last_heartbeat
        rows.append(WorkerRow(
            name=worker.name, state=str(worker.get_state()), queues=worker.queue_names(),
            successful_jobs=worker.successful_job_count, failed_jobs=worker.failed_job_count,
            in_flight=worker.current_execution_count,
            heartbeat_age_s=round(now - beat.timestamp(), 1) if beat else None))
    return sorted(rows, key=lambda w: (w.queues, w.name))


def submission_status(redis: Redis, submission_id: str) -> SubmissionStatus:
    """Count a submission's jobs by RQ status, and by shard, in two round trips."""
    job_ids = [j.decode() for j in redis.lrange(keys.submission_jobs_key(submission_id), 0, -1)]
    if not job_ids:
        raise InputError(f"no submission {submission_id!r} in Redis (expired or never made)")
    with redis.pipeline(transaction=False) as pipe:
        for job_id in job_ids:
            pipe.hmget(Job.key_for(job_id), "status", "origin")
        replies = pipe.execute()
    statuses: Counter[str] = Counter()
    shards: Counter[str] = Counter()
    for status, origin in replies:
        statuses[status.decode() if status else "missing"] += 1
        if origin:
            shards[origin.decode()] += 1
    counts = {name: statuses.get(name, 0) for name in ("queued", "started", "finished", "failed")}
    counts.update(statuses)
    return SubmissionStatus(submission_id, len(job_ids), counts, dict(sorted(shards.items())))


def routing_source(epoch: int | None, events_epoch: bytes | None, live_epoch: bytes | None) -> str:
    """How the router knows what a shard's KV cache holds.

    ``confirmed``: its current worker's KV-cache events are arriving, so routing counts the
    blocks vLLM reported. ``predicted (events down)``: that worker runs with events but they
    stopped (its publisher does not answer); routing falls back to where prefixes were sent.
    ``predicted``: no events (turned off, or a worker that has not started them).
    """
    current = None if epoch is None else str(epoch).encode()
    if current is None or events_epoch != current:
        return "predicted"
    return "confirmed" if live_epoch == current else "predicted (events down)"


def _int_hash(raw: dict[bytes, bytes]) -> dict[str, int]:
    return {k.decode(): int(v) for k, v in raw.items()}


def render_cluster(status: ClusterStatus) -> str:
    """A plain-text report: one table of shards, one of workers, the throughput line."""
    shard_rows = [["shard", "queued", "started", "finished", "failed", "canceled", "load_tok",
                   "hit_rate", "cached/prompt_tok", "routing"]]
    for s in status.shards:
        rate = "-" if s.hit_rate is None else f"{s.hit_rate:.1%}"
        shard_rows.append([s.shard, str(s.queued), str(s.started), str(s.finished), str(s.failed),
                           str(s.canceled), str(s.load_tokens), rate,
                           f"{s.cached_tokens}/{s.prompt_tokens}",
                           f"confirmed ({s.confirmed_blocks} blocks)" if s.routing == "confirmed"
                           else s.routing])
    ended = sum(s.ended_in_window for s in status.shards)
    lines = _table(shard_rows, num_left=1)
    lines.append(f"throughput: {status.jobs_per_s:.2f} jobs/s "
                 f"({ended} finished or failed in the last {status.window_s} s)")
    lines.append("")
    if not status.workers:
        lines.append("workers: none registered")
        return "\n".join(lines)
    worker_rows = [["worker", "state", "queues", "ok", "failed", "in_flight", "heartbeat"]]
    for w in status.workers:
        beat = "-" if w.heartbeat_age_s is None else f"{w.heartbeat_age_s:.0f}s ago"
        worker_rows.append([w.name, w.state, ",".join(w.queues), str(w.successful_jobs),
                            str(w.failed_jobs), str(w.in_flight), beat])
    lines.extend(_table(worker_rows, num_left=3))
    return "\n".join(lines)


def render_submission(status: SubmissionStatus) -> str:
    """A plain-text report of one submission's progress."""
    counts = ", ".join(f"{name} {n}" for name, n in status.counts.items())
    shards = ", ".join(f"{shard} {n}" for shard, n in status.by_shard.items()) or "-"
    return (f"submission {status.submission_id}: {status.done}/{status.total} done\n"
            f"jobs: {counts}\nby shard: {shards}")


def _table(rows: list[list[str]], num_left: int) -> list[str]:
    """Aligned columns: the first ``num_left`` to the left (names), the rest to the right (numbers)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) if i < num_left else cell.rjust(w)
                      for i, (cell, w) in enumerate(zip(row, widths))).rstrip() for row in rows]
