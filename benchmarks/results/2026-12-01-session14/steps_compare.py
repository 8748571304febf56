"""A pair's steps side by side, from runs recorded with ``python -m benchmarks.parity --steps``.

    python benchmarks/results/2026-12-01-session14/steps_compare.py FILE.jsonl [STEPS]

For each pair and shard, the first STEPS steps (default 11: the prefill phase of these bursts
and the first decode-only steps) of the standalone run and of the prefixq run, each as
``interval s/running/waiting``: the time since the step before (since the clock started for
the first), the requests running after it and those waiting. The per-run summary is the
"Where a burst's time goes" table of ``python -m benchmarks.report``.
"""

from __future__ import annotations

import json
import sys


def intervals(trace: list[list[float]], count: int) -> list[str]:
    out, before = [], 0.0
    for step in trace[:count]:
        out.append(f"{step[0] - before:.2f}/{step[1]}/{step[2]}")
        before = step[0]
    return out


def main(path: str, count: int = 11) -> None:
    runs = [json.loads(line) for line in open(path) if line.strip()]
    pairs: dict[tuple[str, int], dict[str, dict]] = {}
    for run in runs:
        if "step_trace" in run:
            pairs.setdefault((run["set"], run["pair"]), {})[run["system"]] = run
    for (_, pair), systems in sorted(pairs.items(), key=lambda kv: kv[0][1]):
        base, ours = systems.get("standalone"), systems.get("prefixq")
        if base is None or ours is None:
            continue
        print(f"pair {pair}: standalone {base['seconds']} s, prefixq {ours['seconds']} s "
              f"(ratio {ours['requests_per_s'] / base['requests_per_s']:.4f}; {base['first']} first)")
        for shard in sorted(base["step_trace"]):
            print(f"  {shard} standalone: {' '.join(intervals(base['step_trace'][shard], count))}")
            print(f"  {shard} prefixq:    {' '.join(intervals(ours['step_trace'][shard], count))}")


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:3]))
