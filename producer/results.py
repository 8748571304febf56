"""Reading what workers stored: RQ result streams, decoded with the wire codec."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from redis import Redis
from rq.results import Result

from common.codec import WireCodec
from common.schema import Completion


@dataclass(frozen=True)
class JobResult:
    """The outcome of one job: a completion, or the worker's reason for failing it."""

    job_id: str
    tag: str
    completion: Completion | None
    error: str | None = None

    @property
    def is_ok(self) -> bool:
        return self.completion is not None


def fetch_results(redis: Redis, job_ids: list[str], tags: list[str], codec: WireCodec,
                  ) -> list[JobResult | None]:
    """The latest stored result of each job (``None`` where there is none yet), in one round trip."""
    with redis.pipeline(transaction=False) as pipe:
        for job_id in job_ids:
            pipe.xrevrange(Result.get_key(job_id), "+", "-", count=1)
        replies = pipe.execute()
    return [_decode(redis, job_id, tag, reply, codec) for job_id, tag, reply in zip(job_ids, tags, replies)]


def _decode(redis: Redis, job_id: str, tag: str, reply: list[Any], codec: WireCodec) -> JobResult | None:
    if not reply:
        return None
    entry_id, payload = reply[0]
    result = Result.restore(job_id, entry_id.decode(), payload, connection=redis, serializer=codec)
    if result.type == Result.Type.SUCCESSFUL:
        return JobResult(job_id, tag, Completion.from_wire(result.return_value))
    return JobResult(job_id, tag, None, error=_last_line(result.exc_string or result.type.name))


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else text
