"""Where redis-server's CPU goes in the overhead benchmark's end-to-end run (sim engine, one
worker, 20,000 jobs in submissions of 500): Redis's own ``INFO commandstats`` after the run.

    PYTHONPATH=. python benchmarks/results/2026-12-04-session28/redis_commandstats.py [JOBS]

Prints each command's calls, total microseconds and microseconds per job, largest first; a
script (EVALSHA / FCALL) counts its commands under their own names too, so the EVALSHA line
includes them.
"""
import sys
import tempfile
import time
from pathlib import Path

from redis import Redis

from benchmarks.overhead import SIM_ENV, _items, _worker_args
from common.config import Settings
from producer.client import Client
from producer.launch import RedisServer, WorkerProcess

jobs = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
with tempfile.TemporaryDirectory() as tmp, RedisServer(appendonly=False) as server:
    settings = Settings.from_env(redis_url=server.url, shards=("gpu0",), max_tokens=8)
    worker = WorkerProcess("gpu0", redis_url=server.url, core=None, log_dir=Path(tmp),
                           extra_args=_worker_args(256), env=SIM_ENV).start()
    try:
        worker.wait_ready(120)
        client = Client(settings)
        client.submit_many(_items(16)).wait(timeout=60)
        conn = Redis.from_url(server.url)
        conn.config_resetstat()
        items = _items(jobs)
        t0 = time.perf_counter()
        for s in [client.submit_many(items[i:i + 500]) for i in range(0, jobs, 500)]:
            s.wait(timeout=600)
        elapsed = time.perf_counter() - t0
        stats = conn.info("commandstats")
        cpu = conn.info("cpu")
    finally:
        worker.stop()
rows = sorted(((k.removeprefix("cmdstat_"), v["calls"], v["usec"]) for k, v in stats.items()),
              key=lambda r: -r[2])
print(f"{jobs} jobs in {elapsed:.2f} s ({jobs / elapsed:.0f} jobs/s)")
print(f"{'command':24} {'calls':>8} {'usec':>10} {'usec/job':>9}")
for name, calls, usec in rows:
    print(f"{name:24} {calls:8d} {usec:10d} {usec / jobs:9.2f}")
