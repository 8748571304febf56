"""RQ's writes for starting, heartbeating and finishing a batch of jobs, done in Redis from a
compact list.

Starting a job the RQ way (``Execution.create`` and ``Job.prepare_for_execution``) and finishing
it (``Result.create``, ``FinishedJobRegistry.add``, ``Execution.delete``) queue about 20
commands per job; building them through RQ's objects and redis-py's argument packing was most of
a worker's CPU per job (benchmark notes, sessions 10 and 20). Here Python sends, per job, only
what differs between jobs (ids, the result, its time to live) and values computed once per
batch (timestamps, registry scores, keys); a Lua script writes the same keys and fields RQ's
methods would, in the same order. Each script also does what used to take a round trip of its
own: the start reads back the fields of each job hash that the worker uses, and the finish
claims each job's first result (prefixq's exactly-once rule) in the same atomic call as the
writes. ``tests/test_rqwrites.py`` runs RQ's own methods and these
scripts on the same jobs and compares every key they leave behind, so a change of RQ's layout
(pinned to rq 3.0.0) fails there.

The payload is one msgpack argument (Redis's ``cmsgpack`` decodes it). The keys are not
declared to Redis: like RQ, this suits a single Redis server, not Redis Cluster.
"""

from __future__ import annotations

import calendar
import uuid
from base64 import b64encode
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgpack
from redis import Redis
from rq.executions import WORKER_EXECUTIONS_KEY_TEMPLATE, Execution, ExecutionRegistry
from rq.job import JobStatus
from rq.results import Result
from rq.utils import utcformat

from common import keys
from common.rqjob import PrefixqJob, PrefixqResult

# Key prefixes, taken from RQ's own templates so that the scripts build RQ's keys.
_JOB_PREFIX = PrefixqJob.key_for("")
_EXECUTION_PREFIX = Execution("e", "j", connection=None).key.removesuffix("j:e")  # type: ignore[arg-type]
_EXECUTIONS_PREFIX = ExecutionRegistry.key_template.format("")
_RESULTS_PREFIX = PrefixqResult.get_key("")
_CLAIM_PREFIX = keys.claim_key("")  # prefixq's first-result claims

# ARGV[1]: {header fields..., terminal = {status = 1, ...}, jobs = {{job id, execution id}, ...}}.
# Every id leaves the intermediate list. A job whose hash is gone or whose status is terminal
# (canceled, or done by an earlier run) is skipped: its reply is 0. Every other job is started
# as RQ's Execution.create and Job.prepare_for_execution start it (its origin becomes this
# queue if it was taken from another), and its reply is what the worker reads of its hash:
# {data, timeout, result_ttl, failure_ttl, enqueued_at}, a missing field as nil.
START_LUA = """
local h = cmsgpack.unpack(ARGV[1])
local replies = {}
for i, j in ipairs(h.jobs) do
  local id, eid = j[1], j[2]
  local job, composite = h.job_prefix .. id, id .. ':' .. eid
  redis.call('LREM', h.intermediate, 1, id)
  local f = redis.call('HMGET', job, 'status', 'origin', 'data', 'timeout', 'result_ttl', 'failure_ttl',
                       'enqueued_at')
  if redis.call('EXISTS', job) == 0 or (f[1] and h.terminal[f[1]]) then
    replies[i] = 0
  else
    if f[2] ~= h.origin then redis.call('HSET', job, 'origin', h.origin) end
    local execution = h.execution_prefix .. composite
    redis.call('HSET', execution, 'id', eid, 'job_id', id, 'created_at', h.stamp, 'last_heartbeat', h.stamp,
               'worker_name', h.worker)
    redis.call('EXPIRE', execution, h.ttl)
    local executions = h.executions_prefix .. id
    redis.call('ZADD', executions, h.executions_score, eid)
    redis.call('EXPIRE', executions, h.index_ttl)
    redis.call('ZADD', h.started, h.started_score, composite)
    redis.call('SADD', h.worker_executions, composite)
    redis.call('EXPIRE', h.worker_executions, h.index_ttl)
    redis.call('HSET', job, 'last_heartbeat', h.iso, 'status', h.status, 'started_at', h.iso, 'worker_name', h.worker)
    redis.call('HINCRBY', job, h.attempts_field, 1)
    replies[i] = {f[3], f[4], f[5], f[6], f[7]}
  end
end
redis.call('HSET', h.worker_key, 'state', h.worker_state)
return replies
"""

# ARGV[1]: {header fields..., jobs = {{job id, execution id, execution's start (text), result's
# return_value (base64 text), result ttl (integer), finished registry score (text), done stream
# key or '', load tokens, prompt tokens, cached tokens}, ...}, failed = {{job id, execution id,
# the failure's commands (msgpack, as common.scripted packs them), load tokens, done stream key
# or ''}, ...}}.
# Each execution first claims its job's first result (SET NX): a job that already has one (a
# duplicate run) only has its execution freed, as Execution.delete frees it. A claimed success
# is written as RQ's Result.create, FinishedJobRegistry.add and Execution.delete write it; a
# claimed failure runs its commands (RQ's own writes, made in Python). Claims and writes are one
# atomic call: a worker that dies mid-finish leaves no claim without its result. Then the
# counters, once per batch: the released load, the shard's token counts, RQ's worker job counts,
# the done streams' expiry. Returns 1 (claimed) or 0 (duplicate) per job, successes first.
FINISH_LUA = """
local h = cmsgpack.unpack(ARGV[1])
local claims, done = {}, {}
local load, jobs, prompt, cached, failed = 0, 0, 0, 0, 0
local function claim(id, eid)
  if h.claim_ttl > 0 then return redis.call('SET', h.claim_prefix .. id, eid, 'NX', 'EX', h.claim_ttl) end
  return redis.call('SET', h.claim_prefix .. id, eid, 'NX')
end
local function free(id, eid)
  local composite = id .. ':' .. eid
  redis.call('DEL', h.execution_prefix .. composite)
  redis.call('ZREM', h.started, composite)
  redis.call('ZREM', h.executions_prefix .. id, eid)
  redis.call('SREM', h.worker_executions, composite)
end
for _, j in ipairs(h.jobs) do
  local id, eid, ttl = j[1], j[2], j[5]
  if not claim(id, eid) then
    free(id, eid)
    claims[#claims + 1] = 0
  else
    local job = h.job_prefix .. id
    redis.call('HSET', job, 'status', h.status, 'ended_at', h.iso)
    local result = h.results_prefix .. id
    redis.call('XADD', result, 'MAXLEN', '~', '10', '*', 'type', h.result_type, 'worker_name', h.worker,
               'return_value', j[4], 'execution_id', eid, 'execution_started_at', j[3],
               'execution_ended_at', h.stamp)
    if ttl == -1 then redis.call('PERSIST', result) else redis.call('EXPIRE', result, ttl) end
    redis.call('ZADD', h.finished, j[6], id)
    if ttl > 0 then redis.call('EXPIRE', job, ttl) end
    free(id, eid)
    if j[7] ~= '' then
      redis.call('XADD', j[7], '*', 'job', id, 'ok', '1')
      done[j[7]] = true
    end
    load, jobs, prompt, cached = load + j[8], jobs + 1, prompt + j[9], cached + j[10]
    claims[#claims + 1] = 1
  end
end
for _, f in ipairs(h.failed) do
  local id, eid = f[1], f[2]
  if not claim(id, eid) then
    free(id, eid)
    claims[#claims + 1] = 0
  else
    for _, command in ipairs(cmsgpack.unpack(f[3])) do redis.call(unpack(command)) end
    if f[5] ~= '' then done[f[5]] = true end
    load, failed = load + f[4], failed + 1
    claims[#claims + 1] = 1
  end
end
if load ~= 0 then redis.call('HINCRBY', h.load_key, h.shard, -load) end
if jobs > 0 then
  redis.call('HINCRBY', h.stats_key, 'jobs', jobs)
  redis.call('HINCRBY', h.stats_key, 'prompt_tokens', prompt)
  redis.call('HINCRBY', h.stats_key, 'cached_tokens', cached)
  redis.call('HINCRBY', h.worker_key, 'successful_job_count', jobs)
end
if failed > 0 then redis.call('HINCRBY', h.worker_key, 'failed_job_count', failed) end
for key in pairs(done) do redis.call('EXPIRE', key, h.done_ttl) end
return claims
"""

# ARGV[1]: {header fields..., jobs = {{job id, execution id}, ...}}: what Execution.heartbeat
# and Job.heartbeat write for each running job.
BEAT_LUA = """
local h = cmsgpack.unpack(ARGV[1])
for _, j in ipairs(h.jobs) do
  local id, eid = j[1], j[2]
  local composite = id .. ':' .. eid
  local execution = h.execution_prefix .. composite
  redis.call('HSET', execution, 'last_heartbeat', h.stamp)
  redis.call('EXPIRE', execution, h.ttl)
  redis.call('ZADD', h.started, 'XX', h.started_score, composite)
  local executions = h.executions_prefix .. id
  redis.call('ZADD', executions, 'XX', h.executions_score, eid)
  redis.call('EXPIRE', executions, h.index_ttl)
  redis.call('HSET', h.job_prefix .. id, 'last_heartbeat', h.iso)
end
return #h.jobs
"""


def new_execution_id() -> str:
    """An execution id as RQ makes them."""
    return uuid.uuid4().hex


def _text(value: float | int) -> str:
    return repr(value)  # as redis-py sends a number


def _seconds(stamp: datetime) -> int:
    """``stamp`` in whole seconds, as RQ's ``current_timestamp()`` gives the registries' scores."""
    return calendar.timegm(stamp.utctimetuple())


def _packed(header: dict[str, Any]) -> bytes:
    return msgpack.packb(header, use_bin_type=False)


@dataclass(frozen=True)
class WorkerKeys:
    """What a worker's batch writes name: its RQ worker key and name, its queue's keys."""

    worker: str
    worker_key: str
    queue_name: str
    intermediate: str
    started: str
    finished: str

    @property
    def worker_executions(self) -> str:
        return WORKER_EXECUTIONS_KEY_TEMPLATE.format(self.worker)


# The statuses after which a job is not run again (its id may still sit in a list).
_TERMINAL = {status.value: 1 for status in (JobStatus.FINISHED, JobStatus.FAILED, JobStatus.CANCELED,
                                            JobStatus.STOPPED)}


def start_payload(where: WorkerKeys, jobs: list[tuple[str, str]], ttl: int, stamp: datetime) -> bytes:
    """The start script's argument: ``jobs`` as (job id, execution id), started at ``stamp``
    with heartbeat ``ttl``."""
    timestamp = _seconds(stamp)
    return _packed({
        "intermediate": where.intermediate, "started": where.started, "origin": where.queue_name,
        "worker": where.worker, "worker_key": where.worker_key,
        "worker_executions": where.worker_executions, "worker_state": "busy",
        "job_prefix": _JOB_PREFIX, "execution_prefix": _EXECUTION_PREFIX,
        "executions_prefix": _EXECUTIONS_PREFIX, "attempts_field": keys.ATTEMPTS_FIELD,
        "status": JobStatus.STARTED.value, "stamp": _text(stamp.timestamp()), "iso": utcformat(stamp),
        "ttl": ttl, "index_ttl": ttl + 60,
        # ExecutionRegistry.add scores now + ttl + 60; StartedJobRegistry.add_execution now + ttl.
        "executions_score": _text(timestamp + ttl + 60), "started_score": _text(timestamp + ttl),
        "terminal": _TERMINAL, "jobs": [[job_id, eid] for job_id, eid in jobs],
    })


@dataclass(frozen=True)
class Finished:
    """One successful execution to finish: ids, when it started, its return value as RQ stores
    it (the serializer's bytes), its result ttl, the submission's done stream ("" if none), and
    what it adds to the counters (the load it releases, its prompt and cached tokens)."""

    job_id: str
    execution_id: str
    started_at: datetime
    return_value: bytes
    ttl: int
    done_key: str = ""
    load_tokens: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0


@dataclass(frozen=True)
class Failed:
    """One failed execution to finish: ids, RQ's writes for the failure (packed by
    :meth:`common.scripted.ScriptedPipeline.take_packed`, run only if the execution claims the
    job's result), the load it releases and the submission's done stream ("" if none)."""

    job_id: str
    execution_id: str
    commands: bytes
    load_tokens: int = 0
    done_key: str = ""


@dataclass(frozen=True)
class Counters:
    """What the finish script needs to add up a batch for one shard, beyond its keys."""

    shard: str
    claim_ttl: int  # a result claim's time to live (0: none)
    done_ttl: int  # a done stream's time to live once a job of it ends


def finish_payload(where: WorkerKeys, counters: Counters, finished: list[Finished],
                   failed: list[Failed], stamp: datetime) -> bytes:
    """The finish script's argument: ``finished`` and ``failed`` ended at ``stamp``."""
    timestamp = _seconds(stamp)
    jobs = []
    for f in finished:
        # FinishedJobRegistry.add: a negative ttl is the score itself, -1 meaning forever.
        score = "+inf" if f.ttl == -1 else _text(f.ttl if f.ttl < 0 else timestamp + f.ttl)
        jobs.append([f.job_id, f.execution_id, _text(f.started_at.timestamp()),
                     b64encode(f.return_value).decode(), f.ttl, score, f.done_key,
                     f.load_tokens, f.prompt_tokens, f.cached_tokens])
    return _packed({
        "finished": where.finished, "started": where.started, "worker": where.worker,
        "worker_key": where.worker_key, "worker_executions": where.worker_executions,
        "job_prefix": _JOB_PREFIX, "execution_prefix": _EXECUTION_PREFIX,
        "executions_prefix": _EXECUTIONS_PREFIX, "results_prefix": _RESULTS_PREFIX,
        "status": JobStatus.FINISHED.value, "result_type": _text(Result.Type.SUCCESSFUL.value),
        "iso": utcformat(stamp), "stamp": _text(stamp.timestamp()),
        "shard": counters.shard, "load_key": keys.LOAD_KEY, "stats_key": keys.shard_stats_key(counters.shard),
        "claim_prefix": _CLAIM_PREFIX, "claim_ttl": counters.claim_ttl,
        "done_ttl": counters.done_ttl, "jobs": jobs,
        "failed": [[f.job_id, f.execution_id, f.commands, f.load_tokens, f.done_key] for f in failed],
    })


def beat_payload(where: WorkerKeys, running: list[tuple[str, str]], ttl: int, stamp: datetime) -> bytes:
    """The heartbeat script's argument: ``running`` as (job id, execution id), beating at
    ``stamp`` with heartbeat ``ttl``."""
    timestamp = _seconds(stamp)
    return _packed({
        "started": where.started, "job_prefix": _JOB_PREFIX, "execution_prefix": _EXECUTION_PREFIX,
        "executions_prefix": _EXECUTIONS_PREFIX, "stamp": _text(stamp.timestamp()),
        "iso": utcformat(stamp), "ttl": ttl, "index_ttl": ttl + 60,
        "executions_score": _text(timestamp + ttl + 60), "started_score": _text(timestamp + ttl),
        "jobs": [[job_id, eid] for job_id, eid in running],
    })


def register(connection: Redis) -> tuple[Any, Any, Any]:
    """The start, finish and heartbeat scripts, registered with ``connection``."""
    return (connection.register_script(START_LUA), connection.register_script(FINISH_LUA),
            connection.register_script(BEAT_LUA))
