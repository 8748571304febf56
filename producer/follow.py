"""Following a submission: each result as soon as its job finishes, in completion order."""

from __future__ import annotations

import time
from collections.abc import Iterator

from common import keys
from common.errors import JobTimeoutError, PrefixqError
from producer.client import Submission
from producer.results import JobResult, fetch_results


def follow(submission: Submission, timeout: float | None = None) -> Iterator[JobResult]:
    """Yield every job's result once, those already finished first, then the rest as they finish.

    Reads the submission's "done" stream (workers add to it as they store each result), so it
    waits without polling. Raises :class:`JobTimeoutError` if ``timeout`` seconds pass first.
    """
    redis = submission.client.redis
    tags = dict(zip(submission.job_ids, submission.tags))
    deadline = None if timeout is None else time.monotonic() + timeout
    seen: set[str] = set()
    last_id = "0-0"
    while len(seen) < len(tags):
        block_ms = 1000 if deadline is None else int((deadline - time.monotonic()) * 1000)
        if block_ms <= 0:
            raise JobTimeoutError(f"submission {submission.id}: {len(seen)}/{len(tags)} done after {timeout} s")
        reply = redis.xread({keys.submission_done_key(submission.id): last_id}, block=min(block_ms, 1000))
        new: list[str] = []
        for _stream, entries in reply or []:
            for entry_id, fields in entries:
                last_id = entry_id.decode()
                job_id = fields[b"job"].decode()
                if job_id in tags and job_id not in seen:
                    seen.add(job_id)
                    new.append(job_id)
        if not new:
            continue
        results = fetch_results(redis, new, [tags[j] for j in new], submission.client.codec)
        for job_id, result in zip(new, results):
            if result is None:  # expired between its done mark and now
                raise PrefixqError(f"submission {submission.id}: the result of {job_id} is gone (expired?)")
            yield result
