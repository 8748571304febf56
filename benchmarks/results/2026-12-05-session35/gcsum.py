"""Each worker's costliest collection after start-up (``gc_per_worker``), over parity files.

    python benchmarks/results/2026-12-05-session35/gcsum.py FILE...

Prints how many worker-bursts, the largest collector CPU of any, and how many had their longest
pause (wall-clock) under 1 ms and at most 2 ms, with every pause of 1 ms or more.
"""
import json, sys
walls, cpus = [], []
for fn in sys.argv[1:]:
    for l in open(fn):
        r = json.loads(l)
        for w in r.get('gc_per_worker') or []:
            walls.append(w['max_pause_ms']); cpus.append(w['max_cpu_ms'])
print(f"{len(walls)} worker-bursts; collector CPU max {max(cpus):.2f} ms; wall <1 ms in {sum(w<1 for w in walls)}, "
      f"<=2 ms in {sum(w<=2 for w in walls)}; above 1 ms: {sorted(round(w,2) for w in walls if w>=1)}")
