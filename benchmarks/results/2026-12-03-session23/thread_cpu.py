"""Diagnostic: each prefixq worker's CPU per thread over one fresh burst.

    PYTHONPATH=. python benchmarks/results/2026-12-03-session23/thread_cpu.py BURST OUT_DIR

Reads every thread's CPU (utime + stime, /proc/PID/task/TID/stat) of each worker process before
and after the burst, names the threads with ``py-spy dump`` (Python's thread names; native
threads keep their OS name), and prints per worker the threads with their CPU seconds, and the
run's clock and CPU record. Only the worker processes: vLLM's engine processes are children.
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from benchmarks.routing import Prefixq

TICK = os.sysconf("SC_CLK_TCK")


def thread_cpu(pid: int) -> dict[int, tuple[str, float]]:
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        out[int(tid)] = (comm, (int(fields[11]) + int(fields[12])) / TICK)
    return out


def python_names(pid: int) -> dict[int, str]:
    dump = subprocess.run(["py-spy", "dump", "--nonblocking", "--pid", str(pid)],
                          capture_output=True, text=True).stdout
    return {int(m.group(1)): m.group(2) for m in re.finditer(r'^Thread (\d+) \(\w+\): "([^"]*)"', dump, re.M)}


if __name__ == "__main__":
    burst, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    with Prefixq(out) as system:
        pids = system.worker_pids
        before = {pid: thread_cpu(pid) for pid in pids}
        record = system.run(burst, "affinity", 32)
        after = {pid: thread_cpu(pid) for pid in pids}
        names = {pid: python_names(pid) for pid in pids}
    print(json.dumps({k: record[k] for k in ("seconds", "prepare_s", "cpu_s")}))
    for pid in pids:
        rows = []
        for tid, (comm, cpu) in after[pid].items():
            spent = cpu - before[pid].get(tid, (comm, 0.0))[1]
            rows.append((spent, names[pid].get(tid, comm), tid))
        rows.sort(reverse=True)
        print(f"worker {pid}: {sum(r[0] for r in rows):.2f} s in all")
        for spent, name, tid in rows:
            if spent > 0:
                print(f"  {spent:6.2f} s  {name} ({tid})")
