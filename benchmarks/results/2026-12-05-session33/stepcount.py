"""How many engine steps each system ran per shard and burst, over every affinity parity file
with step traces (sessions 22 on), and what an extra step would cost.

A step record with nothing running, no prompt finished and no token generated is what vLLM's
stat logger reports once after a shard's last request has finished; it is counted apart (it
comes after the shard's last output, so it cannot delay the clock). The cost of a step is
fitted on decode-only steps of this session's and session 32's files: seconds = a + b * running.

    python benchmarks/results/2026-12-05-session33/stepcount.py
"""

import collections
import glob
import json

FILES = sorted(glob.glob("benchmarks/results/2026-12-0[345]-session*/parity-*steps.jsonl"))


def empty(step: list) -> bool:
    return step[1] == 0 and step[3] == 0 and step[4] == 0


def main() -> None:
    runs = collections.Counter()
    empties = collections.Counter()
    real = collections.defaultdict(list)
    for name in FILES:
        for line in open(name):
            rec = json.loads(line)
            if not rec.get("step_trace") or rec.get("policy", "affinity") != "affinity":
                continue
            key = (rec["burst"], rec["system"])
            for steps in rec["step_trace"].values():
                runs[key] += 1
                empties[key] += sum(1 for s in steps if empty(s))
                real[key].append(sum(1 for s in steps if not empty(s)))
    for key in sorted(runs):
        print(f"{key[0]:<11} {key[1]:<10} shard-runs {runs[key]:>3}  steps {sum(real[key]) / len(real[key]):.2f}"
              f"  empty records after the last request {empties[key]}")
    xs, ys = [], []
    for name in (n for n in FILES if "session32" in n or "session33" in n):
        for line in open(name):
            rec = json.loads(line)
            for steps in (rec.get("step_trace") or {}).values():
                for a, b in zip(steps, steps[1:]):
                    if a[3] == 0 and b[3] == 0 and not empty(b):
                        xs.append(b[1])
                        ys.append(b[0] - a[0])
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    print(f"decode-only steps ({len(xs)}): seconds = {my - slope * mx:.4f} + {slope:.5f} * running")


if __name__ == "__main__":
    main()
