"""Affinity against round-robin on reuse-256 for both systems, and prefixq's CPU outside the
engines above the baseline's under each policy (% of the two cores over its clock).

    PYTHONPATH=. python benchmarks/results/2026-12-05-session33/uplift.py

Uplift = median throughput of a system's affinity runs over the median of its round-robin runs.
If prefixq costs the same CPU per job under both policies, that cost is a larger share of the
shorter affinity bursts, and its uplift comes out smaller than the baseline's by about the
difference of the two shares.
"""

import statistics
from pathlib import Path

from benchmarks.report import outside_engines, paired_runs, read_lines, uplift_section

FOLDER = Path("benchmarks/results/2026-12-05-session33")


def main() -> None:
    rows = read_lines(FOLDER, "parity-reuse*-steps.jsonl")
    print("\n".join(line for line in uplift_section(rows) if line.startswith(("|", "-"))))
    extra: dict[str, list[float]] = {}
    for runs in paired_runs(rows, policy=None).values():
        ours, base = runs["prefixq"], runs["standalone"]
        outside = outside_engines(ours) - outside_engines(base)
        extra.setdefault(ours["policy"], []).append(100 * outside / (2 * ours["seconds"]))
    for policy, values in sorted(extra.items()):
        print(f"prefixq's extra CPU, {policy}: {len(values)} pairs, median {statistics.median(values):.2f}% "
              f"({min(values):.2f}-{max(values):.2f})")


if __name__ == "__main__":
    main()
