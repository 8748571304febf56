"""Each rotation round's seconds, and every variant's time over prefixq's defaults in that round.

    python benchmarks/results/2026-12-06-session42/rotsum.py FILE...

FILEs are records of session 41's larotation.py or this session's rotation.py (``system``
"prefixq" for the defaults, "prefixq-NAME" for a variant; ``round``). Rounds are taken per
file; the summary pools every round of every file: per variant the median of variant / default
and in how many rounds the variant was the faster.
"""
import json
import statistics
import sys
from collections import defaultdict


def main() -> None:
    rounds: dict[tuple[str, int], dict[str, float]] = defaultdict(dict)
    for path in sys.argv[1:]:
        for line in open(path):
            r = json.loads(line)
            rounds[(path, r["round"])][r["system"]] = r["seconds"]
    variants = sorted({s for seconds in rounds.values() for s in seconds} - {"prefixq"})
    quotients: dict[str, list[float]] = defaultdict(list)
    for (path, r), seconds in rounds.items():
        if "prefixq" not in seconds:
            continue
        cells = [f"prefixq {seconds['prefixq']:.2f} s"]
        for v in variants:
            if v in seconds:
                q = seconds[v] / seconds["prefixq"]
                quotients[v].append(q)
                cells.append(f"{v} {seconds[v]:.2f} s ({q:.4f})")
        print(f"{path.rsplit('/', 1)[-1]} round {r}: " + ", ".join(cells))
    for v in variants:
        q = quotients[v]
        print(f"{v} / prefixq: median {statistics.median(q):.4f} over {len(q)} rounds, "
              f"the variant the faster in {sum(x < 1 for x in q)}")


if __name__ == "__main__":
    main()
