"""Do middle-generation collections of an unchanging heap vary in cost on their own?

The parity records show rare middle-generation collections in the worker that cost 5-15 times
the usual CPU while freeing nothing (a median 0.45 ms, at times 6-16 ms). This probe asks whether
the machine alone produces such outliers: after ``gc.freeze()`` it keeps a fixed set of live
container objects, then walks them again and again with ``gc.collect(2)`` (each collection moves
its survivors up a generation, so only the oldest one can be walked twice; after the freeze it
holds nothing but these objects, as the middle generation holds a burst's), timing each (the
collector's thread CPU and wall-clock, as ``worker/gcstats.py`` does), with a pause between
collections in which the process sleeps and the OS runs whatever else is busy. It also counts the
thread's minor page faults and involuntary context switches during each collection.

No worker, engine or Redis here: only the collector and the machine. ``--busy N`` starts N
processes that copy 64 MB buffers back and forth for the probe's whole run, keeping cores and
caches busy the way two engines do (memory-bound work, one process a core); without it the probe
sees whatever else the machine runs.

    python gcprobe.py [--objects 5000] [--collections 3000] [--sleep-ms 20] [--busy 2]
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing
import resource
import statistics
import time


def live_heap(n: int) -> list[dict]:
    """n small dicts, each holding a list: tracked containers the collector must walk."""
    return [{"id": i, "tokens": [i, i + 1, i + 2]} for i in range(n)]


def copy_forever() -> None:
    """Busy load: memory-bound copying that evicts other processes' cache lines."""
    src, dst = bytearray(64 << 20), bytearray(64 << 20)
    while True:
        dst[:] = src
        src[:] = dst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objects", type=int, default=5000)
    ap.add_argument("--collections", type=int, default=3000)
    ap.add_argument("--sleep-ms", type=float, default=20.0)
    ap.add_argument("--busy", type=int, default=0, help="busy processes to run beside the probe")
    args = ap.parse_args()
    load = [multiprocessing.Process(target=copy_forever, daemon=True) for _ in range(args.busy)]
    for p in load:
        p.start()
    try:
        probe(args)
    finally:
        for p in load:
            p.terminate()


def probe(args: argparse.Namespace) -> None:
    """Walk one unchanging heap ``args.collections`` times and print how each walk went."""
    gc.collect()
    gc.freeze()
    gc.disable()  # only the probe's own collections, at the probe's own times
    heap = live_heap(args.objects)
    gc.collect(2)  # the heap now sits in the oldest generation, alone

    cpu, wall, faults, switches = [], [], [], []
    for _ in range(args.collections):
        time.sleep(args.sleep_ms / 1000)
        before = resource.getrusage(resource.RUSAGE_THREAD)
        c0, w0 = time.thread_time(), time.perf_counter()
        gc.collect(2)
        c1, w1 = time.thread_time(), time.perf_counter()
        after = resource.getrusage(resource.RUSAGE_THREAD)
        cpu.append((c1 - c0) * 1000)
        wall.append((w1 - w0) * 1000)
        faults.append(after.ru_minflt - before.ru_minflt)
        switches.append(after.ru_nivcsw - before.ru_nivcsw)
    assert len(heap) == args.objects  # the heap stayed alive throughout

    med = statistics.median(cpu)
    q = statistics.quantiles(cpu, n=100)
    slow = [c > 4 * med for c in cpu]
    switched = [s > 0 for s in switches]
    print(f"{args.collections} collections of {args.objects} live dicts (+ their lists), "
          f"{args.sleep_ms:g} ms apart, {args.busy} busy processes beside")
    print(f"collector CPU ms: median {med:.3f}, p99 {q[98]:.3f}, max {max(cpu):.3f}; "
          f"wall ms: median {statistics.median(wall):.3f}, max {max(wall):.3f}")
    print(f"above 4x the median CPU: {sum(slow)} ({100 * sum(slow) / len(cpu):.2f}%), the largest "
          f"{sorted(round(c, 2) for c, s in zip(cpu, slow) if s)[-6:]}")
    for name, group in (("with", True), ("without", False)):
        idx = [i for i, s in enumerate(switched) if s == group]
        n_slow = sum(slow[i] for i in idx)
        print(f"  {name} an involuntary switch: {len(idx)} collections, {n_slow} above 4x"
              + (f", CPU median {statistics.median(cpu[i] for i in idx):.3f} ms" if idx else ""))
    print(f"  with a minor page fault: {sum(f > 0 for f in faults)} collections, "
          f"{sum(s and f > 0 for s, f in zip(slow, faults))} of them above 4x")


if __name__ == "__main__":
    main()
