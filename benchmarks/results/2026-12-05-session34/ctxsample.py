"""Every 5 s, every thread's context switches and CPU in a process tree, until its root exits.

    python ctxsample.py ROOT_PID OUT.jsonl

One JSON line per sample: {"t": wall-clock time, "threads": [[pid, tid, process name, thread
name, command line (120 characters), voluntary switches, involuntary switches, user + system
CPU in clock ticks], ...]}, read from /proc. ctxrates.py turns two samples into rates.
"""

import json
import os
import sys
import time

import psutil


def thread_rows(proc: psutil.Process) -> list[list]:
    rows = []
    name, command = proc.name(), " ".join(proc.cmdline())[:120]
    for tid in os.listdir(f"/proc/{proc.pid}/task"):
        base = f"/proc/{proc.pid}/task/{tid}"
        try:
            with open(f"{base}/status") as f:
                status = f.read()
            with open(f"{base}/comm") as f:
                comm = f.read().strip()
            with open(f"{base}/stat") as f:
                stat = f.read().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended meanwhile
            continue
        voluntary = int(status.split("\nvoluntary_ctxt_switches:")[1].split()[0])
        involuntary = int(status.split("nonvoluntary_ctxt_switches:")[1].split()[0])
        rows.append([proc.pid, int(tid), name, comm, command, voluntary, involuntary,
                     int(stat[11]) + int(stat[12])])  # utime + stime (fields 14 and 15)
    return rows


def main() -> None:
    root, out = int(sys.argv[1]), open(sys.argv[2], "a")
    while psutil.pid_exists(root):
        t = time.time()
        try:
            procs = [psutil.Process(root), *psutil.Process(root).children(recursive=True)]
        except psutil.NoSuchProcess:
            break
        rows = []
        for proc in procs:
            try:
                rows += thread_rows(proc)
            except (psutil.NoSuchProcess, OSError):
                continue
        out.write(json.dumps({"t": t, "threads": rows}) + "\n")
        out.flush()
        time.sleep(5)


if __name__ == "__main__":
    main()
