"""Decode steps before a shard's first request finished, against those after, paired runs.

    PYTHONPATH=. python benchmarks/results/2026-12-06-session41/decphase.py [--by-session] [--last-session N]

Reads the step traces (``--steps``) of every prefixq affinity parity file of sessions 22 to N
(41 if not given; ``parity-{noreuse,reuse}{,-2,-3,-4}-steps.jsonl``) and every A/A file
(``control-*-steps.jsonl``) of the sessions up to N.
For each shard of each run, a decode-only step (no prompt tokens) counts as "peak" while the
shard runs as many requests as it ever does (none has finished yet), and as "after" once one
has: from then on the worker stores results, redis-server writes them and the producer reads
them back, on the cores the models run on. Per pair and shard it takes the other system's
median peak step and mean after step over the baseline's, and its prompt steps' time per prompt
token (steps of over 500 prompt tokens, as session 26's ``stepspeed.py``) over the baseline's,
and prints, per burst and system, the median of each ratio and how many are above 1 (the
other system's steps the slower). A step's time is the gap between the front end's records of
consecutive steps. ``--by-session`` also prints prefixq's after-the-first-finish ratio session by
session.
"""
import glob
import json
import statistics
import sys
from pathlib import Path

from benchmarks.report import paired_runs, session_number

RESULTS = "benchmarks/results"


def phases(record: dict) -> tuple[list, list, list]:
    """Per shard: the median peak decode step, the mean decode step after the first finish and
    the prompt steps' seconds per prompt token."""
    peak_steps, after_steps, prefill = [], [], []
    for _shard, steps in sorted(record["step_trace"].items()):
        peak = max(s[1] for s in steps)
        previous, before, after, prefill_s, prefill_tokens = 0.0, [], [], 0.0, 0
        for t, running, _waiting, prompt, generated in (s[:5] for s in steps):
            took, previous = t - previous, t
            if prompt == 0 and generated > 0:
                (before if running == peak else after).append(took)
            elif prompt > 500:
                prefill_s, prefill_tokens = prefill_s + took, prefill_tokens + prompt
        peak_steps.append(statistics.median(before) if before else None)
        after_steps.append(statistics.fmean(after) if after else None)
        prefill.append(prefill_s / prefill_tokens if prefill_tokens else None)
    return peak_steps, after_steps, prefill


def compare(paths: list[str], other: str, by_session: bool = False) -> str:
    ratios: tuple[list, list, list] = ([], [], [])
    after_by_path = []
    for path in paths:
        with open(path) as f:
            rows = [record for record in map(json.loads, f) if record.get("step_trace") and "pair" in record]
        for pair in paired_runs(rows).values():
            if not {"standalone", other} <= pair.keys():
                continue
            base, them = phases(pair["standalone"]), phases(pair[other])
            for mine, theirs, out in zip(base, them, ratios):
                out.extend(y / x for x, y in zip(mine, theirs) if x and y)
            after_by_path.extend((path, y / x) for x, y in zip(base[1], them[1]) if x and y)

    def line(ratios: list[float]) -> str:
        return f"{statistics.median(ratios):.4f} (above 1 in {sum(r > 1 for r in ratios)} of {len(ratios)})"

    if by_session:
        for session in sorted({path.split("/")[-2] for path in paths}):
            ratios_of = [r for key, r in after_by_path if key.split("/")[-2] == session]
            print(f"    {session}: after the first finish {line(ratios_of)}")
    return (f"{other}, {len(paths)} files: decode steps at peak {line(ratios[0])}; after the first "
            f"finish {line(ratios[1])}; prompt steps per token {line(ratios[2])}")


def files(burst: str, last: int) -> tuple[list[str], list[str]]:
    """prefixq's affinity parity files of sessions 22 to ``last`` and the A/A files up to it, for
    ``burst`` ("noreuse" or "reuse"); session 48's ``slowness.py`` reads the same."""
    folders = [f for f in glob.glob(f"{RESULTS}/2026-*-session*") if 22 <= session_number(Path(f)) <= last]
    parity = sorted({p for f in folders for n in ("", "-2", "-3", "-4")
                     for p in glob.glob(f"{f}/parity-{burst}{n}-steps.jsonl")})
    control = sorted(p for f in glob.glob(f"{RESULTS}/*/") if session_number(Path(f)) <= last
                     for p in glob.glob(f"{f}control-{burst}*-steps.jsonl"))
    return parity, control


def main() -> None:
    last = int(sys.argv[sys.argv.index("--last-session") + 1]) if "--last-session" in sys.argv else 41
    for burst in ("noreuse", "reuse"):
        parity, control = files(burst, last)
        print(burst)
        print("  " + compare(parity, "prefixq", by_session="--by-session" in sys.argv))
        print("  " + compare(control, "standalone-control"))


if __name__ == "__main__":
    main()
