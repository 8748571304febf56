"""Every fresh affinity pair of the given parity files, pooled per burst: how many, the median
ratio prefixq / standalone with a bootstrap 95% interval, and how many fell below 0.99.

    PYTHONPATH=. python benchmarks/results/2026-12-04-session27/pooled.py FILE...

Pairs are read as benchmarks/results/2026-12-03-session22/pairs.py reads them (one record per
system per pair of a set); resident, control and round-robin records are left out. The files
come from different machines and commits, so the pooled figure says how the pairs spread, not
what any one commit measures.
"""
import json
import random
import statistics
import sys
from collections import defaultdict

BOOTSTRAP = 10000


def pairs(path: str) -> list[tuple[str, float]]:
    runs: dict[tuple, dict[str, dict]] = defaultdict(dict)
    for line in open(path):
        r = json.loads(line)
        if "seconds" not in r or "pair" not in r or r.get("policy", "affinity") != "affinity" or not r.get("fresh", True):
            continue
        runs[(r["set"], r["burst"], r["pair"])][r["system"]] = r
    out = []
    for (_, burst, _), p in sorted(runs.items()):
        if set(p) == {"standalone", "prefixq"}:
            out.append((burst, p["prefixq"]["requests_per_s"] / p["standalone"]["requests_per_s"]))
    return out


def interval(ratios: list[float], rng: random.Random) -> tuple[float, float]:
    medians = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(BOOTSTRAP))
    return medians[int(0.025 * BOOTSTRAP)], medians[int(0.975 * BOOTSTRAP) - 1]


def main() -> None:
    rng = random.Random(0)
    pooled: dict[str, list[float]] = defaultdict(list)
    for path in sys.argv[1:]:
        by_burst: dict[str, list[float]] = defaultdict(list)
        for burst, ratio in pairs(path):
            by_burst[burst].append(ratio)
            pooled[burst].append(ratio)
        for burst, ratios in sorted(by_burst.items()):
            print(f"{path}: {burst} {len(ratios)} pairs, median {statistics.median(ratios):.4f}")
    for burst, ratios in sorted(pooled.items()):
        low, high = interval(ratios, rng)
        print(f"pooled {burst}: {len(ratios)} pairs, median {statistics.median(ratios):.4f} "
              f"(95% bootstrap {low:.4f}-{high:.4f}), mean {statistics.mean(ratios):.4f}, "
              f"below 0.99: {sum(r < 0.99 for r in ratios)}, below 0.995: {sum(r < 0.995 for r in ratios)}")


if __name__ == "__main__":
    main()
