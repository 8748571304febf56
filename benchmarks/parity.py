"""prefixq against standalone vLLM on the same bursts, in alternating pairs (A B A B ...).

    python -m benchmarks.parity [--burst reuse-256 --burst noreuse-64] [--pairs 3] [--out FILE]
    python -m benchmarks.parity --burst reuse-256 --policy round-robin --pairs 2 --out FILE

``--policy round-robin`` runs both systems with round-robin routing instead of prefix affinity:
the affinity vs round-robin uplift of each system comes from comparing those runs with the
affinity ones (``benchmarks.report`` does).

Each run starts its engines fresh (empty prefix caches) and warms them with a few unrelated
prompts. Prints one JSON line per run and, per burst, the ratio prefixq / standalone for each
pair and their median.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path

from benchmarks.report import emit
from benchmarks.routing import run as run_prefixq
from benchmarks.standalone import run_standalone
from benchmarks.workloads import load_items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--burst", action="append")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--policy", default="affinity", choices=["affinity", "round-robin"])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    summary = {}
    for burst in args.burst or ["reuse-256", "noreuse-64"]:
        ratios = []
        for pair in range(args.pairs):
            items = load_items(burst, max_tokens=args.max_tokens, temperature=0.0)
            base = run_standalone(items, {"max_tokens": args.max_tokens, "temperature": 0.0}, args.policy)
            with tempfile.TemporaryDirectory(prefix="prefixq-parity-") as logs:
                ours = run_prefixq(burst, args.policy, args.max_tokens, Path(logs))
            ours["system"] = "prefixq"
            ratio = ours["requests_per_s"] / base["requests_per_s"]  # type: ignore[operator]
            ratios.append(ratio)
            for line in (base, ours):
                emit({"burst": burst, "pair": pair, **line}, args.out)
            print(json.dumps({"burst": burst, "pair": pair, "policy": args.policy, "ratio": round(ratio, 4)}),
                  flush=True)
        summary[burst] = {"ratios": [round(r, 4) for r in ratios],
                          "median": round(statistics.median(ratios), 4), "min": round(min(ratios), 4)}
    print(json.dumps({"summary": summary}, indent=2))


if __name__ == "__main__":
    main()
