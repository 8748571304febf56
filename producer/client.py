"""The application API: submit requests, follow them, read their results.

>>> client = Client()                                     # settings from PREFIXQ_* variables
>>> handle = client.submit("What is the capital of France?", max_tokens=16)
>>> handle.result(timeout=120).completion.text
>>> sub = client.submit_document(document, ["Who?", "When?"])
>>> for r in sub.wait(timeout=600): print(r.tag, r.completion.text)
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rq.job import Job, JobStatus
from rq.queue import Queue
from rq.results import Result

from common import keys
from common.codec import WireCodec
from common.config import Settings
from common.errors import InputError, JobTimeoutError, PromptTooLongError
from common.model import block_hash_seed, resolve_model
from common.prompts import load_tokenizer
from common.rqjob import PrefixqJob
from common.schema import Request, SharedPrefix
from common.scripted import ScriptedPipeline
from common.tokens import pack_ids
from producer.enqueue import ENQUEUE_LUA, NewJob, payloads
from producer.items import Item
from producer.prepare import Prepared, prepare
from producer.results import JobResult, fetch_results
from producer.router import Policy, Route, Router, RoutingConfig, parse_routes

WAIT_BLOCK_MS = 5000  # a waiting producer's longest block on the done stream (each wake costs CPU)

ProgressCallback = Callable[[int, int, int], None]  # (done, failed, total)


class Client:
    """Submits requests to the per-shard RQ queues and reads their results back."""

    def __init__(self, settings: Settings | None = None, *, connection: Redis | None = None) -> None:
        self.settings = settings or Settings.from_env()
        self.redis = connection or Redis.from_url(self.settings.redis_url)
        self.codec = WireCodec(self.settings.max_decoded_bytes)
        self._queues = {
            shard: Queue(keys.queue_name(shard), connection=self.redis, serializer=self.codec,
                         job_class=PrefixqJob)
            for shard in self.settings.shards
        }
        s = self.settings
        self._router = Router(self.redis, s.shards, s.block_size, RoutingConfig(
            min_match_blocks=s.min_match_blocks, min_match_fraction=s.min_match_fraction,
            guard_abs_tokens=s.guard_abs_tokens, guard_rel=s.guard_rel,
            affinity_ttl_s=s.affinity_ttl_s, predicted_ttl_s=s.predicted_ttl_s))
        self._enqueue_script = self.redis.register_script(ENQUEUE_LUA)

    @property
    def model_path(self) -> str:
        """The model whose chat template renders prompts (the same files the workers load)."""
        return resolve_model(self.settings.model, self.settings.model_cache)

    def submit(self, prompt: str | None = None, *, messages: Any = None, tag: str = "",
               submission_id: str | None = None, **sampling: Any) -> JobHandle:
        """Submit one plain prompt or one list of chat messages; return its handle."""
        if (prompt is None) == (messages is None):
            raise InputError("submit: give exactly one of prompt or messages")
        item = Item.prompt(prompt, tag=tag, **sampling) if prompt is not None else \
            Item.chat(messages, tag=tag, **sampling)
        return self.submit_many([item], submission_id=submission_id).handles[0]

    def submit_document(self, document: str, questions: Iterable[str], *, doc_id: str = "doc",
                        submission_id: str | None = None, **sampling: Any) -> Submission:
        """Submit every question about ``document``; tags are ``<doc_id>/<question index>``."""
        items = [Item.document_question(document, q, tag=f"{doc_id}/{i}", **sampling)
                 for i, q in enumerate(questions)]
        return self.submit_many(items, submission_id=submission_id)

    def submit_many(self, items: Iterable[Item], *, submission_id: str | None = None,
                    policy: Policy | str | None = None) -> Submission:
        """Render, route and enqueue ``items`` as one submission (two Redis round trips).

        ``policy`` is ``affinity`` (default), ``round-robin`` or ``random``.
        """
        items = list(items)
        if not items:
            raise InputError("submit: nothing to submit")
        submission_id = submission_id or uuid.uuid4().hex
        if not keys.is_valid_id(submission_id):
            raise InputError(f"submission id {submission_id!r}: use letters, digits, _ and - only")
        if self.redis.exists(keys.submission_key(submission_id)):
            return Submission.load(self, submission_id)
        policy = Policy(policy or self.settings.policy)
        tokenizer = load_tokenizer(self.model_path)
        prepared = prepare(tokenizer, items, self.settings.block_size, block_hash_seed(self.settings.model))
        tags = [item.tag or str(i) for i, item in enumerate(items)]
        too_long = {tag: p.prompt_tokens for tag, p in zip(tags, prepared)
                    if p.prompt_tokens >= self.settings.max_model_len}
        if too_long:  # checked before anything is routed or enqueued
            raise PromptTooLongError(too_long, self.settings.max_model_len)
        routes, missing_heads = self._route(prepared, policy)
        job_ids = [keys.job_id(submission_id, i) for i in range(len(items))]
        by_shard: dict[str, list[NewJob]] = {shard: [] for shard in self._queues}
        # The producer's token ids travel with the text, so workers need not tokenize again
        # (each worker checks at start that the ids are the ones its engine would make).
        fingerprint = tokenizer.fingerprint
        for i, (p, route) in enumerate(zip(prepared, routes)):
            ships_ids = bool(fingerprint) and p.splits_cleanly
            request = Request(prompt=p.rest, sampling=self._sampling(p.item.sampling),
                              submission_id=submission_id, index=i, tag=tags[i],
                              prefix_id=p.head_id, load_tokens=route.load_tokens,
                              token_ids=pack_ids(p.rest_ids) if ships_ids else b"",
                              tokenizer=fingerprint if ships_ids else "")
            by_shard[route.shard].append(NewJob(job_ids[i], request.to_wire(), f"{tags[i]} ({route.shard})"))
        blobs = {head_id: self.codec.dumps(SharedPrefix(
            p.head, pack_ids(p.head_ids) if fingerprint else b"", fingerprint).to_wire())
            for head_id, p in missing_heads.items()}
        enqueued_at = self._enqueue(submission_id, job_ids, tags, by_shard, blobs)
        return Submission(self, submission_id, job_ids, tags, enqueued_at=enqueued_at)

    def _route(self, prepared: list[Prepared], policy: Policy) -> tuple[list[Route], dict[str, Prepared]]:
        """Route every request (in order, many to an atomic script call, pipelined) and find
        which shared heads Redis does not hold yet."""
        heads = {p.head_id: p for p in prepared if p.head}
        with self.redis.pipeline(transaction=False) as pipe:
            for head_id in heads:
                pipe.exists(keys.blob_key(head_id))
            self._router.route(pipe, [(p.hashes, p.prompt_tokens) for p in prepared], policy)
            replies = pipe.execute()
        missing = {head_id: heads[head_id] for head_id, found in zip(heads, replies) if not found}
        return parse_routes(replies[len(heads):]), missing

    def _sampling(self, overrides: dict[str, Any]) -> dict[str, Any]:
        return {"max_tokens": self.settings.max_tokens, **overrides}

    def _enqueue(self, submission_id: str, job_ids: list[str], tags: list[str],
                 by_shard: dict[str, list[NewJob]], blobs: dict[str, bytes]) -> float:
        """Enqueue the submission atomically; return when it was sent (``time.time()``).

        The jobs go as :mod:`producer.enqueue`'s script calls (what RQ's ``enqueue_many``
        writes) and the submission's own keys as a :class:`ScriptedPipeline`, all in one Lua
        call, or one transaction of a few for a large submission: redis-py packing a MULTI/EXEC
        of a dozen commands per job and parsing every reply, and RQ building a ``Job`` per job,
        were over half of the producer's CPU for small jobs (session 24's profile)."""
        ttl = self.settings.result_ttl_s
        with ScriptedPipeline(self.redis) as pipe:
            for head_id, blob in blobs.items():
                pipe.set(keys.blob_key(head_id), blob, ex=self.settings.blob_ttl_s, nx=True)
            meta_key = keys.submission_key(submission_id)
            pipe.hset(meta_key, mapping={"num_jobs": len(job_ids), "model": self.settings.model,
                                         "created_at_ms": int(time.time() * 1000)})
            pipe.rpush(keys.submission_jobs_key(submission_id), *job_ids)
            pipe.rpush(keys.submission_tags_key(submission_id), *tags)
            if ttl > 0:
                for key in (meta_key, keys.submission_jobs_key(submission_id),
                            keys.submission_tags_key(submission_id)):
                    pipe.expire(key, ttl)
            calls = payloads(self._queues, by_shard, keys.JOB_FUNC, timeout=self.settings.job_timeout_s,
                             result_ttl=ttl, failure_ttl=ttl)
            sent_at = time.time()
            pipe.execute_after(self._enqueue_script, *calls)
        return sent_at

    def submission(self, submission_id: str) -> Submission:
        """A submission made earlier (by any producer), looked up in Redis."""
        return Submission.load(self, submission_id)


class JobHandle:
    """One submitted job: its status and its result."""

    def __init__(self, client: Client, job_id: str, tag: str) -> None:
        self.client, self.id, self.tag = client, job_id, tag

    def status(self) -> JobStatus | None:
        """RQ's status of the job (queued, started, finished, failed, ...), or None if it is gone."""
        raw = self.client.redis.hget(Job.key_for(self.id), "status")
        return JobStatus(raw.decode()) if raw else None

    def result(self, timeout: float | None = None) -> JobResult:
        """Wait up to ``timeout`` seconds (forever if None) for the job's result."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            found = fetch_results(self.client.redis, [self.id], [self.tag], self.client.codec)[0]
            if found is not None:
                return found
            block_ms = 1000 if deadline is None else int(max(0.0, deadline - time.monotonic()) * 1000)
            if deadline is not None and block_ms <= 0:
                raise JobTimeoutError(f"job {self.id}: no result within {timeout} s")
            self.client.redis.xread({Result.get_key(self.id): "0-0"}, block=max(block_ms, 1))


class Submission:
    """The jobs of one ``submit_many`` call, in input order.

    ``enqueued_at`` is when this producer sent the enqueue transaction (``time.time()``), after
    rendering, tokenizing and routing; None for a submission read back from Redis.
    """

    def __init__(self, client: Client, submission_id: str, job_ids: list[str], tags: list[str],
                 *, enqueued_at: float | None = None) -> None:
        self.client, self.id, self.job_ids, self.tags = client, submission_id, job_ids, tags
        self.enqueued_at = enqueued_at

    @classmethod
    def load(cls, client: Client, submission_id: str) -> Submission:
        """Read a submission's job ids and tags back from Redis."""
        job_ids = [j.decode() for j in client.redis.lrange(keys.submission_jobs_key(submission_id), 0, -1)]
        if not job_ids:
            raise InputError(f"no submission {submission_id!r} in Redis (expired or never made)")
        tags = [t.decode() for t in client.redis.lrange(keys.submission_tags_key(submission_id), 0, -1)]
        return cls(client, submission_id, job_ids, tags)

    @property
    def handles(self) -> list[JobHandle]:
        return [JobHandle(self.client, job_id, tag) for job_id, tag in zip(self.job_ids, self.tags)]

    def results(self) -> list[JobResult | None]:
        """The results stored so far (``None`` for unfinished jobs), in input order."""
        return fetch_results(self.client.redis, self.job_ids, self.tags, self.client.codec)

    def wait(self, timeout: float | None = None, progress: ProgressCallback | None = None,
             ) -> list[JobResult]:
        """Block until every job has a result (or ``timeout`` seconds pass); results in input order."""
        deadline = None if timeout is None else time.monotonic() + timeout
        done_key = keys.submission_done_key(self.id)
        total, failed, last_id = len(self.job_ids), 0, "0-0"
        seen: set[str] = set()
        while len(seen) < total:
            remaining_ms = WAIT_BLOCK_MS if deadline is None else int((deadline - time.monotonic()) * 1000)
            if remaining_ms <= 0:
                raise JobTimeoutError(f"submission {self.id}: {len(seen)}/{total} done after {timeout} s")
            try:
                reply = self.client.redis.xread({done_key: last_id}, block=min(remaining_ms, WAIT_BLOCK_MS))
            except (RedisConnectionError, RedisTimeoutError):  # Redis restarting: keep waiting
                time.sleep(1.0)
                continue
            for _stream, entries in reply or []:
                for entry_id, fields in entries:
                    last_id = entry_id.decode()
                    job = fields[b"job"].decode()
                    if job not in seen:
                        seen.add(job)
                        failed += fields.get(b"ok") == b"0"
            if progress is not None:
                progress(len(seen), failed, total)
        results = self.results()
        missing = [job_id for job_id, r in zip(self.job_ids, results) if r is None]
        if missing:  # a result expired, or was written before its done mark (should not happen)
            raise JobTimeoutError(f"submission {self.id}: no stored result for {', '.join(missing[:5])}")
        return [r for r in results if r is not None]
