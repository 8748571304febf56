"""Which threads of the standalone baseline's shard processes use CPU during one burst.

    PYTHONPATH=. python benchmarks/results/2026-12-04-session28/frontend_threads.py [BURST]

Starts the baseline's engines (fresh, as benchmarks.parity does), runs one burst, and prints the
CPU each thread of each shard process used from just before the burst to just after it, by
thread name (``/proc/PID/task/TID/comm``; since session 29, read by
``benchmarks.cputime.thread_times``, which names a main thread ``NAME (main)``), largest first. The model and scheduler processes are
children and are not counted: this is the "frontend" figure of a parity record, by thread.
"""
import os
import sys

from benchmarks.cputime import thread_times
from benchmarks.standalone import Standalone
from benchmarks.workloads import load_items
from common.config import env_var


def main() -> None:
    burst = sys.argv[1] if len(sys.argv) > 1 else "reuse-256"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ[env_var("step_trace")] = "1"  # as benchmarks.parity --steps
    items = load_items(burst)
    before = {}
    with Standalone() as engines:
        def snapshot() -> None:  # prefix caches reset, prompts tokenized: just before the release
            before.update(thread_times(engines.pids))
        record = engines.run(items, {"max_tokens": 32, "temperature": 0.0}, before_clock=snapshot)
        pids = engines.pids
        after = thread_times(pids)
    print(f"{burst}: {record['seconds']} s, frontend {record['cpu_s'].get('frontend')} s")
    for pid in pids:
        spent = {}
        for (owner, tid), (name, user, system) in after.items():
            if owner == pid:
                _, user0, system0 = before.get((owner, tid), (name, 0.0, 0.0))
                spent[(tid, name)] = user + system - user0 - system0
        total = sum(spent.values())
        print(f"pid {pid}: {total:.2f} s in {len(spent)} threads")
        for (tid, name), cpu in sorted(spent.items(), key=lambda kv: -kv[1])[:8]:
            print(f"  {cpu:6.2f} s  {name} ({tid})")


if __name__ == "__main__":  # the engines start in spawned processes
    main()
