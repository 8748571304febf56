"""Which run of each pair was the slower: the first one's burst seconds over the second's.

    python benchmarks/results/2026-12-05-session33/position.py FILE...

A value above 1 means the run that went first in its pair was the slower. For an A/A file the
system that went first is named too (``standalone`` or ``standalone-control``).
"""

import json
import statistics
import sys


def main(paths: list[str]) -> None:
    quotients = []
    for path in paths:
        records = [json.loads(line) for line in open(path)]
        cells = []
        for pair in sorted({r["pair"] for r in records}):
            runs = {r["system"]: r for r in records if r["pair"] == pair}
            first_name = next(iter(runs.values()))["first"]
            first = runs[first_name]
            (second,) = [r for name, r in runs.items() if name != first_name]
            quotient = first["seconds"] / second["seconds"]
            quotients.append(quotient)
            cells.append(f"{first_name} first {quotient:.3f}")
        print(path.rsplit("/", 1)[-1], "  ".join(cells))
    print(f"first / second: {len(quotients)} pairs, median {statistics.median(quotients):.4f}, "
          f"the first the slower in {sum(q > 1 for q in quotients)}")


if __name__ == "__main__":
    main(sys.argv[1:])
