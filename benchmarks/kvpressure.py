"""Routing under KV-cache pressure: predicted-only vs event-confirmed, on real vLLM.

    python -m benchmarks.kvpressure [--pairs 3] [--kv-cache-blocks 240] [--out FILE]

The workload: the 64 documents of the reuse burst (real text, about 16 blocks each), visited in
rounds. Each round picks ``--docs-per-round`` documents at random and ``--questions`` of each
one's questions, shuffles the requests, submits them at once and waits for them; the next
round revisits documents in a new random order. Each worker's KV cache holds ``--kv-cache-blocks``
blocks, far less than the documents routed to it, so vLLM evicts documents between rounds.

Two modes, alternated (A B A B ...), each with a private redis-server and two fresh workers:

* ``predicted``: workers run with ``--no-kv-events``; routing knows only where each document
  was sent, so a revisited document goes back to its first shard even after it was evicted
  there (and its load is counted as if it were cached).
* ``confirmed``: workers publish vLLM's KV-cache events; routing counts the blocks each engine
  really holds, so an evicted document is routed like a new one (to the least-loaded shard),
  and one still cached is routed to the shard that holds it.

Per run, one JSON line: requests/s over all rounds, the cached-token fraction vLLM reported,
and how evenly the requests were spread over the shards, overall and in each round (a round
lasts as long as its busiest shard).
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchmarks.report import emit
from benchmarks.workloads import load_items
from common.config import Settings
from producer.client import Client
from producer.items import Item
from producer.launch import RedisServer, start_workers

MODES = ("predicted", "confirmed")


def rounds(items: list[Item], num_rounds: int, docs_per_round: int, questions: int,
           seed: int) -> list[list[Item]]:
    """The requests of each round (the same for every mode and pair: a fixed seed)."""
    by_doc: dict[str, list[Item]] = {}
    for item in items:
        by_doc.setdefault(item.tag.rsplit("/", 1)[0], []).append(item)
    rng = random.Random(seed)
    docs = sorted(by_doc)
    plan = []
    for _ in range(num_rounds):
        picked = rng.sample(docs, docs_per_round)
        batch = [q for d in picked for q in rng.sample(by_doc[d], min(questions, len(by_doc[d])))]
        rng.shuffle(batch)
        plan.append(batch)
    return plan


def run(mode: str, plan: list[list[Item]], kv_cache_blocks: int, log_dir: Path) -> dict[str, object]:
    extra = ("--kv-cache-blocks", str(kv_cache_blocks), "--kv-events" if mode == "confirmed" else "--no-kv-events")
    with RedisServer(appendonly=False) as server:
        settings = Settings.from_env(redis_url=server.url)
        workers = start_workers(list(settings.shards), redis_url=server.url, log_dir=log_dir, extra_args=extra)
        try:
            client = Client(settings)
            warm = [Item.prompt(f"Count to {n}.", max_tokens=8) for n in range(2 * len(settings.shards))]
            client.submit_many(warm, policy="round-robin").wait(timeout=600)
            per_round, results, round_imbalance = [], [], []
            for batch in plan:
                t0 = time.perf_counter()
                done = client.submit_many(batch).wait(timeout=3600)
                per_round.append(time.perf_counter() - t0)
                results += done
                counts = Counter(r.completion.shard for r in done if r.completion is not None)
                round_imbalance.append(max(counts.values()) / (len(batch) / len(settings.shards)))
        finally:
            for worker in workers:
                worker.stop()
    completions = [r.completion for r in results if r.completion is not None]
    cached = sum(c.cached_tokens for c in completions)
    prompt = sum(c.prompt_tokens for c in completions)
    shards = Counter(c.shard for c in completions)
    elapsed = sum(per_round)
    return {
        "mode": mode, "kv_cache_blocks": kv_cache_blocks, "rounds": len(plan),
        "requests": len(results), "failed": len(results) - len(completions),
        "seconds": round(elapsed, 2), "requests_per_s": round(len(results) / elapsed, 4),
        "round_seconds": [round(s, 2) for s in per_round],
        "cached_fraction": round(cached / prompt, 4) if prompt else None,
        "per_shard": dict(shards),
        "imbalance": round(max(shards.values()) / (len(results) / len(settings.shards)), 4),
        # A round lasts as long as its busiest shard: requests there over the per-shard mean.
        "round_imbalance": [round(x, 4) for x in round_imbalance],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=3, help="A B pairs of (predicted, confirmed) runs.")
    parser.add_argument("--kv-cache-blocks", type=int, default=240, help="KV-cache blocks per worker.")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--docs-per-round", type=int, default=24)
    parser.add_argument("--questions", type=int, default=2, help="Questions per document per round.")
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=None, help="Append each run's JSON line here.")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    items = load_items("reuse-256", max_tokens=args.max_tokens, temperature=0.0)
    plan = rounds(items, args.rounds, args.docs_per_round, args.questions, args.seed)
    for pair in range(args.pairs):
        for mode in MODES:
            with tempfile.TemporaryDirectory(prefix="prefixq-kvpressure-") as logs:
                result = {"pair": pair, **run(mode, plan, args.kv_cache_blocks, Path(logs))}
            emit(result, args.out)


if __name__ == "__main__":
    main()
