"""RQ's Job with prefixq's wire format: job data stored as the codec made it.

Stock RQ zlib-compresses job data again (at the default level) on top of the serializer. The
codec already compresses at level 1, so this class stores its bytes as they are. Readers with
stock RQ (``rq info``, the dashboard) still work: RQ's inflate attempt fails on the header and
falls back to the raw bytes, which the codec then decodes.
"""

from __future__ import annotations

import functools
from typing import Any

from redis import Redis
from rq.job import Job
from rq.registry import StartedJobRegistry
from rq.serializers import Serializer

from common import keys


class PrefixqJob(Job):
    """An RQ job whose ``data`` field holds the codec's bytes unchanged."""

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
