"""The overhead ceiling: jobs/s through Redis and one worker whose engine takes no time.

    python -m benchmarks.overhead [--jobs 20000] [--profile FILE]

Uses the ``sim`` engine (a SIMULATOR: no model runs, zero cost per token). First the producer
enqueues every job (its rate is reported), then one worker drains the queue in burst mode; the
drain rate is jobs / (time from the worker's first pull to its exit). With ``--profile`` the
worker runs under cProfile and the functions that take its CPU time are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import mean

from common.config import Settings
from producer.client import Client
from producer.items import Item
from producer.launch import RedisServer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=20000)
    parser.add_argument("--max-batch", type=int, default=256)
    parser.add_argument("--profile", type=Path, default=None)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with RedisServer(appendonly=False) as server, tempfile.TemporaryDirectory() as tmp:
        settings = Settings.from_env(redis_url=server.url, shards=("gpu0",), max_tokens=8)
        client = Client(settings)
        items = [Item.prompt(f"Question number {i}?", tag=str(i)) for i in range(args.jobs)]
        t0 = time.perf_counter()
        submission = client.submit_many(items)
        enqueue_s = time.perf_counter() - t0
        env = {**os.environ, "PREFIXQ_REDIS_URL": server.url, "PREFIXQ_SHARDS": "gpu0",
               "PREFIXQ_ENGINE": "sim", "PREFIXQ_LOG_LEVEL": "WARNING"}
        profile = ["-m", "cProfile", "-o", str(args.profile)] if args.profile else []
        worker = [sys.executable, *profile, "-m", "producer.cli", "worker", "--shard", "gpu0",
                  "--burst", "--max-batch", str(args.max_batch), "--max-inflight", str(max(256, args.max_batch))]
        t1 = time.perf_counter()
        subprocess.run(worker, env=env, check=True, stdout=subprocess.DEVNULL, stderr=open(Path(tmp) / "w.log", "w"))
        drain_s = time.perf_counter() - t1
        results = submission.results()
    done = [r.completion for r in results if r is not None and r.completion is not None]
    print(json.dumps({
        "engine": "sim (simulator, zero cost)", "jobs": args.jobs, "stored": len(done),
        "enqueue_s": round(enqueue_s, 2), "enqueue_jobs_per_s": round(args.jobs / enqueue_s),
        "worker_drain_s_incl_start": round(drain_s, 2), "drain_jobs_per_s": round(args.jobs / drain_s),
        "mean_queue_wait_ms": round(mean(c.timings_ms["queue"] for c in done), 1),
        "mean_engine_ms": round(mean(c.timings_ms["engine"] for c in done), 3),
    }, indent=2))
    if args.profile:
        pstats.Stats(str(args.profile)).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
