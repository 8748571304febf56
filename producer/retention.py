"""Retention: deleting finished submissions, everything of theirs, once they are old enough.

Results already expire on their own after ``PREFIXQ_RESULT_TTL_S``; ``prefixq cleanup`` removes
them sooner, per submission. A submission is deleted only when every one of its jobs has ended
(finished, failed, canceled or stopped; a job hash that is already gone counts as ended) and
its last activity (its creation, its latest "done" mark, its latest job end) is older than
``older_than_s``. Deleted, per job: the RQ job hash, its result stream, its execution registry,
its prefixq first-result claim and its entries in the finished, failed and canceled registries
of every shard; then the submission's own keys (metadata, job ids, tags, done marks).

The check and the deletion are one atomic script per chunk of jobs, so a job requeued
meanwhile (the dashboard can requeue a failed job) is never deleted: its submission is kept
whole if it is in the first chunk, and its submission's keys are kept in every case. Shared
prefixes (documents) are not touched: other submissions may use them, and they expire after
``PREFIXQ_BLOB_TTL_S``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from redis import Redis
from redis.commands.core import Script
from rq.executions import ExecutionRegistry
from rq.job import Job, JobStatus
from rq.registry import CanceledJobRegistry, FailedJobRegistry, FinishedJobRegistry
from rq.results import Result
from rq.utils import utcparse

from common import keys

FINAL_STATUSES = frozenset({JobStatus.FINISHED.value, JobStatus.FAILED.value,
                            JobStatus.CANCELED.value, JobStatus.STOPPED.value})
CHUNK_JOBS = 500  # jobs per atomic check-and-delete script call

_SUBMISSION_PREFIX = keys.submission_key("")
_SUFFIXES = ("jobs", "tags", "done")

# KEYS: n job hashes, then the other keys to delete, then the registries to take the jobs off.
# ARGV: n, the number of other keys, dry run (1/0), final statuses joined by ",", the n job ids.
# Returns {0, keys deleted, registry entries removed} or {1, index of the job that is not final}.
_DELETE_LUA = """
local n, num_other, dry = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3] == '1'
local final = {}
for s in string.gmatch(ARGV[4], '[^,]+') do final[s] = true end
for i = 1, n do
  local status = redis.call('HGET', KEYS[i], 'status')
  if status and not final[status] then return {1, i} end
end
local num_keys = 0
for i = 1, n + num_other do
  if dry then num_keys = num_keys + redis.call('EXISTS', KEYS[i])
  else num_keys = num_keys + redis.call('DEL', KEYS[i]) end
end
local ids = {unpack(ARGV, 5, 4 + n)}
local num_entries = 0
for r = n + num_other + 1, #KEYS do
  if dry then
    for _, score in ipairs(redis.call('ZMSCORE', KEYS[r], unpack(ids))) do
      if score then num_entries = num_entries + 1 end
    end
  else
    num_entries = num_entries + redis.call('ZREM', KEYS[r], unpack(ids))
  end
end
return {0, num_keys, num_entries}
"""


@dataclass
class CleanupReport:
    """What a cleanup deleted (or, on a dry run, would delete) and what it kept, and why."""

    dry_run: bool
    older_than_s: float
    submissions_seen: int = 0
    submissions_deleted: int = 0
    jobs_deleted: int = 0  # of deleted submissions, and of a kept one's chunks deleted before a change
    keys_deleted: int = 0
    registry_entries_removed: int = 0
    kept_active: int = 0  # a job is queued, started, deferred or scheduled
    kept_recent: int = 0  # ended, but more recently than older_than_s
    kept_changed: int = 0  # a job was requeued while being deleted; the next run looks again
    deleted: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Submission:
    id: str
    job_ids: list[str]
    statuses: list[str | None]
    origins: set[str]
    last_activity_s: float | None  # None: no timestamp left anywhere


def cleanup(redis: Redis, shards: Iterable[str], *, older_than_s: float, dry_run: bool = False,
            now_s: float | None = None) -> CleanupReport:
    """Delete every finished submission whose last activity is older than ``older_than_s``."""
    now_s = time.time() if now_s is None else now_s
    report = CleanupReport(dry_run=dry_run, older_than_s=older_than_s)
    script = redis.register_script(_DELETE_LUA)
    for submission_id in sorted(_submission_ids(redis)):
        sub = _inspect(redis, submission_id)
        report.submissions_seen += 1
        if any(s is not None and s not in FINAL_STATUSES for s in sub.statuses):
            report.kept_active += 1
        elif sub.last_activity_s is not None and now_s - sub.last_activity_s < older_than_s:
            report.kept_recent += 1
        elif _delete(redis, script, sub, set(shards), dry_run, report):
            report.submissions_deleted += 1
            report.deleted.append(submission_id)
        else:
            report.kept_changed += 1
    return report


def _submission_ids(redis: Redis) -> set[str]:
    """Every submission with any key left in Redis."""
    found = set()
    for raw in redis.scan_iter(match=_SUBMISSION_PREFIX + "*", count=1000):
        rest = raw.decode()[len(_SUBMISSION_PREFIX):]
        submission_id, _, suffix = rest.partition(":")
        if keys.is_valid_id(submission_id) and suffix in ("", *_SUFFIXES):
            found.add(submission_id)
    return found


def _inspect(redis: Redis, submission_id: str) -> _Submission:
    """A submission's job ids, their statuses and origins, and its last activity (3 round trips)."""
    with redis.pipeline(transaction=False) as pipe:
        pipe.hmget(keys.submission_key(submission_id), "created_at_ms", "num_jobs")
        pipe.lrange(keys.submission_jobs_key(submission_id), 0, -1)
        pipe.xrevrange(keys.submission_done_key(submission_id), count=1)
        (created_ms, num_jobs), raw_ids, last_done = pipe.execute()
    job_ids = [j.decode() for j in raw_ids]
    if not job_ids and num_jobs:
        job_ids = [keys.job_id(submission_id, i) for i in range(int(num_jobs))]
    if not job_ids:  # only marks are left: they name the jobs
        entries: list[tuple[bytes, dict[bytes, bytes]]] = redis.xrange(  # type: ignore[assignment]
            keys.submission_done_key(submission_id))
        job_ids = list(dict.fromkeys(fields[b"job"].decode() for _, fields in entries if b"job" in fields))
    times = [int(created_ms) / 1000] if created_ms else []
    if last_done:
        times.append(int(last_done[0][0].split(b"-")[0]) / 1000)  # stream ids start with ms
    with redis.pipeline(transaction=False) as pipe:
        for job_id in job_ids:
            pipe.hmget(Job.key_for(job_id), "status", "origin", "ended_at")
        replies = pipe.execute()
    statuses, origins = [], set()
    for status, origin, ended_at in replies:
        statuses.append(status.decode() if status else None)
        if origin:
            origins.add(origin.decode())
        if ended_at:
            times.append(utcparse(ended_at.decode()).timestamp())
    return _Submission(submission_id, job_ids, statuses, origins, max(times) if times else None)


def _delete(redis: Redis, script: Script, sub: _Submission, shards: set[str], dry_run: bool,
            report: CleanupReport) -> bool:
    """Check and delete ``sub`` chunk by chunk; False if a job turned out not to have ended
    (the chunks before it are deleted then, the submission's own keys are not)."""
    registries = [registry(shard, connection=redis).key for shard in sorted(shards | sub.origins)
                  for registry in (FinishedJobRegistry, FailedJobRegistry, CanceledJobRegistry)]
    submission_keys = [keys.submission_key(sub.id), keys.submission_jobs_key(sub.id),
                       keys.submission_tags_key(sub.id), keys.submission_done_key(sub.id)]
    chunks = list(_chunks(sub.job_ids, CHUNK_JOBS)) or [[]]
    for i, chunk in enumerate(chunks):
        other = [key for job_id in chunk for key in (
            Result.get_key(job_id),  # type: ignore[no-untyped-call]
            keys.claim_key(job_id), ExecutionRegistry(job_id, redis).key)]
        if i == len(chunks) - 1:
            other += submission_keys  # last, once every job is gone
        reply = script(keys=[*(Job.key_for(j) for j in chunk), *other, *(registries if chunk else [])],
                       args=[len(chunk), len(other), int(dry_run), ",".join(sorted(FINAL_STATUSES)), *chunk])
        if reply[0] != 0:
            return False
        report.jobs_deleted += len(chunk)
        report.keys_deleted += reply[1]
        report.registry_entries_removed += reply[2]
    return True


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]
