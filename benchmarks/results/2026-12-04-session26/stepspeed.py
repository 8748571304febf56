"""How fast each run's models stepped, from the step traces (``--steps`` / ``PREFIXQ_STEP_TRACE``).

    python benchmarks/results/2026-12-04-session26/stepspeed.py FILE...

Per run and shard: the median time of a decode-only step with at least 28 requests running and
decoding (the same work in every run of a burst), and the prefill steps' time per prompt token
(steps with over 500 prompt tokens). A step's time is the gap between the front end's records
of consecutive steps, so it includes the scheduler's work between steps. Then, per variant
(``system``), the medians over its runs; for parity files also each pair's prefixq / standalone
ratio of those speeds (above 1: prefixq's models stepped slower).
"""
import json
import statistics
import sys
from collections import defaultdict


def speeds(record: dict) -> dict[str, tuple[float, float]]:
    """shard -> (median decode step s with ~32 running, prefill s per prompt token)."""
    out = {}
    for shard, steps in sorted(record["step_trace"].items()):
        previous, decode, prefill_s, prefill_tokens = 0.0, [], 0.0, 0
        for t, running, _waiting, prompt, generated in (s[:5] for s in steps):
            took, previous = t - previous, t
            if prompt == 0 and running >= 28 and generated >= 28:
                decode.append(took)
            elif prompt > 500:
                prefill_s, prefill_tokens = prefill_s + took, prefill_tokens + prompt
        out[shard] = (statistics.median(decode), prefill_s / prefill_tokens)
    return out


def main() -> None:
    rows = [json.loads(line) for path in sys.argv[1:] for line in open(path)]
    rows = [r for r in rows if r.get("step_trace")]
    by_system: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    by_pair: dict[tuple, dict[str, dict]] = defaultdict(dict)
    for r in rows:
        s = speeds(r)
        decode = statistics.mean(d for d, _ in s.values())
        prefill = statistics.mean(p for _, p in s.values())
        by_system[r["system"]].append((r["seconds"], decode, prefill))
        where = f"pair {r['pair']}" if "pair" in r else f"round {r.get('round')}"
        print(f"{where:8} {r['system'][:20]:20} {r['seconds']:6.2f} s  " + "  ".join(
            f"{shard}: decode {d * 1e3:5.1f} ms, prefill {p * 1e6:6.1f} us/token" for shard, (d, p) in s.items()))
        if "pair" in r:
            by_pair[(r.get("set"), r["burst"], r["pair"])][r["system"]] = {"seconds": r["seconds"],
                                                                           "decode": decode, "prefill": prefill}
    print("\nmedians per variant (runs, seconds, decode step ms, prefill us/token):")
    for system, values in by_system.items():
        seconds, decode, prefill = zip(*values)
        print(f"  {system[:24]:24} n={len(values)}  {statistics.median(seconds):6.2f} s  "
              f"{statistics.median(decode) * 1e3:6.1f} ms  {statistics.median(prefill) * 1e6:7.1f} us")
    ratios = [(p["prefixq"]["decode"] / p["standalone"]["decode"], p["prefixq"]["prefill"] / p["standalone"]["prefill"])
              for p in by_pair.values() if {"prefixq", "standalone"} <= p.keys()]
    if ratios:
        print(f"\nprefixq / standalone per pair: decode {', '.join(f'{d:.4f}' for d, _ in ratios)}; "
              f"prefill {', '.join(f'{p:.4f}' for _, p in ratios)}")


if __name__ == "__main__":
    main()
