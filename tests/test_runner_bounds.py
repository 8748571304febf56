"""The worker's bound on the jobs it holds: ``max_inflight`` counts every job started and not yet
stored, not only those in the engine. With the sim engine (a SIMULATOR: requests take no time)
and slow result writes, a bound on the engine alone would let the worker start jobs without end."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from redis import Redis

from common.codec import WireCodec
from common.config import Settings
from producer.client import Client
from producer.items import Item
from worker.engines import SimEngine
from worker.rqbatch import Outcome, ShardQueue, Started
from worker.runner import WorkerRunner


class SlowWrites(ShardQueue):
    """Real RQ bookkeeping, but each batch of results takes 50 ms more to store; counts the
    jobs started and not yet stored."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.held = self.most_held = 0
        self._lock = threading.Lock()

    def start(self, job_ids: list[bytes]) -> list[Started]:
        started = super().start(job_ids)
        with self._lock:
            self.held += len(started)
            self.most_held = max(self.most_held, self.held)
        return started

    def finish(self, outcomes: list[Outcome]) -> None:
        time.sleep(0.05)
        super().finish(outcomes)
        with self._lock:
            self.held -= len(outcomes)


def test_max_inflight_bounds_jobs_started_but_not_yet_stored(scratch_url: str, model_path: str) -> None:
    settings = Settings.from_env({}, redis_url=scratch_url, shards=("gpu0",), engine="sim", max_batch=4,
                                 max_inflight=8, batch_wait_ms=0, kv_events=False)
    client = Client(settings)
    submission = client.submit_many([Item.prompt(f"Question {i}?", tag=str(i), max_tokens=2) for i in range(60)])
    rq = SlowWrites(Redis.from_url(scratch_url), "gpu0", WireCodec(), name="gpu0.bounds-test",
                    result_ttl_s=settings.result_ttl_s, heartbeat_ttl_s=settings.lease_s)
    runner = WorkerRunner(settings, SimEngine(settings), rq, model="(sim)")

    assert asyncio.run(runner.run(burst=True)) == 0

    results = submission.wait(timeout=60)
    assert [r.tag for r in results] == [str(i) for i in range(60)] and all(r.is_ok for r in results)
    assert rq.held == 0
    # Writes were the bottleneck, so the worker did reach its bound, and never went past it.
    assert rq.most_held == 8
