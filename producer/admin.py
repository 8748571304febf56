"""Operations on a running system: canceling a submission, resetting the shards' prefix caches.

Canceling takes every job of a submission still waiting in its queue, atomically per shard.

A job is canceled only if it is taken off its queue list in the same atomic step (a Lua script
per shard), so a job a worker has already pulled is never both canceled and run. Each canceled
job then gets what a finished one gets, so nothing waits on it forever: RQ's ``canceled``
status and registry, a stored result of type STOPPED saying it was canceled (waiters and
``prefixq results`` report it as failed), a "done" mark on the submission, and its reserved
prefill work taken off the shard's routing load.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field

from redis import Redis
from rq.command import send_command
from rq.job import Job, JobStatus
from rq.queue import Queue
from rq.registry import CanceledJobRegistry
from rq.results import Result

from common import keys
from common.codec import WireCodec
from common.errors import DecodeError, InputError
from common.rqjob import PrefixqJob, PrefixqResult
from common.schema import Request
from worker.commands import RESET_PREFIX_CACHE

CANCELED_MESSAGE = "canceled: removed from its queue by `prefixq cancel` before any worker took it"

# KEYS: queue list, load hash, canceled registry, then one job hash per job.
# ARGV: shard, registry score, job hash TTL (<= 0: keep), then per job: id, load tokens.
# Few ids: LREM each. Many: one pass over the list, rebuilt without them (LREM per id would be
# O(queue length) each). Returns the ids it removed (only those are marked canceled).
_CANCEL_LUA = """
local n = (#ARGV - 3) / 2
local removed = {}
if n <= 16 then
  for i = 1, n do
    if redis.call('LREM', KEYS[1], 1, ARGV[2 + 2 * i]) > 0 then removed[#removed + 1] = i end
  end
else
  local wanted = {}
  for i = 1, n do wanted[ARGV[2 + 2 * i]] = i end
  local kept = {}
  for _, id in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
    local i = wanted[id]
    if i then
      removed[#removed + 1] = i
      wanted[id] = nil
    else
      kept[#kept + 1] = id
    end
  end
  if #removed > 0 then
    redis.call('DEL', KEYS[1])
    for s = 1, #kept, 1000 do
      redis.call('RPUSH', KEYS[1], unpack(kept, s, math.min(s + 999, #kept)))
    end
  end
end
local ttl = tonumber(ARGV[3])
local ids = {}
for _, i in ipairs(removed) do
  local id = ARGV[2 + 2 * i]
  redis.call('HSET', KEYS[3 + i], 'status', 'canceled')
  if ttl > 0 then redis.call('EXPIRE', KEYS[3 + i], ttl) end
  redis.call('ZADD', KEYS[3], ARGV[2], id)
  local load = tonumber(ARGV[3 + 2 * i])
  if load > 0 then redis.call('HINCRBY', KEYS[2], ARGV[1], -load) end
  ids[#ids + 1] = id
end
return ids
"""


@dataclass(frozen=True)
class CancelReport:
    """How a cancel went: jobs canceled now, and the others by their current status."""

    submission_id: str
    total: int
    canceled: int
    not_canceled: dict[str, int] = field(default_factory=dict)


def cancel_submission(redis: Redis, submission_id: str, codec: WireCodec, *,
                      result_ttl_s: int) -> CancelReport:
    """Cancel every job of ``submission_id`` that is still in its queue."""
    job_ids = [j.decode() for j in redis.lrange(keys.submission_jobs_key(submission_id), 0, -1)]
    if not job_ids:
        raise InputError(f"no submission {submission_id!r} in Redis (expired or never made)")
    queued_by_shard: dict[str, list[tuple[str, bytes]]] = {}
    with redis.pipeline(transaction=False) as pipe:
        for job_id in job_ids:
            pipe.hmget(Job.key_for(job_id), "status", "origin", "data")
        for job_id, (status, origin, data) in zip(job_ids, pipe.execute()):
            if status == JobStatus.QUEUED.value.encode() and origin:
                queued_by_shard.setdefault(origin.decode(), []).append((job_id, data or b""))
    script = redis.register_script(_CANCEL_LUA)
    canceled: list[str] = []
    for shard, jobs in queued_by_shard.items():
        args: list[str | int] = [shard, int(time.time()), result_ttl_s]
        for job_id, data in jobs:
            args += [job_id, _load_tokens(data, codec)]
        job_keys = [Job.key_for(job_id) for job_id, _ in jobs]
        registry = CanceledJobRegistry(shard, connection=redis).key
        found = script(keys=[Queue(shard, connection=redis).key, keys.LOAD_KEY, registry, *job_keys],
                       args=args)
        canceled += [job_id.decode() for job_id in found]
    _store_outcomes(redis, submission_id, canceled, codec, result_ttl_s)
    gone = set(canceled)
    return CancelReport(submission_id, len(job_ids), len(canceled),
                        _statuses(redis, [j for j in job_ids if j not in gone]))


def _store_outcomes(redis: Redis, submission_id: str, job_ids: list[str], codec: WireCodec,
                    result_ttl_s: int) -> None:
    """A STOPPED result and a done mark per canceled job, so waiters finish (one pipeline)."""
    if not job_ids:
        return
    done_key = keys.submission_done_key(submission_id)
    with redis.pipeline() as pipe:
        for job_id in job_ids:
            job = PrefixqJob(job_id, connection=redis, serializer=codec)
            PrefixqResult.create(job, Result.Type.STOPPED, result_ttl_s, exc_string=CANCELED_MESSAGE,
                                 pipeline=pipe)
            pipe.xadd(done_key, {"job": job_id, "ok": 0})
        pipe.expire(done_key, result_ttl_s if result_ttl_s > 0 else 7 * 86400)
        pipe.execute()


def _load_tokens(data: bytes, codec: WireCodec) -> int:
    """The prefill work the router reserved for a job (0 if its payload is not prefixq's)."""
    try:
        _func, _instance, args, _kwargs = codec.loads(data)
        return Request.from_wire(args[0]).load_tokens
    except (DecodeError, ValueError, TypeError, IndexError):
        return 0


def _statuses(redis: Redis, job_ids: list[str]) -> dict[str, int]:
    with redis.pipeline(transaction=False) as pipe:
        for job_id in job_ids:
            pipe.hget(Job.key_for(job_id), "status")
        counts = Counter(s.decode() if s else "missing" for s in pipe.execute())
    return dict(sorted(counts.items()))


@dataclass(frozen=True)
class ResetReply:
    """One shard's answer to a prefix-cache reset."""

    shard: str
    worker: str | None
    ok: bool
    detail: str


def reset_prefix_caches(connection: Redis, shards: tuple[str, ...], timeout_s: float = 30.0) -> list[ResetReply]:
    """Ask the live worker of each shard to empty its engine's prefix cache and start a new
    epoch (routing then forgets what the shard held, as after a restart); wait for the answers.

    vLLM refuses while requests are running: reset when the shards are idle.
    """
    reply_to = keys.reply_key(uuid.uuid4().hex)
    replies: dict[str, ResetReply] = {}
    asked: dict[str, str] = {}
    for shard in shards:
        name = connection.get(keys.alive_key(shard))
        if name is None:
            replies[shard] = ResetReply(shard, None, False, "no live worker")
            continue
        worker = name.decode()
        asked[worker] = shard
        send_command(connection, worker, RESET_PREFIX_CACHE, reply_to=reply_to)
    deadline = time.monotonic() + timeout_s
    while len(replies) < len(shards):
        left = deadline - time.monotonic()
        popped = connection.blpop([reply_to], timeout=max(0.01, left)) if left > 0 else None
        if popped is None:
            break
        answer = json.loads(popped[1])
        shard = asked.get(answer.get("worker"))
        if shard is None:
            continue
        detail = f"epoch {answer.get('epoch')}" if answer.get("ok") else \
            f"refused by the engine ({answer.get('running')} job(s) running)"
        replies[shard] = ResetReply(shard, answer["worker"], bool(answer.get("ok")), detail)
    connection.delete(reply_to)
    for name, shard in asked.items():
        replies.setdefault(shard, ResetReply(shard, name, False, f"no answer within {timeout_s:g} s"))
    return [replies[shard] for shard in shards]
