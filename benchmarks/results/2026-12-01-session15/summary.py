"""Session 15's sets at a glance: per pair the ratio, both bursts' seconds, the model threads'
preemptions and the CPU outside the engines; per set the medians, the excess CPU outside the
engines as a share of the two cores, and each worker's costliest collection.

    PYTHONPATH=. python benchmarks/results/2026-12-01-session15/summary.py FILE...

Pairs come from the report's own pairing (``benchmarks.report.paired_runs``), every policy.
"""
import statistics
import sys
from pathlib import Path

from benchmarks.report import paired_runs, read_lines

for path in map(Path, sys.argv[1:]):
    print(path)
    ratios, excess, gc_cpu = [], [], []
    for (_, _, pair), systems in sorted(paired_runs(read_lines(path.parent, path.name), None).items()):
        base = systems["standalone"]
        other = systems.get("prefixq") or systems["standalone-control"]
        ratio = base["seconds"] / other["seconds"]
        ratios.append(ratio)
        outside = [sum(v for k, v in r["cpu_s"].items() if k != "engine") for r in (base, other)]
        excess.append((outside[1] - outside[0]) / (2 * other["seconds"]))
        gc_cpu += [g["max_cpu_ms"] for g in other.get("gc_per_worker", [])]
        print(f"  pair {pair} first={base.get('first')}: ratio {ratio:.4f}  seconds {base['seconds']} / "
              f"{other['seconds']}  preempted {base['engine_preempted']['VLLM::Worker']} / "
              f"{other['engine_preempted']['VLLM::Worker']}  cpu outside engines {outside[0]:.2f} / {outside[1]:.2f} s")
    print(f"  median ratio {statistics.median(ratios):.4f} over {len(ratios)} pairs, "
          f"{sum(r < 0.99 for r in ratios)} below 0.99; excess CPU outside the engines "
          f"{100 * min(excess):.2f}-{100 * max(excess):.2f}% of the two cores"
          + (f"; costliest collection {min(gc_cpu):.2f}-{max(gc_cpu):.2f} ms of CPU" if gc_cpu else ""))
