"""How often vLLM's model threads were preempted, prefixq against the baseline in the same pair.

    PYTHONPATH=. python benchmarks/results/2026-12-07-session50/preempt.py [--last-session N]

Reads the files session 41's ``decphase.py`` chooses (prefixq's affinity parity files of sessions
22 to N, 50 if not given, and the A/A files up to N). A run's ``engine_preempted["VLLM::Worker"]``
counts the involuntary context switches of both engines' model threads during the burst; over
the burst's seconds it is a rate, because most of those preemptions are vLLM's own (its gloo
threads wake thousands of times a second in both systems) and a longer run has more of them.
Per burst it prints, for prefixq's pairs and for the A/A pairs: the median ratio of the two runs'
rates (the other system over the baseline), in how many pairs it is above 1, the median excess in
preemptions a second, and the rank correlation of the rate ratio with the pair's seconds ratio
(positive if the run preempted more often also took longer).
"""
import importlib.util
import json
import statistics
import sys

from benchmarks.report import paired_runs

# Session 41's decphase.py chooses the files (it is a script in a results folder, not a module).
_spec = importlib.util.spec_from_file_location(
    "decphase", "benchmarks/results/2026-12-06-session41/decphase.py")
decphase = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(decphase)
# Session 48's slowness.py has the rank correlation.
_spec = importlib.util.spec_from_file_location(
    "slowness", "benchmarks/results/2026-12-07-session48/slowness.py")
slowness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(slowness)


def rate(run: dict) -> float | None:
    """The model threads' preemptions a second of burst (None if the run did not count them)."""
    count = (run.get("engine_preempted") or {}).get("VLLM::Worker")
    return None if count is None else count / run["seconds"]


def compare(paths: list[str], other: str) -> str:
    rows = [json.loads(line) for path in paths for line in open(path)]
    ratios, excess, seconds = [], [], []
    for runs in paired_runs(rows).values():
        if other not in runs or "standalone" not in runs:
            continue
        ours, base = rate(runs[other]), rate(runs["standalone"])
        if ours is None or base is None:
            continue
        ratios.append(ours / base)
        excess.append(ours - base)
        seconds.append(runs[other]["seconds"] / runs["standalone"]["seconds"])
    if len(ratios) < 3:
        return f"{other}: {len(ratios)} pairs"
    return (f"{other}: {len(ratios)} pairs, preemptions a second {statistics.median(ratios):.4f} "
            f"of the baseline's (above 1 in {sum(r > 1 for r in ratios)}), "
            f"{statistics.median(excess):+.1f} a second; "
            f"rank correlation with the seconds ratio {slowness.correlation(ratios, seconds):.3f}")


def main() -> None:
    last = int(sys.argv[sys.argv.index("--last-session") + 1]) if "--last-session" in sys.argv else 50
    for burst in ("noreuse", "reuse"):
        parity, control = decphase.files(burst, last)
        print(burst)
        print("  " + compare(parity, "prefixq"))
        print("  " + compare(control, "standalone-control"))


if __name__ == "__main__":
    main()
