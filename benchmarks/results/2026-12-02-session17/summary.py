"""Session 17's runs at a glance, rotation or parity records alike: per run the system, the
burst's seconds, the engines' CPU by process (the model's ``VLLM::Worker``, the scheduler's
``VLLM::EngineCore``), the CPU outside the engines and the model threads' preemptions; per
system the median burst.

    PYTHONPATH=. python benchmarks/results/2026-12-02-session17/summary.py FILE...
"""
import json
import statistics
import sys
from collections import defaultdict

for path in sys.argv[1:]:
    print(path)
    seconds = defaultdict(list)
    for line in open(path):
        run = json.loads(line)
        where = f"round {run['round']} pos {run['position']}" if "round" in run else f"pair {run['pair']}"
        by_process = run.get("engine_cpu_by_process", {})
        outside = sum(v for k, v in run["cpu_s"].items() if k != "engine")
        seconds[run["system"]].append(run["seconds"])
        print(f"  {where:<16} {run['system']:<22} {run['seconds']:>7.2f} s  "
              f"model {by_process.get('VLLM::Worker', float('nan')):7.2f} s  "
              f"scheduler {by_process.get('VLLM::EngineCore', float('nan')):5.2f} s  "
              f"outside engines {outside:5.2f} s  "
              f"preempted {run['engine_preempted'].get('VLLM::Worker')}")
    for system, values in seconds.items():
        print(f"  median {system}: {statistics.median(values):.2f} s over {len(values)} runs")
