"""Inclusive and self shares of the functions in a py-spy raw profile, over the stacks that
pass through ``FRAME`` (default: ``submit_many``).

    python benchmarks/results/2026-12-03-session23/profile_summary.py RAW [FRAME]
"""
import sys
from collections import Counter

raw, frame = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "submit_many")
inclusive, own, total = Counter(), Counter(), 0
for line in open(raw):
    stack, _, count = line.rstrip().rpartition(" ")
    if frame not in stack:
        continue
    n, frames = int(count), stack.split(";")
    total += n
    names = {f.split(" (")[0] + " " + f.split(" (")[1].split(":")[0].split("/")[-1] if " (" in f else f
             for f in frames}
    for name in names:
        inclusive[name] += n
    own[frames[-1].split(" (")[0]] += n
print(f"{total} samples through {frame}")
for name, n in inclusive.most_common(40):
    print(f"{100 * n / total:5.1f}%  {name}")
print("-- self")
for name, n in own.most_common(15):
    print(f"{100 * n / total:5.1f}%  {name}")
