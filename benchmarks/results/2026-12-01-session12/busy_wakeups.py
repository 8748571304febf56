"""What a busy worker asks Redis while its queue is empty and its jobs run (a tool of session 12).

    PYTHONPATH=<checkout> python busy_wakeups.py [SECONDS_PER_JOB] [ROUNDS]

Two sim workers (a SIMULATOR: no model runs) on a private redis-server, stealing on, the first
16 documents of noreuse-64 (8 jobs a shard), every job running about SECONDS_PER_JOB (default
20) at once (``PREFIXQ_SIM_MAX_RUNNING=64``): the queues empty in the first second, then the
workers only wait for their engines, as during most of a real noreuse-64 burst. Prints one
JSON line per round: the burst's seconds, the Redis commands processed during it (from
``INFO commandstats``, by command), and the CPU seconds and context switches (voluntary,
involuntary) of the two worker processes and of redis-server during it.
"""
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import psutil
import redis

from benchmarks.workloads import load_items
from common.config import Settings
from producer.client import Client
from producer.launch import RedisServer, WorkerProcess

SHARDS = ("gpu0", "gpu1")


def usage(procs):
    cpu = sum(sum(p.cpu_times()[:2]) for p in procs)
    ctx = [p.num_ctx_switches() for p in procs]
    return cpu, sum(c.voluntary for c in ctx), sum(c.involuntary for c in ctx)


def one_round(per_job_s: float) -> dict:
    items = load_items("noreuse-64", 16, max_tokens=32, temperature=0.0)
    cost = per_job_s / 520  # about 500 prompt tokens and 32 generated (at a tenth of the cost)
    with RedisServer() as server, tempfile.TemporaryDirectory() as logs:
        workers = []
        for shard in SHARDS:
            env = {"PREFIXQ_ENGINE": "sim", "PREFIXQ_SHARDS": ",".join(SHARDS),
                   "PREFIXQ_SIM_MAX_RUNNING": "64", "PREFIXQ_SIM_PREFILL_S_PER_TOKEN": str(cost),
                   "PREFIXQ_SIM_DECODE_S_PER_TOKEN": str(cost / 10)}
            workers.append(WorkerProcess(shard, redis_url=server.url, core=None, log_dir=Path(logs),
                                         env=env, extra_args=("--no-kv-events", "--steal")).start())
        try:
            for w in workers:
                w.wait_ready(120)
            conn = redis.Redis.from_url(server.url)
            procs = [psutil.Process(w.proc.pid) for w in workers]
            procs += [psutil.Process(conn.info("server")["process_id"])]
            client = Client(Settings.from_env({}, redis_url=server.url, shards=SHARDS))
            before_cmd = conn.info("commandstats")
            before = usage(procs)
            t0 = time.perf_counter()
            results = client.submit_many(items).wait(timeout=600)
            elapsed = time.perf_counter() - t0
            after = usage(procs)
            after_cmd = conn.info("commandstats")
        finally:
            for w in workers:
                w.stop()
    calls = {k.removeprefix("cmdstat_"): v["calls"] - before_cmd.get(k, {"calls": 0})["calls"]
             for k, v in after_cmd.items()}
    calls = {k: n for k, n in sorted(calls.items()) if n}
    return {"seconds": round(elapsed, 2), "results": len(results), "redis_calls": sum(calls.values()),
            "by_command": calls, "cpu_s": round(after[0] - before[0], 3),
            "voluntary_switches": after[1] - before[1], "involuntary_switches": after[2] - before[2]}


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    per_job = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
    for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 1):
        print(json.dumps(one_round(per_job)), flush=True)
