"""Per pair and median: ratio, burst seconds, CPU outside the engines, model-thread preemptions
per second, collector CPU, from benchmarks.parity's JSON lines.

    python summarize.py parity-noreuse-a7c3b2e.jsonl [...]
"""
import json
import statistics
import sys
from collections import defaultdict


def main() -> None:
    for path in sys.argv[1:]:
        runs = defaultdict(dict)
        ratios = {}
        for line in open(path):
            r = json.loads(line)
            if "ratio" in r:
                ratios[r["pair"]] = r["ratio"]
            elif "system" in r:
                runs[r["pair"]][r["system"]] = r
        print(f"== {path}")
        cols = defaultdict(lambda: defaultdict(list))
        for pair in sorted(runs):
            if len(runs[pair]) == 2:  # throughput ratio (benchmarks.parity prints it, not kept)
                ratios[pair] = round(runs[pair]["standalone"]["seconds"] / runs[pair]["prefixq"]["seconds"], 4)
            line = [f"pair {pair} ratio {ratios.get(pair, float('nan')):.4f}"]
            for system in ("prefixq", "standalone"):
                r = runs[pair].get(system)
                if r is None:
                    continue
                cpu = r["cpu_s"]
                outside = sum(v for k, v in cpu.items() if k != "engine")
                preempted = r["engine_preempted"].get("VLLM::Worker", 0) / r["seconds"]
                c = cols[system]
                c["seconds"].append(r["seconds"]); c["outside"].append(outside)
                c["engine"].append(cpu["engine"]); c["preempted"].append(preempted)
                c["cached"].append(r["cached_fraction"])
                gc = ""
                if "gc_per_worker" in r:
                    gcmax = max(w["max_cpu_ms"] for w in r["gc_per_worker"])
                    c["gc_cpu"].append(gcmax); c["gc_wall"].append(r["gc_max_pause_ms"])
                    gc = f" gc cpu {gcmax:.2f} wall {r['gc_max_pause_ms']:.2f} ms"
                line.append(f"{system} {r['seconds']:.2f} s engine {cpu['engine']:.1f} outside {outside:.3f} s "
                            f"preempted {preempted:.0f}/s{gc}")
            print("  " + "; ".join(line))
        vals = [ratios[p] for p in sorted(ratios)]
        if vals:
            print(f"  ratios median {statistics.median(vals):.4f}, min {min(vals):.4f}, "
                  f"below 0.99: {sum(v < 0.99 for v in vals)} of {len(vals)}")
        for system, c in cols.items():
            med = {k: statistics.median(v) for k, v in c.items()}
            extra = f", gc max cpu {max(c['gc_cpu']):.2f} ms, wall {max(c['gc_wall']):.2f} ms" if c["gc_cpu"] else ""
            print(f"  {system}: median burst {med['seconds']:.2f} s, engine CPU {med['engine']:.1f} s, "
                  f"outside {med['outside']:.3f} s, preempted {med['preempted']:.0f}/s, "
                  f"cached {med['cached']:.4f}{extra}")
        if len(cols) == 2:
            excess = (statistics.median(cols["prefixq"]["outside"]) - statistics.median(cols["standalone"]["outside"])) \
                / (2 * statistics.median(cols["prefixq"]["seconds"]))
            print(f"  CPU outside the engines, excess of prefixq: {100 * excess:.2f}% of the two cores")


if __name__ == "__main__":
    main()
