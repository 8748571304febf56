"""Diagnostic: py-spy on both prefixq workers during one fresh burst (attached after warm-up).

    PYTHONPATH=. python benchmarks/results/2026-12-03-session22/profile_workers.py BURST DURATION_S OUT_DIR

py-spy samples each worker's threads at 100 Hz for DURATION_S seconds (longer than the burst) and
writes OUT_DIR/w0.raw and w1.raw; the script prints the run's clock and CPU, then per worker the
functions its samples went to (benchmarks.overhead.profile_report) and the samples per thread.
py-spy's own sampling costs the machine CPU: the burst's time means nothing.
"""
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from benchmarks.overhead import profile_report
from benchmarks.routing import Prefixq


def by_thread(raw: Path) -> Counter[str]:
    counts: Counter[str] = Counter()
    for line in raw.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        counts[stack.split(";")[0]] += int(n)
    return counts


if __name__ == "__main__":
    burst, duration, out = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    with Prefixq(out) as system:
        spies = [subprocess.Popen(["py-spy", "record", "--pid", str(pid), "--threads", "--nonblocking",
                                   "--rate", "100", "--format", "raw", "-o", str(out / f"w{i}.raw"),
                                   "--duration", str(duration)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for i, pid in enumerate(system.worker_pids)]
        time.sleep(2)
        record = system.run(burst, "affinity", 32)
        print(json.dumps({k: record[k] for k in ("seconds", "prepare_s", "cpu_s")}))
        for spy in spies:
            spy.wait()
    for i in range(len(spies)):
        print(f"== worker {i}")
        for kind, rows in profile_report(out / f"w{i}.raw", top=40).items():
            print("--", kind)
            for share, name in rows:
                print(f"{share:6.1%} {name}")
        print("threads", by_thread(out / f"w{i}.raw").most_common(12))
