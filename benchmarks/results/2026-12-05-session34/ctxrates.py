"""Context switches and CPU per second for each thread name, from ctxsample.py's samples,
over the 5 s intervals in which both engines' models were busy (their threads used at least
1.8 of the two cores).

    python ctxrates.py ctx-rr.jsonl.gz                 # split by system (prefixq: its workers run)
    python ctxrates.py ctx-ab.jsonl.gz ab-idle-gloo-noreuse.jsonl   # split by A/B variant

vol/s: voluntary switches (the thread slept, so it woke up that often); invol/s: involuntary
ones (it was preempted); cpu%: percent of one core.
"""

import collections
import datetime
import gzip
import json
import sys

TICKS = 100  # clock ticks per second in /proc's utime and stime


def samples(path: str) -> list[dict]:
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return [json.loads(line) for line in f]


def windows(path: str, day: datetime.date) -> list[tuple[float, float, str]]:
    """(start, end, variant) of each A/B run: it ended at its 't' (UTC, on ``day``) after 'seconds'."""
    out = []
    for line in open(path):
        run = json.loads(line)
        clock = datetime.time.fromisoformat(run["t"])
        end = datetime.datetime.combine(day, clock, tzinfo=datetime.timezone.utc).timestamp()
        out.append((end - run["seconds"], end, run["variant"]))
    return out


def main() -> None:
    rows = samples(sys.argv[1])
    day = datetime.datetime.fromtimestamp(rows[0]["t"], datetime.timezone.utc).date()  # the samples' day
    runs = windows(sys.argv[2], day) if len(sys.argv) > 2 else None
    totals: dict[tuple[str, str, str], list[int]] = collections.defaultdict(lambda: [0, 0, 0])
    seconds: collections.Counter[str] = collections.Counter()
    for before, after in zip(rows, rows[1:]):
        dt = after["t"] - before["t"]
        if runs is None:
            group = "prefixq" if any("producer.cli worker" in t[4] for t in after["threads"]) else "standalone"
        else:
            inside = [v for start, end, v in runs if start <= before["t"] and after["t"] <= end]
            if not inside:
                continue
            group = inside[0]
        old = {(t[0], t[1]): t for t in before["threads"]}
        deltas = [(t, old[(t[0], t[1])]) for t in after["threads"] if (t[0], t[1]) in old]
        model = sum(t[7] - o[7] for t, o in deltas if t[2].startswith("VLLM::Worker"))
        if model / TICKS < 1.8 * dt:
            continue
        seconds[group] += dt
        for t, o in deltas:
            kind = "worker" if "producer.cli worker" in t[4] else t[2][:16]
            x = totals[(group, kind, t[3])]
            x[0] += t[5] - o[5]
            x[1] += t[6] - o[6]
            x[2] += t[7] - o[7]
    print("busy seconds:", {g: round(s, 1) for g, s in seconds.items()})
    for key in sorted(totals, key=lambda k: (k[0], -sum(totals[k][:2]))):
        vol, invol, cpu = totals[key]
        s = seconds[key[0]]
        if (vol + invol) / s >= 1 or cpu / s >= 0.05:
            print(f"{key[0]:10s} {key[1]:16s} {key[2]:16s} vol/s {vol / s:7.1f}  invol/s {invol / s:6.1f}  "
                  f"cpu% {100 * cpu / TICKS / s:6.2f}")


if __name__ == "__main__":
    main()
