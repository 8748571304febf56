"""RQ's Job with prefixq's wire format: job data stored as the codec made it.

Stock RQ zlib-compresses job data again (at the default level) on top of the serializer. The
codec already compresses at level 1, so this class stores its bytes as they are. Readers with
stock RQ (``rq info``, the dashboard) still work: RQ's inflate attempt fails on the header and
falls back to the raw bytes, which the codec then decodes.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

from redis import Redis
from rq.job import Job
from rq.registry import StartedJobRegistry
from rq.results import Result
from rq.serializers import Serializer, resolve_serializer

from common import keys
from common.codec import WireCodec

# The timestamps RQ's restore parses: attribute name -> hash field (RQ writes them as
# ``%Y-%m-%dT%H:%M:%S.%fZ``, UTC; a missing created_at is "now", the others None, as in RQ).
_STAMPS = {name: name.encode() for name in ("created_at", "enqueued_at", "started_at", "ended_at",
                                            "last_heartbeat")}
_STAMP_FIELDS = frozenset(_STAMPS.values())


def _resolved(serializer: Any) -> Serializer:
    """The serializer RQ would resolve, without its protocol check for prefixq's own codec.

    RQ checks every serializer it is given with ``isinstance`` against a ``typing.Protocol``,
    which walks the protocol's attributes each time (about 5 µs here). It runs for every job and
    result object made, i.e. several times per job; a ``WireCodec`` needs no such check.
    """
    return serializer if isinstance(serializer, WireCodec) else resolve_serializer(serializer)


class PrefixqJob(Job):
    """An RQ job whose ``data`` field holds the codec's bytes unchanged."""

    def __init__(self, id: str | None = None, connection: Redis | None = None, serializer: Any = None) -> None:
        super().__init__(id, connection)  # no serializer: RQ's quick default, replaced below
        self.serializer = _resolved(serializer)

    def restore(self, raw_data: dict[bytes, bytes]) -> Any:
        """RQ's restore, with the job's timestamps read by ``datetime.fromisoformat`` (a worker
        restores every job it starts; RQ's ``strptime`` took about 8 µs per timestamp here)."""
        stamps = {name: raw_data[field] for name, field in _STAMPS.items() if raw_data.get(field)}
        if stamps:
            raw_data = {k: v for k, v in raw_data.items() if k not in _STAMP_FIELDS}
        restored = super().restore(raw_data)
        for name, value in stamps.items():
            setattr(self, name, datetime.fromisoformat(value.decode()))
        return restored

    def to_dict(self, include_meta: bool = True, include_result: bool = True) -> dict[str, Any]:
        data = self.data  # the codec's bytes (made here on first use)
        # RQ's to_dict compresses the data again; it is given nothing to compress, since its
        # result would be thrown away (at the default level, that was most of an enqueue's zlib time).
        self._data = b""
        try:
            obj: dict[str, Any] = super().to_dict(include_meta=include_meta, include_result=include_result)
        finally:
            self._data = data
        obj["data"] = data
        return obj

    @property
    def started_job_registry(self) -> StartedJobRegistry:
        """RQ builds a new registry object on every access (resolving the serializer through a
        slow protocol check each time); a worker asks several times per job, so they are shared."""
        return _started_registry(self.origin, self.connection, self.serializer)

    def requeue(self, at_front: bool = False) -> Job:
        """Requeue a failed job as a fresh try: its first-result claim and attempts are cleared."""
        self.connection.delete(keys.claim_key(self.id))
        self.connection.hdel(self.key, keys.ATTEMPTS_FIELD)
        return super().requeue(at_front=at_front)


@functools.lru_cache(maxsize=64)
def _started_registry(origin: str, connection: Redis, serializer: Serializer) -> StartedJobRegistry:
    return StartedJobRegistry(origin, connection=connection, job_class=PrefixqJob, serializer=serializer)


class PrefixqResult(Result):
    """RQ's Result, its serializer taken as :class:`PrefixqJob` takes it. Build results with
    ``PrefixqResult.create(job, ...)`` (RQ's classmethods make instances of this class)."""

    def __init__(self, job_id: str, type: Result.Type, connection: Redis, *, serializer: Any = None,
                 **fields: Any) -> None:
        super().__init__(job_id, type, connection, **fields)
        self.serializer = _resolved(serializer)
