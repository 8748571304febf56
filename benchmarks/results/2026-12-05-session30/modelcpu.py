"""How much of each parity pair's ratio the models' own CPU explains, pooled over parity files.

    PYTHONPATH=. python benchmarks/results/2026-12-05-session30/modelcpu.py FILE...

For each pair of fresh affinity runs (``benchmarks.report.paired_runs``), prefixq or the A/A
control against standalone vLLM: the ratio (standalone seconds / the other's) and the model-CPU
ratio (the other's ``VLLM::Worker`` CPU / the baseline's, for the same tokens). Prints, per
system and burst, the pairs' count, the ratios' median, the model-CPU ratio's median, how often
the other system's models used more CPU, and the correlation of the model-CPU ratio with
1 / ratio.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict

import numpy as np

from benchmarks.report import paired_runs


def pairs(files: list[str]) -> dict[tuple[str, str], list[tuple[float, float]]]:
    """``{(system, burst): [(ratio, model-CPU ratio), ...]}``."""
    out: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    for name in files:
        with open(name) as f:
            rows = [row for row in map(json.loads, f) if row.get("fresh", True)]
        for (burst, _, _), runs in paired_runs(rows).items():
            other = next((s for s in ("prefixq", "standalone-control") if s in runs), None)
            if other is None or "standalone" not in runs or "engine_cpu_by_process" not in runs[other]:
                continue
            base, ours = runs["standalone"], runs[other]
            model = ours["engine_cpu_by_process"]["VLLM::Worker"] / base["engine_cpu_by_process"]["VLLM::Worker"]
            out[(other, burst)].append((base["seconds"] / ours["seconds"], model))
    return out


if __name__ == "__main__":
    for (system, burst), rows in sorted(pairs(sys.argv[1:]).items()):
        ratios, model = zip(*rows)
        print(f"{system} {burst}: {len(rows)} pairs; ratio median {statistics.median(ratios):.4f}, "
              f"{sum(r < 0.99 for r in ratios)} below 0.99; model-CPU ratio median "
              f"{statistics.median(model):.4f} (the other system's models used more in "
              f"{sum(m > 1 for m in model)}); correlation with 1/ratio "
              f"{np.corrcoef(model, [1 / r for r in ratios])[0, 1]:.3f}")
