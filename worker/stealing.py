"""Taking queued work from a busier shard, so that no engine idles while another has a queue.

The router places each request when it is enqueued, on an estimate of every shard's outstanding
prefill work. Estimates miss (one GPU runs slower, decodes are longer than guessed, a machine's
cores slow down unevenly), and a shard that finishes early would then wait while another still
has a queue. A worker short of work (its own queue empty, its engine wanting more: see
:mod:`worker.admission`) therefore takes jobs from the tail of the queue of the shard with the
most outstanding work, as an RQ worker listening on several queues would, with three rules:

- whole groups only: jobs that share a prefix (the questions about one document) move together,
  and the group at the head of the queue never moves (its worker may have begun it, and so
  holds its prefix in cache), so no prefix is computed on two shards;
- at most half the difference between the two shards' loads moves, so the other shard is left
  at least as loaded as this one (no ping-pong);
- the reserved work moves with the jobs (``prefixq:load``), in the same atomic script that
  moves the ids; a job whose id is no longer in the queue (its worker pulled it meanwhile)
  stays where it is.

A taken job is started like a pulled one, and moves to this worker's queue then (its ``origin``),
so it is recovered, reported and counted as this shard's from there on.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from redis import Redis
from rq.queue import Queue

from common import keys
from common.codec import WireCodec, is_own_format
from common.errors import DecodeError
from common.rqjob import PrefixqJob
from common.schema import Request

log = logging.getLogger(__name__)

WINDOW = 32  # ids looked at from the tail of the busier queue

# Move the given ids (ARGV[3], ARGV[5], ...) that are still in the busier shard's queue (KEYS[1])
# to this worker's intermediate list (KEYS[2]), and the prefill work they reserved (ARGV[4], ...)
# in the load hash (KEYS[3]) from that shard (ARGV[1]) to this one (ARGV[2]).
_STEAL_LUA = """
local moved = {}
local tokens = 0
for i = 3, #ARGV, 2 do
  if redis.call('LREM', KEYS[1], -1, ARGV[i]) == 1 then
    redis.call('RPUSH', KEYS[2], ARGV[i])
    moved[#moved + 1] = ARGV[i]
    tokens = tokens + tonumber(ARGV[i + 1])
  end
end
if tokens ~= 0 then
  redis.call('HINCRBY', KEYS[3], ARGV[1], -tokens)
  redis.call('HINCRBY', KEYS[3], ARGV[2], tokens)
end
return moved
"""


@dataclass(frozen=True)
class Queued:
    """A job still in a queue, as a worker that might take it sees it."""

    job_id: bytes
    group: str | None  # its shared prefix ("" if none); None: not prefixq's, or unreadable
    tokens: int  # the prefill work it reserved on its shard's load


class Stealer:
    """Takes whole groups of queued jobs from busier shards for one shard's worker."""

    def __init__(self, connection: Redis, codec: WireCodec, shard: str, shards: tuple[str, ...],
                 intermediate_key: str) -> None:
        self.connection, self.codec, self.shard = connection, codec, shard
        self.others = tuple(s for s in shards if s != shard)
        self.intermediate_key = intermediate_key
        self._script = connection.register_script(_STEAL_LUA)
        self.num_taken = 0
        # What the last look at each busier queue's tail read, by job id: a queued job's data
        # does not change, and a worker short of work looks at the same tail again and again
        # (about every second while its own jobs run) without taking anything.
        self._peeked: dict[str, dict[bytes, Queued]] = {}

    def steal(self, max_tokens: int, max_jobs: int = WINDOW) -> list[bytes]:
        """Move up to ``max_tokens`` of queued work (``max_jobs`` jobs) from the busiest other
        shard to this worker's intermediate list; the ids moved (start them as pulled ones)."""
        victim, budget = self.busiest(max_tokens)
        if victim is None:
            return []
        return self.move(victim, self.choose(victim, budget, max_jobs))

    def busiest(self, max_tokens: int) -> tuple[str | None, int]:
        """The other shard with the most outstanding work and at least two queued jobs, and how
        many tokens of its work to take: at most ``max_tokens`` and half the loads' difference
        (None, 0 if no shard is busier than this one)."""
        if not self.others or max_tokens <= 0:
            return None, 0
        with self.connection.pipeline(transaction=False) as pipe:
            for shard in self.others:
                pipe.llen(queue_key(shard))
            pipe.hmget(keys.LOAD_KEY, [self.shard, *self.others])
            *lengths, loads = pipe.execute()
        load = {shard: int(value or 0) for shard, value in zip((self.shard, *self.others), loads)}
        busier = [(load[shard], shard) for shard, length in zip(self.others, lengths) if length >= 2]
        if not busier:
            return None, 0
        victim_load, victim = max(busier)
        budget = min(max_tokens, (victim_load - load[self.shard]) // 2)
        return (victim, budget) if budget > 0 else (None, 0)

    def choose(self, victim: str, budget: int, max_jobs: int = WINDOW) -> list[Queued]:
        """The jobs at the tail of ``victim``'s queue that may move (:func:`tail_groups`)."""
        tail = self.connection.lrange(queue_key(victim), -WINDOW, -1)
        known = self._peeked.get(victim, {})
        unread = [job_id for job_id in tail if job_id not in known]
        with self.connection.pipeline(transaction=False) as pipe:
            for job_id in unread:
                pipe.hget(PrefixqJob.key_for(job_id.decode()), "data")
            datas = pipe.execute() if unread else []
        read = {job_id: self._peek(job_id, data) for job_id, data in zip(unread, datas)}
        queued = [known.get(job_id) or read[job_id] for job_id in tail]
        # Kept for the next look: this tail's readable jobs (one that could not be read is read
        # again next time).
        self._peeked[victim] = {q.job_id: q for q in queued if q.group is not None}
        return tail_groups(queued, budget, max_jobs)

    def move(self, victim: str, chosen: list[Queued]) -> list[bytes]:
        """Move those of ``chosen`` still in ``victim``'s queue, with their reserved work, in
        one atomic script; the ids moved."""
        if not chosen:
            return []
        args: list[Any] = [victim, self.shard]
        for queued in chosen:
            args += [queued.job_id, queued.tokens]
        moved: list[bytes] = self._script(keys=[queue_key(victim), self.intermediate_key, keys.LOAD_KEY],
                                          args=args)
        if moved:
            self.num_taken += len(moved)
            log.info("%s: took %d queued job(s) from %s's queue", self.shard, len(moved), victim)
        return moved

    def _peek(self, job_id: bytes, data: bytes | None) -> Queued:
        """A queued job's prefix group and reserved work, read from its data."""
        if not data or not is_own_format(data):
            return Queued(job_id, None, 0)
        try:
            request = Request.from_wire(self.codec.loads(data)[2][0])
        except (DecodeError, IndexError, TypeError, KeyError):
            return Queued(job_id, None, 0)
        return Queued(job_id, request.prefix_id or "", request.load_tokens)


def queue_key(shard: str) -> str:
    """The Redis list of the RQ queue that feeds ``shard``."""
    return Queue.redis_queue_namespace_prefix + keys.queue_name(shard)


def tail_groups(queued: list[Queued], budget: int, max_jobs: int = WINDOW) -> list[Queued]:
    """Which of the last jobs of a queue (``queued``, oldest first) another worker may take:
    whole runs of jobs that share a prefix, from the tail, up to ``budget`` tokens and
    ``max_jobs`` jobs in all. The
    run at the front of ``queued`` stays (it may go on before it, or its worker may have begun
    it) unless its jobs share no prefix; so does everything before a job that is not readable."""
    chosen: list[Queued] = []
    total = 0
    end = len(queued)
    while end > 0:
        group = queued[end - 1].group
        if group is None:
            break
        start = end - 1
        if group:  # a shared prefix: the whole run of jobs with it
            while start > 0 and queued[start - 1].group == group:
                start -= 1
            if start == 0:
                break
        run = queued[start:end]
        tokens = sum(q.tokens for q in run)
        if total + tokens > budget or len(chosen) + len(run) > max_jobs:
            break
        chosen[:0] = run
        total += tokens
        end = start
    return chosen
