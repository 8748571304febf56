"""Affinity against round-robin on reuse-256 for both systems, and prefixq's CPU outside the
engines above the baseline's under each policy (% of the two cores over its clock).

    PYTHONPATH=. python benchmarks/results/2026-12-05-session33/uplift.py

Uplift = median throughput of a system's affinity runs over the median of its round-robin runs.
If prefixq costs the same CPU per job under both policies, that cost is a larger share of the
shorter affinity bursts, and its uplift comes out smaller than the baseline's by about the
difference of the two shares.
"""

import glob
import json
import statistics

from benchmarks.report import outside_engines

FOLDER = "benchmarks/results/2026-12-05-session33"


def main() -> None:
    speed = {}
    extra = {}
    for path in sorted(glob.glob(f"{FOLDER}/parity-reuse*-steps.jsonl")):
        records = [json.loads(line) for line in open(path)]
        for rec in records:
            speed.setdefault((rec["system"], rec["policy"]), []).append(rec["requests_per_s"])
        for pair in sorted({r["pair"] for r in records}):
            runs = {r["system"]: r for r in records if r["pair"] == pair}
            ours, base = runs["prefixq"], runs["standalone"]
            outside = outside_engines(ours) - outside_engines(base)
            extra.setdefault(ours["policy"], []).append(100 * outside / (2 * ours["seconds"]))
    for system in ("standalone", "prefixq"):
        aff, rr = speed[(system, "affinity")], speed[(system, "round-robin")]
        print(f"{system:<10} affinity {len(aff)} runs, median {statistics.median(aff):.3f} req/s; "
              f"round-robin {len(rr)} runs, median {statistics.median(rr):.3f}; "
              f"uplift {100 * (statistics.median(aff) / statistics.median(rr) - 1):+.1f}%")
    for policy, values in sorted(extra.items()):
        print(f"prefixq's extra CPU, {policy}: {len(values)} pairs, median {statistics.median(values):.2f}% "
              f"({min(values):.2f}-{max(values):.2f})")


if __name__ == "__main__":
    main()
