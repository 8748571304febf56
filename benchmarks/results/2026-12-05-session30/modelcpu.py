"""How much of each parity pair's ratio the models' own CPU explains, pooled over parity files.

    python benchmarks/results/2026-12-05-session30/modelcpu.py FILE...

For each pair: the ratio (standalone seconds /
prefixq seconds) and the model-CPU ratio (prefixq's ``VLLM::Worker`` CPU / the baseline's, for
the same tokens). Prints, per burst, the pairs' count, the model-CPU ratio's median, how often
prefixq's models used more CPU, and the correlation of the model-CPU ratio with 1 / ratio.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict

import numpy as np

def pairs(files: list[str]) -> dict[str, list[tuple[float, float]]]:
    by_burst: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for name in files:
        runs: dict[tuple[str, int], dict[str, dict]] = defaultdict(dict)
        with open(name) as f:
            for row in map(json.loads, f):
                if row.get("policy") == "affinity" and "engine_cpu_by_process" in row:
                    runs[(row.get("set", ""), row["pair"])][row["system"]] = row
        for pair in runs.values():
            if pair.keys() == {"standalone", "prefixq"}:
                model = {s: r["engine_cpu_by_process"]["VLLM::Worker"] for s, r in pair.items()}
                ratio = pair["standalone"]["seconds"] / pair["prefixq"]["seconds"]
                by_burst[pair["prefixq"]["burst"]].append((ratio, model["prefixq"] / model["standalone"]))
    return by_burst


if __name__ == "__main__":
    for burst, rows in sorted(pairs(sys.argv[1:]).items()):
        ratios, model = zip(*rows)
        print(f"{burst}: {len(rows)} pairs; ratio median {statistics.median(ratios):.4f}, "
              f"{sum(r < 0.99 for r in ratios)} below 0.99; model-CPU ratio median "
              f"{statistics.median(model):.4f} (prefixq's models used more in {sum(m > 1 for m in model)}); "
              f"correlation with 1/ratio {np.corrcoef(model, [1 / r for r in ratios])[0, 1]:.3f}")
