"""How fast each of the two cores runs the same Python loop, both cores busy at once (as in a
burst, where each engine spins on its core): rounds of a fixed loop, one process pinned to each
core, and the interrupts each core served meanwhile (/proc/interrupts).

    python benchmarks/results/2026-12-05-session31/corespeed.py [ROUNDS]
"""

import json
import multiprocessing as mp
import os
import sys
import time

LOOPS = 100_000_000


def interrupts() -> list[int]:
    per_cpu = [0, 0]
    with open("/proc/interrupts") as f:
        next(f)
        for line in f:
            fields = line.split()[1:3]
            for cpu, value in enumerate(fields):
                if value.isdigit():
                    per_cpu[cpu] += int(value)
    return per_cpu


def spin(core: int, out: "mp.Queue[tuple[int, float, float]]") -> None:
    os.sched_setaffinity(0, {core})
    t0, c0 = time.perf_counter(), time.process_time()
    n = 0
    for _ in range(LOOPS):
        n += 1
    out.put((core, time.perf_counter() - t0, time.process_time() - c0))


def main(rounds: int) -> None:
    for r in range(rounds):
        before = interrupts()
        out: "mp.Queue[tuple[int, float, float]]" = mp.Queue()
        procs = [mp.Process(target=spin, args=(core, out)) for core in (0, 1)]
        for p in procs:
            p.start()
        results = sorted(out.get() for _ in procs)
        for p in procs:
            p.join()
        after = interrupts()
        print(json.dumps({"round": r, "wall_s": [round(w, 3) for _, w, _ in results],
                          "cpu_s": [round(c, 3) for _, _, c in results],
                          "interrupts": [a - b for a, b in zip(after, before)]}), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 6)
