"""Diagnostic: where prefixq's workers spend their Python CPU during one fresh burst.

    PYTHONPATH=. python benchmarks/results/2026-12-04-session27/profile_burst.py BURST OUT_DIR

Starts prefixq (a private redis-server, one worker per shard), warms it, then attaches py-spy to
each worker just before the clock starts (``--gil``: only the thread holding the GIL is sampled,
so the samples approximate the workers' Python CPU, not their waiting) and stops it when the
burst's last result is stored. Writes each worker's collapsed stacks to
``OUT_DIR/profile-<shard>.txt`` and prints the run's record, then a summary of the samples by
thread and by the frames it names (see ``CATEGORIES``).
"""
import json
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from benchmarks.routing import Prefixq

RATE = 200
# The first of these found in a stack (innermost frame first) names its category.
CATEGORIES = [
    ("kv events", ("kvevents.py",)),
    ("pull/start", ("rqbatch.py:pull", "rqbatch.py:start", "stealing.py", "ShardQueue.pull", "_decode")),
    ("finish/store", ("rqwrites.py", "rqbatch.py:finish", "finish")),
    ("heartbeat/reap", ("beat", "reap", "recovery.py")),
    ("vLLM output handler", ("output_processor.py", "detokenizer.py", "output_handler")),
    ("vLLM input processing", ("input_processor.py", "renderer", "render_cmpl", "process_inputs")),
    ("vLLM add_request / ZMQ", ("add_request", "core_client.py")),
    ("prefixq job tasks", ("runner.py",)),
    ("asyncio", ("asyncio",)),
]


def categorize(stack: str) -> str:
    frames = stack.split(";")[::-1]
    for frame in frames:
        for name, needles in CATEGORIES:
            if any(n in frame for n in needles):
                return name
    return "other"


def main() -> None:
    burst, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    spies: list[tuple[str, subprocess.Popen[bytes], Path]] = []
    with Prefixq(out) as system:
        def attach() -> None:
            for worker in system.workers:
                path = out / f"profile-{worker.shard}.txt"
                spies.append((worker.shard, subprocess.Popen(
                    ["py-spy", "record", "--pid", str(worker.proc.pid), "--gil", "--threads",
                     "--nonblocking", "--rate", str(RATE), "--format", "raw", "-o", str(path)],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), path))
            time.sleep(2)  # py-spy attached
        record = system.run(burst, "affinity", 32, before_clock=attach)
        for _, spy, _ in spies:
            spy.send_signal(signal.SIGINT)
        for _, spy, _ in spies:
            spy.wait(timeout=60)
    print(json.dumps({k: v for k, v in record.items() if k != "step_trace"}))
    for shard, _, path in spies:
        by_thread, by_category = Counter(), Counter()
        for line in path.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            thread = stack.split(";", 1)[0]
            by_thread[thread] += int(count)
            by_category[categorize(stack)] += int(count)
        total = sum(by_thread.values())
        print(f"== {shard}: {total} samples ({total / RATE:.2f} s of GIL-holding at {RATE} Hz)")
        for name, n in by_thread.most_common(12):
            print(f"  thread {name[:60]:60s} {n:6d}  {n / RATE:.2f} s")
        for name, n in by_category.most_common():
            print(f"  {name:30s} {n:6d}  {n / RATE:.2f} s")


if __name__ == "__main__":
    main()
