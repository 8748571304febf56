"""Prefix-affinity vs round-robin (and random) routing on real workers.

    python -m benchmarks.routing [--burst reuse-256] [--policy affinity --policy round-robin]

For each policy: a private redis-server, two fresh workers (one CPU core each, the built-in
model, empty prefix caches), a short warm-up of unrelated prompts, then the burst. The clock runs
from the first enqueue to the last stored result. Prints one JSON object per run: throughput,
the cached-token fraction vLLM reported, and the oracle fraction (each document's shared prefix
computed once, at block granularity).
"""

from __future__ import annotations

import argparse
import ast
import os
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchmarks.cputime import TreeCpu, tree_cpu
from common.config import Settings
from common.prompts import load_tokenizer, render
from producer.client import Client
from producer.items import Item
from producer.launch import RedisServer, start_workers
from benchmarks.report import emit
from benchmarks.workloads import load_items


def oracle_cached_tokens(client: Client, items: list[Item], block_size: int) -> tuple[int, int]:
    """(cached tokens if every distinct prefix were computed once, total prompt tokens)."""
    tokenizer = load_tokenizer(client.model_path)
    prompts = tokenizer.encode_batch([render(tokenizer, item.messages) for item in items])
    first_of_doc: dict[str, list[int]] = {}
    cached = 0
    for item, tokens in zip(items, prompts):
        doc = item.tag.rsplit("/", 1)[0]
        first = first_of_doc.setdefault(doc, tokens)
        if first is not tokens:
            common = next((i for i, (a, b) in enumerate(zip(first, tokens)) if a != b),
                          min(len(first), len(tokens)))
            cached += (common // block_size) * block_size
    return cached, sum(len(t) for t in prompts)


def run(burst: str, policy: str, max_tokens: int, log_dir: Path) -> dict[str, object]:
    items = load_items(burst, max_tokens=max_tokens, temperature=0.0)
    with RedisServer(appendonly=False) as server:
        settings = Settings.from_env(redis_url=server.url)
        workers = start_workers(list(settings.shards), redis_url=server.url, log_dir=log_dir)
        try:
            client = Client(settings)
            warm = [Item.prompt(f"Count to {n}.", max_tokens=8) for n in range(2 * len(settings.shards))]
            client.submit_many(warm, policy="round-robin").wait(timeout=600)
            pids = [w.proc.pid for w in workers if w.proc is not None]
            cpu0 = [tree_cpu(pid) for pid in pids], tree_cpu(server.proc.pid), time.process_time()
            t0 = time.perf_counter()
            results = client.submit_many(items, policy=policy).wait(timeout=3600)
            elapsed = time.perf_counter() - t0
            cpu = _cpu_since(cpu0, pids, server.proc.pid)
        finally:
            for worker in workers:
                worker.stop()
        gc_pauses = [gc_summary(worker.log_text()) for worker in workers]
        oracle, total = oracle_cached_tokens(client, items, settings.block_size)
    done = [r.completion for r in results if r.completion is not None]
    cached = sum(c.cached_tokens for c in done)
    prompt = sum(c.prompt_tokens for c in done)
    return {
        "burst": burst, "policy": policy, "requests": len(items), "failed": len(items) - len(done),
        "seconds": round(elapsed, 2), "requests_per_s": round(len(items) / elapsed, 4),
        "cached_fraction": round(cached / prompt, 4), "oracle_cached_fraction": round(oracle / total, 4),
        "of_oracle": round(cached / oracle, 4) if oracle else None,
        "per_shard": dict(Counter(c.shard for c in done)),
        "kv_events": settings.kv_events,
        "cpu_s": cpu,
        "gc_max_pause_ms": max((g.get("max_pause_ms", 0.0) for g in gc_pauses), default=None),
        "gc_per_worker": gc_pauses,
    }


def _cpu_since(before: tuple[list[TreeCpu], TreeCpu, float], worker_pids: list[int],
               redis_pid: int) -> dict[str, float]:
    """CPU seconds since ``before``: engines (the workers' child processes), the workers' own
    processes (vLLM's front end and prefixq's loop and Redis threads), redis-server, producer."""
    workers = [tree_cpu(pid) - then for pid, then in zip(worker_pids, before[0])]
    return {"engine": round(sum(w.children_s for w in workers), 2),
            "frontend": round(sum(w.own_s for w in workers), 2),
            "redis": round((tree_cpu(redis_pid) - before[1]).own_s, 2),
            "producer": round(time.process_time() - before[2], 2)}


def gc_summary(log: str) -> dict[str, float]:
    """The GC figures a worker logs when it stops (``stopped: gc={...}``)."""
    for line in reversed(log.splitlines()):
        if " stopped: gc=" in line:
            return dict(ast.literal_eval(line.split(" stopped: gc=", 1)[1]))
    return {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--burst", default="reuse-256")
    parser.add_argument("--policy", action="append", choices=["affinity", "round-robin", "random"])
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--out", type=Path, default=None, help="Append each run's JSON line here.")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    for policy in args.policy or ["affinity", "round-robin"]:
        with tempfile.TemporaryDirectory(prefix="prefixq-bench-") as logs:
            emit(run(args.burst, policy, args.max_tokens, Path(logs)), args.out)


if __name__ == "__main__":
    main()
