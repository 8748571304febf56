"""Redis commands and front-end wake-ups of prefixq through one real burst (a tool of session 12).

    PYTHONPATH=<checkout> python burst_calls.py [BURST] [RUNS]

Starts prefixq as the parity benchmark does (``benchmarks.routing.Prefixq``: two workers with
the built-in model on vLLM, one core each), runs BURST (default noreuse-64) RUNS times, and
prints per run: seconds, the Redis commands processed during the burst (``INFO commandstats``,
commands inside scripts included), and the voluntary and involuntary context switches of the
two workers' own processes (their front end: event loop, vLLM's output handling, prefixq's
threads) and of redis-server. At the end, the workers' stage counts (pull, steal) over all runs.
"""
import json
import os
import sys
import tempfile
from pathlib import Path

import psutil
import redis

from benchmarks.routing import Prefixq, logged_dict


def switches(pids):
    out = [0, 0]
    for pid in pids:
        p = psutil.Process(pid)
        for t in p.threads():
            try:
                with open(f"/proc/{pid}/task/{t.id}/status") as f:
                    for line in f:
                        if line.startswith("voluntary_ctxt_switches"):
                            out[0] += int(line.split()[1])
                        elif line.startswith("nonvoluntary_ctxt_switches"):
                            out[1] += int(line.split()[1])
            except FileNotFoundError:
                pass
    return out


def main() -> None:
    burst = sys.argv[1] if len(sys.argv) > 1 else "noreuse-64"
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    with tempfile.TemporaryDirectory() as logs:
        system = Prefixq(Path(logs))
        with system:
            conn = redis.Redis.from_url(system.server.url)
            for _ in range(runs):
                before = {}

                def snap() -> None:
                    before["cmd"] = conn.info("commandstats")
                    before["workers"] = switches(system.worker_pids)
                    before["redis"] = switches([system.server.proc.pid])

                record = system.run(burst, "affinity", 32, before_clock=snap)
                after = conn.info("commandstats")
                calls = {k.removeprefix("cmdstat_"): v["calls"] - before["cmd"].get(k, {"calls": 0})["calls"]
                         for k, v in after.items()}
                w, r = switches(system.worker_pids), switches([system.server.proc.pid])
                print(json.dumps({"burst": burst, "seconds": record["seconds"],
                                  "redis_calls": sum(calls.values()),
                                  "by_command": {k: n for k, n in sorted(calls.items()) if n},
                                  "worker_switches": [a - b for a, b in zip(w, before["workers"])],
                                  "redis_switches": [a - b for a, b in zip(r, before["redis"])],
                                  "cpu_s": record.get("cpu_s")}), flush=True)
            workers = list(system.workers)
        # stopped: each worker logged its stage counts
        for worker in workers:
            print(json.dumps({"shard": worker.shard, "stages": {
                k: v.get("calls") for k, v in logged_dict(worker.log_text(), " stages: ").items()}}))


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    main()
