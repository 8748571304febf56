"""RQ bookkeeping for a batch of jobs at a time: pull, start, finish, heartbeat.

Stock RQ workers spend about 20 round trips per job. Here a pull moves up to B job ids in one
Lua call; starting them is one Lua call that makes RQ's writes for the whole batch from a
compact list and returns the few fields of each job hash that the worker reads, and finishing
any number of them is one such call too, which claims each job's first result and writes it
(:mod:`worker.rqwrites`; a failure's writes, which are rare, are RQ's own methods' commands,
captured by a :class:`~common.scripted.ScriptedPipeline` and run by that call). Jobs still move
through RQ's own registries (queued -> started ->
finished/failed) and results go to RQ's result streams, so ``rq info`` and the dashboard see
everything. These methods block; the worker's event loop runs them in threads.
"""

from __future__ import annotations

import logging
import re
import socket
import time
import uuid
import zlib
from array import array
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from redis import ConnectionPool, Redis
from redis.client import Pipeline
from rq.executions import Execution
from rq.job import JobStatus
from rq.queue import Queue
from rq.registry import FailedJobRegistry, FinishedJobRegistry, StartedJobRegistry
from rq.utils import now, parse_timeout, utcformat
from rq.worker import BaseWorker, WorkerStatus

from common import keys
from common.codec import SERIALIZER_PATH, WireCodec, inflate_bounded, is_own_format
from common.errors import DecodeError
from common.rqjob import PrefixqJob, PrefixqResult
from common.scripted import ScriptedPipeline
from common.schema import Completion, Request, SharedPrefix
from common.tokens import unpack_ids
from worker import rqwrites

log = logging.getLogger(__name__)

DONE_TTL_S = 7 * 86400  # a submission's done stream, when results are kept forever

# Move up to ARGV[1] job ids from the queue to its intermediate list, atomically.
_PULL_LUA = """
local ids = {}
for i = 1, tonumber(ARGV[1]) do
  local id = redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', 'RIGHT')
  if not id then break end
  ids[#ids + 1] = id
end
return ids
"""

@dataclass
class Started:
    """A job this worker has marked started: its request and full prompt, or why it cannot run."""

    job: PrefixqJob
    execution: Execution
    request: Request | None
    error: str | None = None
    # The text, or the producer's token ids when the engine takes them: a tuple, which the
    # garbage collector stops tracking at its first collection (its items are ints), where a
    # list would be walked by every collection of its generation for as long as the request runs.
    prompt: str | tuple[int, ...] = ""
    started_at: float = field(default_factory=time.time)

    @property
    def request_id(self) -> str:
        """The engine's request id: unique per execution, so a rerun never collides."""
        return f"{self.job.id}:{self.execution.id}"


@dataclass(frozen=True)
class Outcome:
    """A finished execution: a completion or an error message."""

    started: Started
    completion: Completion | None = None
    error: str | None = None


def new_worker_name(shard: str) -> str:
    """A name unique to this process (RQ refuses a live name for minutes after a crash)."""
    return f"{shard}.{socket.gethostname()}.{uuid.uuid4().hex[:8]}"


class ShardQueue(BaseWorker):
    """The RQ side of one shard's worker: registered as an RQ worker on the shard's queue."""

    def __init__(self, connection: Redis, shard: str, codec: WireCodec, *, name: str,
                 result_ttl_s: int, heartbeat_ttl_s: int, blob_cache_entries: int = 4096,
                 takes_ids_of: Callable[[str], bool] = lambda fingerprint: False) -> None:
        """``takes_ids_of(fingerprint)``: whether the engine runs token ids made by that
        tokenizer as they are (the worker checked at start that they are the engine's own)."""
        queue = Queue(keys.queue_name(shard), connection=connection, serializer=codec,
                      job_class=PrefixqJob)
        # RQ records the serializer by import path (for its own tools); use the configured one.
        super().__init__([queue], name=name, connection=connection, serializer=SERIALIZER_PATH,
                         job_class=PrefixqJob, default_result_ttl=result_ttl_s)
        self.serializer = codec
        self.shard, self.codec, self.queue = shard, codec, queue
        self.heartbeat_ttl_s = heartbeat_ttl_s
        self.epoch = 0
        self.blobs = PrefixCache(blob_cache_entries)
        self.takes_ids_of = takes_ids_of
        started = StartedJobRegistry(queue.name, connection=connection, job_class=PrefixqJob,
                                     serializer=codec)
        finished = FinishedJobRegistry(queue.name, connection=connection, job_class=PrefixqJob,
                                       serializer=codec)
        self._keys = rqwrites.WorkerKeys(name, self.key, queue.name, queue.intermediate_queue_key,
                                         started.key, finished.key)
        ttl = self.default_result_ttl if self.default_result_ttl > 0 else 0
        self._counters = rqwrites.Counters(shard, claim_ttl=ttl, done_ttl=ttl or DONE_TTL_S)
        self._start_script, self._finish_script, self._beat_script = rqwrites.register(connection)
        self._pull = connection.register_script(_PULL_LUA)
        # Blocking pulls wait on a connection of their own, named so that wake() can find it
        # (its id changes whenever redis-py reconnects; the name is set again each time).
        pool = connection.connection_pool
        self.pull_client_name = "prefixq-pull:" + re.sub(r"[^\w.:-]", "_", name)
        self._blocking = Redis(connection_pool=ConnectionPool(
            connection_class=pool.connection_class, max_connections=1,
            **{**pool.connection_kwargs, "client_name": self.pull_client_name}))
        self._drained = False  # the last pull emptied the queue: block first next time

    def announce(self) -> None:
        """Register with RQ, start a new epoch (routing forgets what this shard held), put back
        ids a dead predecessor pulled but never started, and mark the shard alive."""
        self.register_birth()
        self.new_epoch()
        num_back = requeue_intermediate(self.connection, self.queue.key, self.queue.intermediate_queue_key)
        if num_back:
            log.warning("worker %s: put %d pulled-but-unstarted job(s) back on %s", self.name,
                        num_back, self.shard)
        self.connection.set(keys.alive_key(self.shard), self.name, ex=self.heartbeat_ttl_s)
        self.connection.delete(keys.down_since_key(self.shard))

    def new_epoch(self) -> int:
        """Start a new epoch of the shard: routing forgets what it predicted the shard holds."""
        self.epoch = int(self.connection.hincrby(keys.EPOCH_KEY, self.shard, 1))
        return self.epoch

    def retire(self) -> None:
        """Unregister from RQ and mark the shard down (after a clean drain)."""
        self.register_death()
        self.connection.delete(keys.alive_key(self.shard))

    def execute_job(self, job: Any, queue: Queue) -> None:
        raise NotImplementedError("prefixq workers run jobs in batches, not through execute_job")

    # -- pull ---------------------------------------------------------------------------------

    def pull(self, max_jobs: int, block_s: float, window_s: float = 0.0) -> list[bytes]:
        """Move up to ``max_jobs`` ids to the intermediate list. On an empty queue, block up to
        ``block_s`` for one (or until :meth:`wake`), then give the rest of a burst ``window_s``
        to arrive. A pull that follows one which emptied the queue blocks at once: asking for
        a batch first would cost a round trip that finds nothing."""
        ids = [] if self._drained and block_s > 0 else self._move(max_jobs)
        if not ids and block_s > 0:
            first = self._blocking.blmove(self.queue.key, self.queue.intermediate_queue_key,
                                          block_s, "LEFT", "RIGHT")
            if first is not None:
                if window_s > 0:
                    time.sleep(window_s)
                ids = [first] + self._move(max_jobs - 1)
        self._drained = len(ids) < max_jobs
        return ids

    @property
    def drained(self) -> bool:
        """Whether the last pull emptied the queue (the next one blocks at once)."""
        return self._drained

    def _move(self, max_jobs: int) -> list[bytes]:
        """Up to ``max_jobs`` ids from the queue to the intermediate list, in one Lua call."""
        return self._pull(keys=[self.queue.key, self.queue.intermediate_queue_key], args=[max_jobs])

    def wake(self) -> int:
        """End a pull blocked on the empty queue now, as if its wait had run out (called from
        another thread, e.g. to stop). Returns how many blocked pulls were woken."""
        woken = 0
        for client in self.connection.client_list():
            if client.get("name") == self.pull_client_name:
                woken += int(self.connection.client_unblock(int(client["id"])))
        return woken

    def give_back(self, job_ids: list[bytes]) -> None:
        """Return pulled but unstarted ids to the front of the queue, in their order."""
        with self.connection.pipeline() as pipe:
            for job_id in reversed(job_ids):
                pipe.lrem(self.queue.intermediate_queue_key, 1, job_id)
                pipe.lpush(self.queue.key, job_id)
            pipe.execute()

    # -- start --------------------------------------------------------------------------------

    def start(self, job_ids: list[bytes]) -> list[Started]:
        """Mark the jobs started and read what the worker needs of them, in one round trip.

        The start script returns five fields of each job hash instead of RQ's nineteen, and the
        job objects are filled in from those, not by RQ's ``Job.restore`` (which parses every
        field and date of the hash): reading, parsing and restoring whole hashes was over a
        third of a worker's CPU per job on the sim engine (benchmark notes, session 25)."""
        stamp = now()
        ids = [job_id.decode() for job_id in job_ids]
        executions = [rqwrites.new_execution_id() for _ in ids]
        replies = self._start_script(args=[rqwrites.start_payload(
            self._keys, list(zip(ids, executions)), self.heartbeat_ttl_s, stamp)])
        started: list[Started] = []
        for job_id, execution_id, reply in zip(ids, executions, replies):
            if not reply:
                continue  # deleted, canceled, or already done (a recovered duplicate)
            data, timeout, result_ttl, failure_ttl, enqueued_at = reply
            job = PrefixqJob(job_id, connection=self.connection, serializer=self.codec)
            # What RQ's restore and Job.prepare_for_execution would set that the worker reads.
            job.origin = self.queue.name  # taken from another shard's queue: it moved here
            job.timeout = parse_timeout(timeout) if timeout else None
            job.result_ttl = int(result_ttl) if result_ttl else None
            job.failure_ttl = int(failure_ttl) if failure_ttl else None
            job.enqueued_at = datetime.fromisoformat(enqueued_at.decode()) if enqueued_at else None
            job.worker_name, job.last_heartbeat, job.started_at = self.name, stamp, stamp
            job._status = JobStatus.STARTED
            execution = Execution(execution_id, job_id, self.connection, self.name)
            execution.created_at = execution.last_heartbeat = stamp
            execution._job = job
            request, error = self._decode(job, data or b"")
            started.append(Started(job, execution, request, error))
        self._state = WorkerStatus.BUSY
        self._attach_prompts(started)
        return started

    def _attach_prompts(self, started: list[Started]) -> None:
        """Join each request's shared prefix (from the local cache, else one pipelined read):
        as token ids where the producer's tokenizer is one the engine takes, else as text."""
        wanted = {s.request.prefix_id for s in started
                  if s.request is not None and s.request.prefix_id} - self.blobs.keys()
        if wanted:
            order = sorted(wanted)
            with self.connection.pipeline(transaction=False) as pipe:
                for blob_id in order:
                    pipe.get(keys.blob_key(blob_id))
                for blob_id, raw in zip(order, pipe.execute()):
                    if raw is not None:
                        try:
                            self.blobs.put(blob_id, self._load_prefix(raw))
                        except (DecodeError, UnicodeDecodeError):
                            continue  # its jobs fail below, naming the prefix
        for s in started:
            if s.request is None or s.error is not None:
                continue
            request = s.request
            head = self.blobs.get(request.prefix_id) if request.prefix_id else _NO_PREFIX
            if head is None:
                s.error = f"shared prefix {request.prefix_id} is missing or corrupt in Redis (expired?)"
            elif request.tokenizer and self.takes_ids_of(request.tokenizer) and \
                    (head is _NO_PREFIX or head.tokenizer == request.tokenizer):
                try:
                    s.prompt = tuple(head.token_ids) + tuple(unpack_ids(request.token_ids))
                except DecodeError as e:
                    s.error = f"refused: {e}"
            else:
                s.prompt = head.text + request.prompt

    def _load_prefix(self, raw: bytes) -> CachedPrefix:
        if not is_own_format(raw):  # written by a producer that shipped text only
            return CachedPrefix(inflate_bounded(raw, self.codec.max_decoded_bytes).decode())
        prefix = SharedPrefix.from_wire(self.codec.loads(raw))
        if prefix.tokenizer and self.takes_ids_of(prefix.tokenizer):
            return CachedPrefix(prefix.text, unpack_ids(prefix.token_ids), prefix.tokenizer)
        return CachedPrefix(prefix.text)
    @staticmethod
    def _decode(job: PrefixqJob, data: bytes) -> tuple[Request | None, str | None]:
        """Decode a job's data into its request; a foreign or corrupt job gets an error instead."""
        if not is_own_format(data):
            # Never handed to RQ: its restore would inflate and unpickle foreign data.
            return None, "refused: job data is not prefixq's wire format (no pickle accepted)"
        try:
            func_name, instance, args, kwargs = job.serializer.loads(data)
            if func_name != keys.JOB_FUNC:
                return None, f"refused: job function {func_name!r} is not {keys.JOB_FUNC!r}"
            request = Request.from_wire(args[0])
        except (DecodeError, IndexError, KeyError, TypeError, ValueError) as e:
            return None, f"refused: undecodable job: {e}"
        job._data, job._func_name, job._instance, job._args, job._kwargs = data, func_name, instance, args, kwargs
        return request, None

    # -- finish -------------------------------------------------------------------------------

    def finish(self, outcomes: list[Outcome]) -> None:
        """Store results (the first execution of a job wins; a duplicate run's is dropped), move
        jobs to finished/failed, free executions and add the batch to the counters: one atomic
        Lua call for the whole batch (:data:`worker.rqwrites.FINISH_LUA`). A failure's writes
        are RQ's own, made here and run by the script only if the execution claims the job."""
        succeeded = [o for o in outcomes if o.completion is not None]
        failures = [o for o in outcomes if o.completion is None]
        claims = self._finish_script(args=[rqwrites.finish_payload(
            self._keys, self._counters, [self._finished_ok(o) for o in succeeded],
            [self._failed(o, o.error or "unknown error") for o in failures], now())])
        for outcome, claimed in zip(succeeded + failures, claims):  # the script's order
            if not claimed:
                log.warning("worker %s: job %s already has a result; dropped this duplicate run",
                            self.name, outcome.started.job.id)

    def _finished_ok(self, outcome: Outcome) -> rqwrites.Finished:
        """A success as the finish script writes it: status and end time (only the fields that
        change: RQ's _handle_success would rewrite the whole hash), RQ's result, the finished
        registry, the job's expiry (prefixq jobs have no dependents), the execution freed."""
        job, execution, request = outcome.started.job, outcome.started.execution, outcome.started.request
        completion = outcome.completion
        assert completion is not None
        ttl = job.result_ttl if job.result_ttl is not None else self.default_result_ttl
        return rqwrites.Finished(job.id, execution.id, execution.created_at,
                                 self.codec.dumps(completion.to_wire()), ttl, self._done_key(outcome),
                                 request.load_tokens if request is not None else 0,
                                 completion.prompt_tokens, completion.cached_tokens)

    def _failed(self, outcome: Outcome, error: str) -> rqwrites.Failed:
        """A failure as the finish script runs it: RQ's writes (status, failed registry, failure
        result, the execution freed) and the done mark, captured, not sent."""
        job, request = outcome.started.job, outcome.started.request
        done = self._done_key(outcome)
        with ScriptedPipeline(self.connection) as pipe:
            self._finish_failed(outcome, error, pipe)
            if done:
                pipe.xadd(done, {"job": job.id, "ok": 0})
            commands = pipe.take_packed()
        return rqwrites.Failed(job.id, outcome.started.execution.id, commands,
                               request.load_tokens if request is not None else 0, done)

    def _finish_failed(self, outcome: Outcome, error: str, pipe: Pipeline) -> None:
        job, execution = outcome.started.job, outcome.started.execution
        ttl = job.failure_ttl if job.failure_ttl is not None else self.default_result_ttl
        store_failure(pipe, job, job.origin or self.queue.name, error, ttl, self.name, execution)
        execution.delete(job=job, pipeline=pipe)

    @staticmethod
    def _done_key(outcome: Outcome) -> str:
        """The done stream of the outcome's submission, told of each job's end ("" if none)."""
        request = outcome.started.request
        submission = request.submission_id if request else submission_of(outcome.started.job.id)
        return keys.submission_done_key(submission) if submission is not None else ""

    # -- liveness -----------------------------------------------------------------------------

    def beat(self, running: list[Started]) -> None:
        """Heartbeat the worker and every execution it holds, in one transaction: the worker
        through RQ's methods, the executions by a Lua script that writes what RQ's
        ``Execution.heartbeat`` and ``Job.heartbeat`` write (with 128 jobs running, building
        those commands through RQ's objects every beat took a fifth of py-spy's samples of a
        worker in a burst; its front-end CPU per burst did not measurably fall, session 22)."""
        stamp = now()
        with ScriptedPipeline(self.connection) as pipe:
            self.heartbeat(self.heartbeat_ttl_s + 60, pipeline=pipe)
            pipe.set(keys.alive_key(self.shard), self.name, ex=self.heartbeat_ttl_s)
            if not running:
                self.set_state(WorkerStatus.IDLE, pipeline=pipe)
                pipe.execute()
                return
            for s in running:  # what RQ's heartbeats set on the objects
                s.execution.last_heartbeat = s.job.last_heartbeat = stamp
            pipe.execute_after(self._beat_script, rqwrites.beat_payload(
                self._keys, [(s.job.id, s.execution.id) for s in running], self.heartbeat_ttl_s, stamp))


@dataclass(frozen=True)
class CachedPrefix:
    """A shared prefix as a worker keeps it: its text, and its token ids if the engine takes them."""

    text: str
    token_ids: array[int] = field(default_factory=lambda: array("I"))
    tokenizer: str = ""  # whose ids ``token_ids`` are ("" when there are none)


_NO_PREFIX = CachedPrefix("")


class PrefixCache:
    """Shared prefixes this worker has seen, least recently used dropped first."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._items: OrderedDict[str, CachedPrefix] = OrderedDict()

    def keys(self) -> set[str]:
        return set(self._items)

    def get(self, blob_id: str) -> CachedPrefix | None:
        prefix = self._items.get(blob_id)
        if prefix is not None:
            self._items.move_to_end(blob_id)
        return prefix

    def put(self, blob_id: str, prefix: CachedPrefix) -> None:
        self._items[blob_id] = prefix
        self._items.move_to_end(blob_id)
        while len(self._items) > self.max_entries:
            self._items.popitem(last=False)


def store_failure(pipe: Pipeline, job: PrefixqJob, origin: str, reason: str, ttl: int,
                  worker_name: str, execution: Execution | None = None) -> None:
    """Mark a job failed with ``reason``: status, failed registry, RQ failure result.

    Written field by field: RQ's own path (``FailedJobRegistry.add``) rewrites the whole job
    hash from memory, which needs the job's decoded data (a refused job has none) and would
    write the job's data back again.
    """
    ended = now()
    pipe.hset(job.key, mapping={"status": JobStatus.FAILED.value, "ended_at": utcformat(ended),
                                "exc_info": zlib.compress(reason.encode())})
    expires_at: float | str = "+inf" if ttl < 0 else time.time() + ttl
    pipe.zadd(FailedJobRegistry(origin, connection=job.connection).key, {job.id: expires_at})
    if ttl > 0:
        pipe.expire(job.key, ttl)
    PrefixqResult.create_failure(job, ttl, exc_string=reason, worker_name=worker_name, pipeline=pipe,
                                 execution_id=execution.id if execution else None,
                                 execution_started_at=execution.created_at if execution else None,
                                 execution_ended_at=ended)


def requeue_intermediate(connection: Redis, queue_key: str, intermediate_key: str) -> int:
    """Move every id in a queue's intermediate list back to the queue's front, in order."""
    moved = 0
    while connection.lmove(intermediate_key, queue_key, "RIGHT", "LEFT") is not None:
        moved += 1
    return moved


def submission_of(job_id: str) -> str | None:
    """The submission a job belongs to (job ids are ``<submission>-<index>``)."""
    submission, sep, index = job_id.rpartition("-")
    return submission if sep and index.isdigit() and keys.is_valid_id(submission) else None

