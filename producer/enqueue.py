"""RQ's enqueue of a submission's jobs, done in Redis from a compact list.

``Queue.enqueue_many`` builds a ``Job`` object per job, turns it into its hash with ``to_dict``
(formatting two timestamps per job) and queues three commands per job into a pipeline; for
small jobs that was about a third of the producer's CPU (session 24's profile). The jobs of
one submission differ only in their id, data and description, so here RQ builds one job per
shard the way ``enqueue_many`` would, its hash (without data and description) is the template
for every job of that shard, and a Lua script writes each job's hash and pushes its id: the keys
and fields ``enqueue_many`` leaves behind, with one creation and enqueue time per submission
instead of one per job. ``tests/test_enqueue.py`` enqueues the same jobs both ways and compares
every key, so a change of RQ's layout (pinned to rq 3.0.0) fails there.

The keys are not declared to Redis: like RQ, this suits a single Redis server, not Redis Cluster.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgpack
from rq.job import JobStatus
from rq.queue import Queue

from common.scripted import redis_text

# ARGV[1]: {queues = RQ's set of queue keys, job_prefix, shards = {{queue = its list key,
# fields = {field, value, ...} shared by its jobs, jobs = {{id, data, description}, ...}}, ...}}.
ENQUEUE_LUA = """
local h = cmsgpack.unpack(ARGV[1])
local n = 0
for _, s in ipairs(h.shards) do
  redis.call('SADD', h.queues, s.queue)
  local args = {'', 'data', '', 'description', ''}
  for _, v in ipairs(s.fields) do args[#args + 1] = v end
  local ids = {}
  for i, j in ipairs(s.jobs) do
    args[1], args[3], args[5] = h.job_prefix .. j[1], j[2], j[3]
    redis.call('HSET', unpack(args))
    ids[i] = j[1]
  end
  redis.call('RPUSH', s.queue, unpack(ids))
  n = n + #ids
end
return n
"""
CHUNK_JOBS = 1000  # jobs per script call (Lua's unpack takes about 8,000 values; a short call)


@dataclass(frozen=True)
class NewJob:
    """One job to enqueue: its id, its one argument (the request on the wire) and description."""

    job_id: str
    wire: bytes
    description: str


def template(queue: Queue, first: NewJob, func: str, **options: Any) -> dict[str, Any]:
    """The hash RQ's ``enqueue_many`` writes for ``first`` into ``queue`` (``options`` as for
    ``Queue.prepare_data``), without its data and description."""
    job = queue.create_job(func, args=(first.wire,), job_id=first.job_id, description=first.description,
                           status=JobStatus.QUEUED, **options)
    queue._prepare_for_queue(job)  # origin, enqueue time, timeout and status, as enqueue_many sets them
    mapping = job.to_dict()
    del mapping["data"], mapping["description"]
    return mapping


def job_data(queue: Queue, func: str, wire: bytes) -> bytes:
    """A job's ``data`` field as RQ makes it (``Job.data``) for ``func(wire)``."""
    return queue.serializer.dumps((func, None, (wire,), {}))


def payloads(queues: dict[str, Queue], jobs: dict[str, list[NewJob]], func: str,
             **options: Any) -> list[bytes]:
    """The script's arguments for ``jobs`` (by shard, into ``queues``), at most
    :data:`CHUNK_JOBS` jobs each, in order."""
    calls: list[bytes] = []
    shards: list[dict[str, Any]] = []
    room = CHUNK_JOBS
    any_queue = next(iter(queues.values()))
    for shard, new in jobs.items():
        if not new:
            continue
        queue = queues[shard]
        fields = [redis_text(v)
                  for pair in template(queue, new[0], func, **options).items() for v in pair]
        rows = [[j.job_id, job_data(queue, func, j.wire), j.description] for j in new]
        while rows:
            part, rows = rows[:room], rows[room:]
            shards.append({"queue": queue.key, "fields": fields, "jobs": part})
            room -= len(part)
            if room == 0:
                calls.append(_packed(any_queue, shards))
                shards, room = [], CHUNK_JOBS
    if shards:
        calls.append(_packed(any_queue, shards))
    return calls


def _packed(queue: Queue, shards: list[dict[str, Any]]) -> bytes:
    return msgpack.packb({"queues": queue.redis_queues_keys, "job_prefix": queue.job_class.key_for(""),
                          "shards": shards}, use_bin_type=False)
