"""Were the worker's costliest collections switched out mid-walk? (The first parity records with
``max_cpu_switches`` and ``switched_collections``, from ``worker/gcstats.py`` since 611c420.)

    python benchmarks/results/2026-12-07-session55/gcswitch.py FILE...

For every worker-burst in the files (``gc_per_worker``) that has the switch counts, prints its
costliest collection (the collector's CPU, the wall-clock it took, its generation, what it freed,
and the OS's involuntary switches during it), and how many of the burst's collections were
switched out at least once. Then, over all worker-bursts: how many costliest collections above
1 and 2 ms of CPU were switched out, against how many of those at most 1 ms were; and the share
of all collections that were switched out (what a collection picked at random would show).
"""
import json
import sys


def bursts(paths: list[str]):
    """(file, system, pair, worker summary) for every worker-burst with the switch counts."""
    for path in paths:
        with open(path) as f:
            for record in map(json.loads, f):
                for worker in record.get("gc_per_worker") or []:
                    if "max_cpu_switches" in worker:
                        yield path, record.get("system"), record.get("pair"), worker


def main(paths: list[str]) -> None:
    rows = list(bursts(paths))
    if not rows:
        print("no worker-burst with switch counts")
        return
    for path, system, pair, w in rows:
        print(f"{path.rsplit('/', 1)[-1]} pair {pair} {system}: costliest {w['max_cpu_ms']:.2f} ms CPU "
              f"(gen {w['max_cpu_generation']}, freed {w['max_cpu_collected']}, "
              f"switches {w['max_cpu_switches']}); longest wall {w['max_pause_ms']:.2f} ms; "
              f"switched {w['switched_collections']} of {w['num_collections']}")
    for label, low, high in (("at most 1", -1.0, 1.0), ("above 1, at most 2", 1.0, 2.0),
                             ("above 2", 2.0, float("inf"))):
        group = [w for *_, w in rows if low < w["max_cpu_ms"] <= high]
        switched = sum(w["max_cpu_switches"] > 0 for w in group)
        print(f"costliest collection {label} ms of CPU: {len(group)} worker-bursts, "
              f"{switched} of them switched out")
    switched = sum(w["switched_collections"] for *_, w in rows)
    total = sum(w["num_collections"] for *_, w in rows)
    print(f"all collections: {switched} of {total} switched out ({100 * switched / max(total, 1):.1f}%)")


if __name__ == "__main__":
    main(sys.argv[1:])
