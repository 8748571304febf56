"""Each worker's costliest collection after start-up (``gc_per_worker``), over parity files.

    python benchmarks/results/2026-12-05-session35/gcsum.py FILE...

Prints how many worker-bursts, the largest collector CPU of any, and how many had their longest
pause (wall-clock) under 1 ms and at most 2 ms, with every pause of 1 ms or more.
"""
import json
import sys

if __name__ == "__main__":
    pauses, cpus = [], []
    for name in sys.argv[1:]:
        with open(name) as f:
            for record in map(json.loads, f):
                for worker in record.get("gc_per_worker") or []:
                    pauses.append(worker["max_pause_ms"])
                    cpus.append(worker["max_cpu_ms"])
    print(f"{len(pauses)} worker-bursts; collector CPU max {max(cpus):.2f} ms; "
          f"wall <1 ms in {sum(p < 1 for p in pauses)}, <=2 ms in {sum(p <= 2 for p in pauses)}; "
          f"above 1 ms: {sorted(round(p, 2) for p in pauses if p >= 1)}")
