"""Diagnostic: who wakes up on the machine during one fresh burst of each system.

    PYTHONPATH=. python benchmarks/results/2026-12-04-session26/wakeups.py BURST OUT_DIR [ROUNDS]

For every thread of every process on the machine, reads its CPU (utime + stime), its voluntary
context switches (each one a sleep, so each later wake-up: on a core whose model thread is busy,
a wake-up preempts it) and its involuntary ones (times it was preempted), just before each
system's clock starts and once its burst is over; prints the differences grouped by process and
thread name, per system, busiest first. The harness's own process (routing, rendering and
tokenizing before the clock, reading results after) is left out. Standalone vLLM and prefixq
alternate, ``ROUNDS`` times each (default 1), each on freshly started engines.
"""
import json
import os
import re
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from benchmarks.routing import Prefixq
from benchmarks.standalone import Standalone
from benchmarks.workloads import load_items

TICK = os.sysconf("SC_CLK_TCK")
Snapshot = dict[tuple[int, int], tuple[str, str, float, int, int]]
STAT_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def machine() -> dict[str, float]:
    """The machine's CPU seconds by kind (/proc/stat, both cores) and softirqs by kind."""
    fields = open("/proc/stat").readline().split()[1:1 + len(STAT_FIELDS)]
    out = {k: int(v) / TICK for k, v in zip(STAT_FIELDS, fields)}
    for line in open("/proc/softirqs").read().splitlines()[1:]:
        name, *counts = line.split()
        out["softirq_" + name.rstrip(":")] = sum(map(int, counts))
    return out


def snapshot() -> Snapshot:
    """(pid, tid) -> (process name, thread name, CPU s, voluntary, involuntary switches)."""
    out: Snapshot = {}
    me = os.getpid()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if int(pid) == me:
            continue
        try:
            pname = Path(f"/proc/{pid}/comm").read_text().strip()
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            base = f"/proc/{pid}/task/{tid}"
            try:
                stat, status = Path(base, "stat").read_text(), Path(base, "status").read_text()
            except OSError:
                continue
            name = stat[stat.index("(") + 1:stat.rindex(")")]
            fields = stat[stat.rindex(")") + 2:].split()
            vol = int(re.search(r"^voluntary_ctxt_switches:\s+(\d+)", status, re.M).group(1))
            invol = int(re.search(r"^nonvoluntary_ctxt_switches:\s+(\d+)", status, re.M).group(1))
            out[(int(pid), int(tid))] = (pname, name, (int(fields[11]) + int(fields[12])) / TICK, vol, invol)
    return out


def differences(before: Snapshot, after: Snapshot) -> list[tuple[str, str, int, float, int, int]]:
    """Per (process name, thread name): threads, CPU s, wake-ups, preemptions; busiest first.
    Kernel worker threads rename themselves per work item: grouped under their prefix."""
    groups: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0.0, 0, 0])
    for key, (pname, name, cpu, vol, invol) in after.items():
        _, _, cpu0, vol0, invol0 = before.get(key, (pname, name, 0.0, 0, 0))
        if pname.startswith("kworker"):
            pname = name = "kworker"
        g = groups[(pname, re.sub(r"\d+$", "#", name))]
        g[0] += 1
        g[1] += cpu - cpu0
        g[2] += vol - vol0
        g[3] += invol - invol0
    rows = [(p, t, int(g[0]), round(g[1], 2), int(g[2]), int(g[3])) for (p, t), g in groups.items()
            if g[1] > 0 or g[2] > 0]
    return sorted(rows, key=lambda r: (-r[4], -r[3]))


def report(system: str, seconds: float, rows: list[tuple[str, str, int, float, int, int]],
           stat: tuple[dict[str, float], dict[str, float]]) -> dict:
    kinds = {k: round(stat[1][k] - stat[0][k], 2) for k in stat[0]}
    print(f"== {system}: burst {seconds:.2f} s; wake-ups {sum(r[4] for r in rows)}, "
          f"CPU {sum(r[3] for r in rows):.2f} s")
    print("  machine:", kinds)
    print(f"  {'process':18} {'thread':18} {'n':>3} {'cpu_s':>7} {'wakeups':>8} {'preempted':>9}")
    for p, t, n, cpu, vol, invol in rows[:40]:
        print(f"  {p[:18]:18} {t[:18]:18} {n:3d} {cpu:7.2f} {vol:8d} {invol:9d}")
    return {"system": system, "seconds": seconds, "machine": kinds, "threads": rows}


def main() -> None:
    burst, out = sys.argv[1], Path(sys.argv[2])
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    out.mkdir(parents=True, exist_ok=True)
    items = load_items(burst, max_tokens=32, temperature=0.0)
    sampling = {"max_tokens": 32, "temperature": 0.0}
    records = []

    def take(taken: list[Snapshot], stat: list[dict[str, float]]) -> None:
        stat.append(machine())
        taken.append(snapshot())

    for _ in range(rounds):
        taken: list[Snapshot] = []
        stat: list[dict[str, float]] = []
        with Standalone() as engines:
            record = engines.run(items, sampling, before_clock=lambda: take(taken, stat))
            take(taken, stat)
        records.append(report("standalone", record["seconds"], differences(*taken), (stat[0], stat[1])))
        taken, stat = [], []
        with tempfile.TemporaryDirectory(prefix="prefixq-wakeups-") as logs, Prefixq(Path(logs)) as system:
            record = system.run(burst, "affinity", 32, before_clock=lambda: take(taken, stat))
            take(taken, stat)
        records.append(report("prefixq", record["seconds"], differences(*taken), (stat[0], stat[1])))
    with open(out / f"wakeups-{Path(burst).stem}.jsonl", "a") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
