"""prefixq and standalone vLLM on the same one-shard burst at the same time, one core each.

    python -m benchmarks.sidebyside [--burst reuse-256 --documents 32] [--pairs 4] [--out FILE]
    python -m benchmarks.sidebyside --control ...   # standalone against standalone

A diagnostic beside ``benchmarks.parity``, not the protocol. Run one after the other, the same
system's burst varies by 10-15% on a shared machine, which hides a gap of a few percent. Here
both systems run the burst at once: one shard each (every request on it), the standalone engine
bound to one core and prefixq's worker to the other, swapping cores from pair to pair, the two
systems released together (prefixq's clock then starts at its first enqueue, once its producer
has rendered, tokenized and routed the burst). A slowdown of the whole machine then slows both, and the ratio
prefixq / standalone of each pair reflects only what differs between them.

What the two share: the memory bus and caches, and the cores on which everything that is not an
engine runs (both front ends, prefixq's redis-server, the harness and its producer). prefixq's
work outside its engine thus slows the standalone engine about as much as its own, so this ratio
understates that part of prefixq's cost (about 1% of two cores, per ``benchmarks.parity``'s CPU
figures). Whichever system finishes first leaves the other the machine for the rest of its burst.

``--control`` runs a second standalone system in prefixq's place: its ratios show how far apart
two identical systems measure this way (the method's own spread and any difference between the
cores).

Each pair starts both systems fresh (empty prefix caches) and warms them with a few unrelated
prompts. Prints one JSON line per run, then the ratios and their median.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from benchmarks.report import emit, new_set
from benchmarks.routing import Prefixq
from benchmarks.standalone import Standalone
from benchmarks.workloads import load_items

SHARD = "gpu0"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--burst", default="reuse-256")
    parser.add_argument("--documents", type=int, default=32,
                        help="Only the burst's first N documents (default 32: one shard's share).")
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--control", action="store_true", help="Standalone against standalone.")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ["PREFIXQ_SHARDS"] = SHARD  # both systems: one shard, every request on it
    ratios, run_set = [], new_set()
    for i in range(args.pairs):
        base, other = run_pair(args.burst, args.documents, args.max_tokens, swap=i % 2 == 1,
                               control=args.control)
        ratio = other["requests_per_s"] / base["requests_per_s"]
        ratios.append(ratio)
        for record in (base, other):
            emit({"burst": args.burst, "documents": args.documents, "pair": i, "set": run_set,
                  "side_by_side": True, **record}, args.out)
        print(json.dumps({"pair": i, "ratio": round(ratio, 4)}), flush=True)
    print(json.dumps({"summary": {"control": args.control, "ratios": [round(r, 4) for r in ratios],
                                  "median": round(statistics.median(ratios), 4)}}, indent=2))


def run_pair(burst: str, documents: int, max_tokens: int, *, swap: bool,
             control: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """Start both systems fresh, release the burst to both at once; (standalone's record, the
    other system's record), each with the core its engine ran on."""
    num_cores = os.cpu_count() or 1
    base_core, other_core = (1 % num_cores, 0) if swap else (0, 1 % num_cores)
    items = load_items(burst, documents, max_tokens=max_tokens, temperature=0.0)
    sampling = {"max_tokens": max_tokens, "temperature": 0.0}
    together = threading.Barrier(2)  # each system's clock starts when both are ready

    with tempfile.TemporaryDirectory(prefix="prefixq-sidebyside-") as logs, ExitStack() as stack, \
            ThreadPoolExecutor(2) as pool:
        try:
            base = stack.enter_context(Standalone(cores=[base_core]))
            base_run = pool.submit(base.run, items, sampling, before_clock=together.wait)
            if control:
                other_system: Standalone | Prefixq = stack.enter_context(Standalone(cores=[other_core]))
                other_run = pool.submit(other_system.run, items, sampling, before_clock=together.wait)
            else:
                other_system = stack.enter_context(Prefixq(Path(logs), cores=[other_core]))
                other_run = pool.submit(other_system.run, burst, "affinity", max_tokens,
                                        documents=documents, before_clock=together.wait)
            base_record, other_record = base_run.result(), other_run.result()
        except BaseException:
            together.abort()  # a run waiting for the other one to be ready stops waiting
            raise
    other_record = {**other_record, "system": "standalone-control" if control else "prefixq"}
    return {**base_record, "core": base_core}, {**other_record, "core": other_core}


if __name__ == "__main__":
    main()
