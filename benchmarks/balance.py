"""Engines of unequal speed: how long a burst takes with and without taking work from busier shards.

    python -m benchmarks.balance [--burst reuse-256] [--documents N] [--rounds 3] [--slowdown 1.25] [--out FILE]

Uses the ``sim`` engine (a SIMULATOR: no model runs), one request at a time per worker
(``PREFIXQ_SIM_MAX_RUNNING=1``), so a shard's time is the sum of its requests' costs, as for a
compute-bound engine: ``--s-per-token`` per uncached prompt token and a tenth of it per generated
token, on shard ``gpu0`` ``--slowdown`` times as much (a slower GPU, or a core its host slows).
The router cannot know that and splits the work evenly. Each round runs the burst once with
``--steal`` and once with ``--no-steal`` (order alternating), on fresh workers and a private
redis-server; the clock runs from the first enqueue to the last stored result. Prints one JSON
line per run: seconds, jobs per shard, and jobs each shard took from the other's queue.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.report import emit, new_set
from benchmarks.routing import taken_per_shard
from benchmarks.workloads import load_items
from common.config import Settings
from producer.client import Client
from producer.launch import RedisServer, WorkerProcess

SHARDS = ("gpu0", "gpu1")


def run(burst: str, steal: bool, s_per_token: float, slowdown: float, log_dir: Path,
        documents: int | None = None) -> dict[str, Any]:
    """One burst (its first ``documents`` documents if given) on two fresh sim workers, gpu0 the
    slower; its record."""
    items = load_items(burst, documents, max_tokens=32, temperature=0.0)
    with RedisServer() as server:
        workers = []
        for shard in SHARDS:
            cost = s_per_token * (slowdown if shard == "gpu0" else 1.0)
            env = {"PREFIXQ_ENGINE": "sim", "PREFIXQ_SHARDS": ",".join(SHARDS), "PREFIXQ_SIM_MAX_RUNNING": "1",
                   "PREFIXQ_SIM_PREFILL_S_PER_TOKEN": str(cost),
                   "PREFIXQ_SIM_DECODE_S_PER_TOKEN": str(cost / 10)}
            workers.append(WorkerProcess(shard, redis_url=server.url, core=None, log_dir=log_dir, env=env,
                                         extra_args=("--no-kv-events", "--steal" if steal else "--no-steal")).start())
        try:
            for worker in workers:
                worker.wait_ready(120)
            client = Client(Settings.from_env({}, redis_url=server.url, shards=SHARDS))
            t0 = time.perf_counter()
            submission = client.submit_many(items)
            results = submission.wait(timeout=3600)
            elapsed = time.perf_counter() - t0
            taken = taken_per_shard(client, submission.job_ids, results)
        finally:
            for worker in workers:
                worker.stop()
    done = [r.completion for r in results if r.completion is not None]
    return {"system": "prefixq", "engine": "sim", "burst": burst, "steal": steal, "slowdown": slowdown,
            "s_per_token": s_per_token, "requests": len(items), "failed": len(items) - len(done),
            "seconds": round(elapsed, 3), "per_shard": dict(Counter(c.shard for c in done)),
            "taken_per_shard": taken}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--burst", default="reuse-256")
    parser.add_argument("--documents", type=int, default=None, help="Only the burst's first documents.")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--slowdown", type=float, default=1.25)
    parser.add_argument("--s-per-token", type=float, default=0.0002)
    parser.add_argument("--out", type=Path, default=None, help="Append each run's JSON line here.")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    run_set = new_set()
    for i in range(args.rounds):
        for steal in ((True, False) if i % 2 == 0 else (False, True)):
            with tempfile.TemporaryDirectory(prefix="prefixq-balance-") as logs:
                record = run(args.burst, steal, args.s_per_token, args.slowdown, Path(logs), args.documents)
            emit({"set": run_set, "round": i, **record}, args.out)


if __name__ == "__main__":
    main()
