"""How long a run's slowness lasts and how far it reaches: both shards, within a run, across runs.

    PYTHONPATH=. python benchmarks/results/2026-12-07-session48/slowness.py [--last-session N]

Reads the same files as session 41's ``decphase.py``: every prefixq affinity parity file of
sessions 22 to N (48 if not given; ``parity-{noreuse,reuse}{,-2,-3,-4}-steps.jsonl``) and every
A/A file (``control-*-steps.jsonl``) up to N. A step's time is the gap between the front end's
records of consecutive steps, and in a pair each shard does the same tokens in both runs. Per
burst and system it prints (correlations are rank correlations):

- **Shards together**: per pair and shard, the other system's prompt steps' time per prompt
  token over the baseline's (the first step left out: its size varies with when the requests
  arrive), as a log; the correlation between the two shards over the pairs, and the spread
  split into a part both shards share (their covariance) and a part each has alone. Each
  engine is bound to its own core.
- **Within a run**: per pair and shard, the same log ratio over the first half of the shard's
  prompt steps, over the second half, and over its decode steps (mean step). It correlates the
  two shards over the same half (the same time, two cores), each shard's two halves (the same
  core, some 20 s apart), and the second half with the decode steps.
- **Across runs**: each run's prompt time per token (both shards) against its file's median, in
  the order the runs ran; the correlation of each run with the run k places later (k = 1, 2,
  3), pooled over the files. Runs follow each other every 2-4 minutes (fresh engines start
  between them).
"""
import importlib.util
import json
import math
import statistics
import sys

from benchmarks.report import paired_runs

# Session 41's decphase.py chooses the files (it is a script in a results folder, not a module).
_spec = importlib.util.spec_from_file_location(
    "decphase", "benchmarks/results/2026-12-06-session41/decphase.py")
decphase = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(decphase)


def ranks(values: list[float]) -> list[int]:
    order = sorted(range(len(values)), key=values.__getitem__)
    out = [0] * len(values)
    for rank, i in enumerate(order):
        out[i] = rank
    return out


def correlation(xs: list[float], ys: list[float]) -> float:
    """Spearman's: Pearson's over the ranks, so that a few runs far out do not decide it."""
    return statistics.correlation(ranks(xs), ranks(ys))


def step_times(steps: list[list]) -> tuple[float, float, float, float]:
    """One shard's steps: seconds per prompt token over its prompt steps, the first half of them
    and the second half (the first step left out), and its mean decode step."""
    previous, prompt, decode = 0.0, [], []
    for t, _running, _waiting, prompt_tokens, generated in (s[:5] for s in steps):
        took, previous = t - previous, t
        if prompt_tokens > 0:
            prompt.append((took, prompt_tokens))
        elif generated > 0:
            decode.append(took)
    prompt = prompt[1:]
    half = len(prompt) // 2

    def per_token(part: list) -> float:
        return sum(t for t, _ in part) / sum(n for _, n in part) if part else 0.0

    return per_token(prompt), per_token(prompt[:half]), per_token(prompt[half:]), (
        statistics.fmean(decode) if decode else 0.0)


def compare(paths: list[str], other: str) -> list[str]:
    pairs, sequences = [], []   # per pair, per shard: log ratios of step_times' four figures
    for path in paths:
        with open(path) as f:
            rows = [r for r in map(json.loads, f) if r.get("step_trace") and "pair" in r]
        in_order = [math.log(sum(step_times(s)[0] for s in r["step_trace"].values())) for r in rows]
        middle = statistics.median(in_order)
        sequences.append([x - middle for x in in_order])
        for pair in paired_runs(rows).values():
            if not {"standalone", other} <= pair.keys():
                continue
            base, them = pair["standalone"]["step_trace"], pair[other]["step_trace"]
            logs = [[math.log(y / x) if x > 0 and y > 0 else None
                     for x, y in zip(step_times(base[shard]), step_times(them[shard]))]
                    for shard in sorted(base)]
            if len(logs) == 2 and None not in logs[0] + logs[1]:
                pairs.append(logs)

    def figure(shard: int, i: int) -> list[float]:
        return [p[shard][i] for p in pairs]

    first, second = figure(0, 0), figure(1, 0)
    shared = statistics.covariance(first, second)
    alone = (statistics.variance(first) + statistics.variance(second)) / 2 - shared
    decode = correlation(figure(0, 2) + figure(1, 2), figure(0, 3) + figure(1, 3))
    return [f"{other}, {len(paths)} files, {len(pairs)} pairs",
            f"  shards together: correlation {correlation(first, second):.3f}; sd {100 * statistics.stdev(first):.1f}% "
            f"and {100 * statistics.stdev(second):.1f}%, shared {100 * math.sqrt(max(shared, 0)):.1f}%, "
            f"each alone {100 * math.sqrt(max(alone, 0)):.1f}%",
            f"  same half, the two shards: first {correlation(figure(0, 1), figure(1, 1)):.3f}, "
            f"second {correlation(figure(0, 2), figure(1, 2)):.3f}",
            f"  same shard, the two halves: gpu0 {correlation(figure(0, 1), figure(0, 2)):.3f}, "
            f"gpu1 {correlation(figure(1, 1), figure(1, 2)):.3f}; second half with the decode steps {decode:.3f}",
            "  across runs (run with the run k later): " + lagged(sequences)]


def lagged(sequences: list[list[float]]) -> str:
    out = []
    for k in (1, 2, 3):
        xs = [x for s in sequences for x in s[:-k]]
        ys = [y for s in sequences for y in s[k:]]
        out.append(f"k={k} {correlation(xs, ys):.3f} ({len(xs)})")
    return ", ".join(out)


def main() -> None:
    last = int(sys.argv[sys.argv.index("--last-session") + 1]) if "--last-session" in sys.argv else 48
    for burst in ("noreuse", "reuse"):
        parity, control = decphase.files(burst, last)
        print(burst)
        for line in compare(parity, "prefixq") + compare(control, "standalone-control"):
            print("  " + line)


if __name__ == "__main__":
    main()
