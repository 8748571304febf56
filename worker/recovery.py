"""Finding and rerunning jobs whose worker died.

Every worker, every few heartbeats, looks at every shard's started registry for executions
whose lease ran out (RQ scores each entry with its last heartbeat plus the lease). One reaper
claims each such execution (``SET NX``) and then:

- drops it if the job already has a stored result (the worker died after storing it);
- fails it with a reason once it has been started ``max_attempts`` times;
- otherwise puts the job back at the front of a queue: its own shard's while that shard has a
  live worker (``prefixq:alive:<shard>``, refreshed by the worker's heartbeat), else the live
  shard with the least outstanding load, so a job never waits on a shard that stays down.

Ids that a dead worker pulled but never started (left in a queue's intermediate list) go back to
the queue when a worker for that shard starts, or to a live shard here once no worker serves it.
A shard that stays down longer than ``shard_down_grace_s`` has its queued jobs moved to the
least-loaded live shard too (a restarting worker is back well within the grace).
"""

from __future__ import annotations

import logging
import time

from redis import Redis
from rq.executions import Execution, ExecutionRegistry
from rq.job import JobStatus
from rq.queue import Queue
from rq.registry import StartedJobRegistry
from rq.utils import parse_composite_key

from common import keys
from common.codec import WireCodec, is_own_format
from common.errors import DecodeError
from common.rqjob import PrefixqJob
from common.schema import Request
from worker.rqbatch import store_failure, submission_of

log = logging.getLogger(__name__)


class Reaper:
    """Recovers abandoned executions on every shard; safe to run in every worker at once."""

    def __init__(self, connection: Redis, codec: WireCodec, shards: tuple[str, ...], *,
                 name: str, max_attempts: int, result_ttl_s: int, down_grace_s: int) -> None:
        self.connection, self.codec, self.shards, self.name = connection, codec, shards, name
        self.max_attempts, self.result_ttl_s, self.down_grace_s = max_attempts, result_ttl_s, down_grace_s

    def reap(self) -> int:
        """One pass over every shard; returns how many executions it recovered."""
        live = self._live_shards()
        recovered = 0
        for shard in self.shards:
            registry = StartedJobRegistry(shard, connection=self.connection, job_class=PrefixqJob,
                                          serializer=self.codec)
            for raw in self.connection.zrangebyscore(registry.key, 0, time.time()):
                entry = raw.decode()
                if self.connection.set(keys.reap_lock_key(entry), self.name, nx=True, ex=300):
                    self._recover(shard, entry, registry, live)
                    recovered += 1
            if shard not in live and live:
                self._rescue(Queue(shard, connection=self.connection).intermediate_queue_key, shard, live)
                if self._down_for_s(shard) > self.down_grace_s:
                    self._rescue(Queue(shard, connection=self.connection).key, shard, live)
        return recovered

    def _down_for_s(self, shard: str) -> float:
        key = keys.down_since_key(shard)
        self.connection.set(key, time.time(), nx=True, ex=7 * 86400)
        return time.time() - float(self.connection.get(key) or time.time())

    def _live_shards(self) -> dict[str, int]:
        """Shards with a live worker, with their outstanding load."""
        with self.connection.pipeline(transaction=False) as pipe:
            for shard in self.shards:
                pipe.exists(keys.alive_key(shard))
            pipe.hmget(keys.LOAD_KEY, list(self.shards))
            *alive, loads = pipe.execute()
        return {shard: int(load or 0) for shard, is_alive, load in zip(self.shards, alive, loads)
                if is_alive}

    def _recover(self, shard: str, entry: str, registry: StartedJobRegistry,
                 live: dict[str, int]) -> None:
        job_id, execution_id = parse_composite_key(entry)
        status, attempts, data = self.connection.hmget(PrefixqJob.key_for(job_id),
                                                       ["status", keys.ATTEMPTS_FIELD, "data"])
        with self.connection.pipeline() as pipe:
            pipe.zrem(registry.key, entry)
            pipe.delete(Execution(execution_id, job_id, self.connection).key)
            pipe.zrem(ExecutionRegistry(job_id, self.connection).key, execution_id)
            if status is None or status.decode() != JobStatus.STARTED.value or \
                    self.connection.exists(keys.claim_key(job_id)):
                pipe.execute()
                return
            num_attempts = int(attempts or 0)
            if num_attempts >= self.max_attempts:
                self._fail(job_id, shard, data, num_attempts, pipe)
                log.warning("reaper %s: job %s failed after %d attempts", self.name, job_id, num_attempts)
            else:
                target = shard if shard in live or not live else min(live, key=live.__getitem__)
                pipe.hset(PrefixqJob.key_for(job_id), mapping={"status": JobStatus.QUEUED.value,
                                                               "origin": target})
                pipe.lpush(Queue(target, connection=self.connection).key, job_id)
                log.warning("reaper %s: job %s (worker on %s died) requeued on %s", self.name,
                            job_id, shard, target)
            pipe.execute()

    def _fail(self, job_id: str, shard: str, data: bytes | None, attempts: int, pipe: object) -> None:
        job = PrefixqJob(job_id, connection=self.connection, serializer=self.codec)
        reason = f"worker died while running this job; gave up after {attempts} attempts"
        store_failure(pipe, job, shard, reason, self.result_ttl_s, self.name)  # type: ignore[arg-type]
        pipe.set(keys.claim_key(job_id), "reaper", nx=True, ex=self.result_ttl_s)  # type: ignore[attr-defined]
        request = self._request(data)
        if request is not None and request.load_tokens:
            pipe.hincrby(keys.LOAD_KEY, shard, -request.load_tokens)  # type: ignore[attr-defined]
        submission = submission_of(job_id)
        if submission is not None:
            pipe.xadd(keys.submission_done_key(submission), {"job": job_id, "ok": 0})  # type: ignore[attr-defined]

    def _request(self, data: bytes | None) -> Request | None:
        if not data or not is_own_format(data):
            return None
        try:
            return Request.from_wire(self.codec.loads(data)[2][0])
        except (DecodeError, IndexError, TypeError, KeyError):
            return None

    def _rescue(self, source: str, shard: str, live: dict[str, int]) -> None:
        """Move the ids of list ``source`` (of a shard with no worker) to the least-loaded live shard."""
        target = min(live, key=live.__getitem__)
        while (job_id := self.connection.rpop(source)) is not None:
            self.connection.hset(PrefixqJob.key_for(job_id.decode()), "origin", target)
            self.connection.lpush(Queue(target, connection=self.connection).key, job_id)
            log.warning("reaper %s: job %s moved from dead shard %s to %s", self.name,
                        job_id.decode(), shard, target)
