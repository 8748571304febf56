"""How far pairs of identical systems spread, against prefixq's pairs, on the same protocol.

    PYTHONPATH=. python benchmarks/results/2026-12-04-session29/spread.py \
        --control CONTROL_FILE... --parity PARITY_FILE...

For every fresh affinity pair of each group, per burst: how many pairs, the median ratio (with a
bootstrap 95% interval), the standard deviation of the ratios, and how many fell below 0.99 and
0.995. Control files hold A/A pairs (standalone vLLM against itself, ``benchmarks.parity
--control``): their ratios are the machine's own spread, what "no pair below 0.99" would ask of
two identical systems. For prefixq's pairs it also gives what moves less from run to run: the
models' share of the two cores (prefixq / standalone) and prefixq's CPU outside the engines'
processes (model and scheduler) above the baseline's, as a percentage of the two cores over
prefixq's burst (as ``2026-12-03-session22/pairs.py`` computes them).
"""
import argparse
import json
import random
import statistics
from collections import defaultdict

from benchmarks.report import models_share, outside_engines

BOOTSTRAP = 10000


def pairs(path: str) -> list[tuple[str, dict, dict]]:
    """(burst, baseline record, other record) for each complete fresh affinity pair of a file."""
    runs: dict[tuple, dict[str, dict]] = defaultdict(dict)
    for line in open(path):
        r = json.loads(line)
        if "seconds" not in r or "pair" not in r or r.get("policy", "affinity") != "affinity" \
                or not r.get("fresh", True):
            continue
        runs[(r.get("set"), r["burst"], r["pair"])][r["system"]] = r
    out = []
    for (_, burst, _), p in sorted(runs.items(), key=lambda kv: (str(kv[0][0]), kv[0][1], kv[0][2])):
        other = p.get("prefixq") or p.get("standalone-control")
        if "standalone" in p and other is not None:
            out.append((burst, p["standalone"], other))
    return out


def interval(values: list[float], rng: random.Random) -> tuple[float, float]:
    medians = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(BOOTSTRAP))
    return medians[int(0.025 * BOOTSTRAP)], medians[int(0.975 * BOOTSTRAP) - 1]


def summary(name: str, found: list[tuple[str, dict, dict]], rng: random.Random) -> None:
    by_burst: dict[str, list[tuple[dict, dict]]] = defaultdict(list)
    for burst, base, other in found:
        by_burst[burst].append((base, other))
    for burst, runs in sorted(by_burst.items()):
        ratios = [o["requests_per_s"] / b["requests_per_s"] for b, o in runs]
        low, high = interval(ratios, rng)
        line = (f"{name} {burst}: {len(ratios)} pairs, median {statistics.median(ratios):.4f} "
                f"(95% bootstrap {low:.4f}-{high:.4f}), sd {statistics.stdev(ratios):.4f}, "
                f"range {min(ratios):.4f}-{max(ratios):.4f}, below 0.99: {sum(r < 0.99 for r in ratios)}, "
                f"below 0.995: {sum(r < 0.995 for r in ratios)}")
        if all(o["system"] == "prefixq" and "engine_cpu_by_process" in o for _, o in runs):
            shares = [models_share(o) / models_share(b) for b, o in runs]
            extra = [100 * (outside_engines(o) - outside_engines(b)) / (2 * o["seconds"]) for b, o in runs]
            line += (f"; share ratio median {statistics.median(shares):.4f} (sd {statistics.stdev(shares):.4f}); "
                     f"CPU outside the engines above the baseline's, % of two cores: median "
                     f"{statistics.median(extra):.2f}, range {min(extra):.2f} to {max(extra):.2f}")
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--control", nargs="+", default=[], help="A/A parity files")
    parser.add_argument("--parity", nargs="+", default=[], help="prefixq parity files")
    args = parser.parse_args()
    rng = random.Random(0)
    summary("A/A control", [p for f in args.control for p in pairs(f)], rng)
    summary("prefixq", [p for f in args.parity for p in pairs(f)], rng)


if __name__ == "__main__":
    main()
