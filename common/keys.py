"""Every Redis key and queue name prefixq uses, in one place.

RQ owns its own keys (``rq:queue:<name>``, ``rq:job:<id>``, ``rq:results:<id>``, ...); the
names here are prefixq's additions beside them.
"""

from __future__ import annotations

import re

PREFIX = "prefixq"

# The function name stored in every prefixq job. Workers run this job kind only and never
# import anything named by a job.
JOB_FUNC = "prefixq.generate"

_SHARD_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_ID_RE = re.compile(r"[A-Za-z0-9_-]{1,128}")


def is_valid_shard(name: str) -> bool:
    """Whether ``name`` can name a shard (and so an RQ queue)."""
    return bool(_SHARD_RE.fullmatch(name))


def is_valid_id(value: str) -> bool:
    """Whether ``value`` is usable as a submission id (RQ job ids are built from it)."""
    return bool(_ID_RE.fullmatch(value))


def queue_name(shard: str) -> str:
    """The RQ queue that feeds ``shard``: one queue per shard, named as the shard."""
    return shard


def job_id(submission_id: str, index: int) -> str:
    """The RQ job id of request ``index`` of a submission (stable, so resubmission is idempotent)."""
    return f"{submission_id}-{index}"


def submission_key(submission_id: str) -> str:
    """Hash: a submission's metadata (number of jobs, creation time, shards)."""
    return f"{PREFIX}:submission:{submission_id}"


def submission_jobs_key(submission_id: str) -> str:
    """List: a submission's job ids in input order."""
    return f"{PREFIX}:submission:{submission_id}:jobs"


def submission_done_key(submission_id: str) -> str:
    """List: job ids of a submission as they finish (success or failure), for waiters."""
    return f"{PREFIX}:submission:{submission_id}:done"


def submission_tags_key(submission_id: str) -> str:
    """List: the callers' tags of a submission's jobs, in input order."""
    return f"{PREFIX}:submission:{submission_id}:tags"


# -- prefix-affinity routing state (shared by every producer and worker) ----------------------

LOAD_KEY = f"{PREFIX}:load"  # hash: shard -> outstanding uncached prompt tokens (queued or running)
EPOCH_KEY = f"{PREFIX}:epoch"  # hash: shard -> epoch, bumped by each worker start
ROUND_ROBIN_KEY = f"{PREFIX}:rr"  # counter for the round-robin policy


# Strings: which shard (and epoch) was last sent the prefix ending in a block. A key is this
# prefix followed by the block hash's 8 raw bytes; the routing script builds it.
AFFINITY_PREFIX = f"{PREFIX}:aff:"


# -- what each shard's KV cache holds, confirmed by vLLM's KV-cache events ----------------------


def kv_confirmed_key(shard: str) -> str:
    """Set: the block keys (8 raw bytes) ``shard``'s engine reported stored and not yet evicted."""
    return f"{PREFIX}:kv:{shard}"


def kv_live_key(shard: str) -> str:
    """String (the worker's epoch) with a short expiry: ``shard``'s events are arriving."""
    return f"{PREFIX}:kv-live:{shard}"


def kv_events_key(shard: str) -> str:
    """String (the worker's epoch): ``shard``'s worker runs with KV-cache events on."""
    return f"{PREFIX}:kv-events:{shard}"


def shard_stats_key(shard: str) -> str:
    """Hash: a shard's counters (jobs, prompt_tokens, cached_tokens) for hit rates."""
    return f"{PREFIX}:stats:{shard}"


def blob_key(blob_id: str) -> str:
    """String: a shared prompt prefix (a document), stored once, zlib level 1."""
    return f"{PREFIX}:blob:{blob_id}"


# -- reliability ----------------------------------------------------------------------------------

ATTEMPTS_FIELD = "prefixq_attempts"  # field of an RQ job hash: executions started so far


def claim_key(job_id: str) -> str:
    """String: the execution whose result was stored (first writer wins; duplicates are dropped)."""
    return f"{PREFIX}:claim:{job_id}"


def alive_key(shard: str) -> str:
    """String with a short expiry: a live worker serves this shard (refreshed by its heartbeat)."""
    return f"{PREFIX}:alive:{shard}"


def reap_lock_key(entry: str) -> str:
    """String: one reaper at a time recovers this abandoned execution (``job_id:execution_id``)."""
    return f"{PREFIX}:reaping:{entry}"


def reply_key(token: str) -> str:
    """List: a worker's replies to one command (``prefixq reset-cache``); expires unread."""
    return f"{PREFIX}:reply:{token}"


def is_reply_key(key: str) -> bool:
    """Whether a command's ``reply_to`` names a reply list (workers write nowhere else)."""
    head = f"{PREFIX}:reply:"
    return key.startswith(head) and is_valid_id(key[len(head):])


def down_since_key(shard: str) -> str:
    """String: when a reaper first saw ``shard`` with no live worker (cleared when one starts)."""
    return f"{PREFIX}:down-since:{shard}"
