"""prefixq against standalone vLLM on the same bursts, in alternating pairs (A B A B ...).

    python -m benchmarks.parity [--burst reuse-256 --burst noreuse-64] [--pairs 3] [--out FILE]
    python -m benchmarks.parity --burst reuse-256 --policy round-robin --pairs 2 --out FILE
    python -m benchmarks.parity --burst noreuse-64 --control --pairs 6 --out FILE

Each run starts its engines fresh (empty prefix caches) and warms them with a few unrelated
prompts.

``--resident`` (experimental) starts both systems once and keeps them up, their engines idle
while the other system runs: standalone vLLM, one process per shard, and prefixq, a private
redis-server and one worker per shard, each engine of each system bound to the same core. Every
burst starts with its system's prefix caches reset (``prefixq reset-cache`` for the workers), and
before the clock starts the harness waits until both systems are quiet (vLLM's engine processes
spin for about a second after their last step). Each record carries the CPU the idle system used
during the burst (``idle_system_cpu_s``). Not the default: it did not narrow the spread between
runs (the same system's burst still varied by 3-16% within a set; see
benchmarks/results/notes.md), and idle vLLM engines still take about 1.5 s of CPU per burst.

``--control`` runs standalone vLLM in prefixq's place (an A/A test): its ratios are how far
apart two identical systems measure under this protocol on this machine, the floor under any
ratio prefixq can show. Not with ``--resident``.

``--counterbalance`` runs prefixq (or the control) first in every second pair (A B, B A, A B,
...), so that anything that favours a pair's first or second run does not lean every ratio the
same way. Each record says which system ran first (``first``). It needs an even ``--pairs``, so
that each system runs first equally often (with 9 pairs, standalone would run first 5 times).
Not with ``--resident``.

``--policy round-robin`` runs both systems with round-robin routing instead of prefix affinity:
the affinity vs round-robin uplift of each system comes from comparing those runs with the
affinity ones (``benchmarks.report`` does).

``--steps`` has every engine of both systems keep a record of its steps (benchmarks/steps.py):
each fresh run's record then carries, per shard, when its first and last steps came, how long
steps took and how many ran with requests waiting (``steps``), and the steps themselves
(``step_trace``). Recording costs a list append per step.

Every run's record also says what the rest of the machine did during the burst (``machine``,
benchmarks/machine.py): the CPU of processes outside the run (the machine's own services,
kernel threads), the busiest of them, and the hypervisor's steal time; and each system's busiest
front-end threads, user and system CPU apart (``frontend_threads``).

Prints one JSON line per run and, per burst, the ratio prefixq / standalone for each pair and
their median. Every run's record names this invocation (``set``), so the report can tell its
pairs from those of another invocation appended to the same file.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from benchmarks.cputime import tree_cpu
from benchmarks.report import emit, new_set
from benchmarks.routing import Prefixq, gc_record
from benchmarks.routing import run as run_fresh_prefixq
from benchmarks.standalone import Standalone, run_standalone
from benchmarks.workloads import load_items
from common.config import env_var


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--burst", action="append")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--policy", default="affinity", choices=["affinity", "round-robin"])
    parser.add_argument("--resident", action="store_true",
                        help="Keep both systems up between bursts (experimental; see above).")
    parser.add_argument("--control", action="store_true",
                        help="Standalone against standalone: the protocol's own spread (see above).")
    parser.add_argument("--counterbalance", action="store_true",
                        help="Run prefixq first in every second pair; needs an even --pairs (see above).")
    parser.add_argument("--steps", action="store_true",
                        help="Record every engine step of both systems (see below).")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.resident and (args.control or args.counterbalance):
        parser.error("--control and --counterbalance run fresh engines; they do not combine with --resident")
    if args.counterbalance and args.pairs % 2:
        parser.error(f"--counterbalance needs an even --pairs (got {args.pairs}): with an odd number, "
                     "one system runs first once more than the other")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.steps:  # read by every engine this process and its workers start
        os.environ[env_var("step_trace")] = "1"
    bursts = args.burst or ["reuse-256", "noreuse-64"]
    sampling = {"max_tokens": args.max_tokens, "temperature": 0.0}
    if not args.resident:
        summary = run_pairs(bursts, args.pairs, args.policy, args.max_tokens, args.out,
                            fresh_pair(sampling, control=args.control, counterbalance=args.counterbalance))
    else:
        with tempfile.TemporaryDirectory(prefix="prefixq-parity-") as logs, \
                Standalone() as standalone, Prefixq(Path(logs)) as prefixq:
            summary = run_pairs(bursts, args.pairs, args.policy, args.max_tokens, args.out,
                                resident_pair(standalone, prefixq, sampling))
        if args.out is not None:  # the workers' GC figures cover every burst they ran
            emit({"system": "prefixq", "kind": "gc", "bursts": bursts, "policy": args.policy,
                  "pairs": args.pairs, **gc_record(prefixq.gc_per_worker)}, args.out)
    print(json.dumps({"summary": summary}, indent=2))


Pair = Callable[[str, str, int, int], tuple[dict[str, Any], dict[str, Any]]]


def run_pairs(bursts: list[str], num_pairs: int, policy: str, max_tokens: int, out: Path | None,
              pair: Pair) -> dict[str, Any]:
    """Run the pairs of every burst; emit each run's record; the ratios per burst."""
    summary, run_set = {}, new_set()
    for burst in bursts:
        ratios = []
        for i in range(num_pairs):
            base, ours = pair(burst, policy, max_tokens, i)
            ratio = ours["requests_per_s"] / base["requests_per_s"]
            ratios.append(ratio)
            for line in (base, ours):
                emit({"burst": burst, "pair": i, "set": run_set, **line}, out)
            print(json.dumps({"burst": burst, "pair": i, "policy": policy, "ratio": round(ratio, 4)}), flush=True)
        summary[burst] = {"ratios": [round(r, 4) for r in ratios],
                          "median": round(statistics.median(ratios), 4), "min": round(min(ratios), 4)}
    return summary


def resident_pair(standalone: Standalone, prefixq: Prefixq, sampling: dict[str, Any]) -> Pair:
    def pair(burst: str, policy: str, max_tokens: int, _: int) -> tuple[dict[str, Any], dict[str, Any]]:
        items = load_items(burst, max_tokens=max_tokens, temperature=0.0)
        everything = standalone.pids + prefixq.pids
        prefixq_idle, standalone_idle = IdleCpu(prefixq.pids), IdleCpu(standalone.pids)
        base = standalone.run(items, sampling, policy,
                              before_clock=lambda: (settle(everything), prefixq_idle.start()))
        base["idle_system_cpu_s"] = round(prefixq_idle.spent(), 2)
        ours = prefixq.run(burst, policy, max_tokens,
                           before_clock=lambda: (settle(everything), standalone_idle.start()))
        ours["idle_system_cpu_s"] = round(standalone_idle.spent(), 2)
        return base, {**ours, "system": "prefixq"}
    return pair


def fresh_pair(sampling: dict[str, Any], control: bool = False, counterbalance: bool = False) -> Pair:
    def pair(burst: str, policy: str, max_tokens: int, index: int) -> tuple[dict[str, Any], dict[str, Any]]:
        items = load_items(burst, max_tokens=max_tokens, temperature=0.0)

        def other_system() -> dict[str, Any]:
            if control:
                return {**run_standalone(items, sampling, policy), "system": "standalone-control"}
            with tempfile.TemporaryDirectory(prefix="prefixq-parity-") as logs:
                return {**run_fresh_prefixq(burst, policy, max_tokens, Path(logs)), "system": "prefixq"}

        other_first = counterbalance and index % 2 == 1
        other = other_system() if other_first else None
        base = run_standalone(items, sampling, policy)
        other = other or other_system()
        first = other["system"] if other_first else "standalone"
        return {**base, "fresh": True, "first": first}, {**other, "fresh": True, "first": first}
    return pair


def settle(pids: list[int], quiet_s: float = 0.5, max_cpu_share: float = 0.02,
           timeout_s: float = 30.0) -> None:
    """Wait until the processes (and their children) are quiet: vLLM's engine processes spin for
    about a second after their last step, which would take CPU from the next burst."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        watch = IdleCpu(pids)
        time.sleep(quiet_s)
        if watch.spent() <= max_cpu_share * quiet_s:
            return


class IdleCpu:
    """CPU seconds some processes (and their children) use from :meth:`start` (or creation) on."""

    def __init__(self, pids: list[int]) -> None:
        self.pids = pids
        self.start()

    def start(self) -> None:
        self.before = [tree_cpu(pid) for pid in self.pids]

    def spent(self) -> float:
        spent = (tree_cpu(pid) - then for pid, then in zip(self.pids, self.before))
        return sum(c.own_s + c.children_s for c in spent)


if __name__ == "__main__":
    main()
