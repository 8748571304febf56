"""Prefix-affinity vs round-robin (and random) routing on real workers.

    python -m benchmarks.routing [--burst reuse-256] [--policy affinity --policy round-robin]

For each policy: a private redis-server, two fresh workers (one CPU core each, the built-in
model, empty prefix caches), a short warm-up of unrelated prompts, then the burst. The clock runs
from the first enqueue (the submission's one transaction, sent once the producer has rendered,
tokenized and routed every request: ``prepare_s`` before it) to the last stored result (when the
waiting producer sees its done mark); ``seconds_from_submit`` is the span from the call to the
results read back, the clock of sessions 7-21. Prints one JSON object per run: throughput,
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
from typing import Any, Callable, NamedTuple

from benchmarks.cputime import ThreadTimes, TreeCpu, busiest_threads, merge_counts, rounded, thread_times, tree_cpu
from benchmarks.machine import MachineWatch
from benchmarks.resident import Resident
from common.config import Settings
from common.rqjob import PrefixqJob
from common.schema import Completion
from common.prompts import load_tokenizer, render
from producer.client import Client
from producer.items import Item
from producer.admin import reset_prefix_caches
from producer.launch import RedisServer, WorkerProcess, start_workers
from benchmarks.report import emit
from benchmarks.steps import steps_record
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


class ClockedClient(Client):
    """prefixq's client, for benchmarks: calls ``at_enqueue`` (if set) just before it builds a
    submission's enqueue transaction, where the protocol's clock starts, so that a benchmark can
    read CPU counters there (after rendering, tokenizing and routing)."""

    at_enqueue: Callable[[], None] | None = None

    def _enqueue(self, *args: Any, **kwargs: Any) -> float:
        if self.at_enqueue is not None:
            self.at_enqueue()
        return super()._enqueue(*args, **kwargs)


class Prefixq(Resident):
    """prefixq kept running between bursts: a private redis-server and one worker per shard
    (one CPU core each, the built-in model), warmed once. Every burst starts with the shards'
    prefix caches reset through Redis (``prefixq reset-cache``: the engines forget every
    prefix and routing forgets what each shard held, as after a restart).

    Use as a context manager; :meth:`run` runs one burst. :attr:`gc_per_worker` holds each
    worker's GC figures once the workers have stopped (they cover every burst).
    """

    def __init__(self, log_dir: Path, cores: list[int] | None = None) -> None:
        self.log_dir = log_dir
        self.cores = cores
        self.server = RedisServer(appendonly=False)
        self.workers: list[WorkerProcess] = []
        self.gc_per_worker: list[dict[str, float]] = []
        self.steps_per_shard: dict[str, list[list[float]]] = {}  # with PREFIXQ_STEP_TRACE
        self.window: tuple[float, float] = (0.0, 0.0)  # the last burst's, wall-clock

    def start(self) -> None:
        self.server.__enter__()
        self.settings = Settings.from_env(redis_url=self.server.url)
        self.workers = start_workers(list(self.settings.shards), redis_url=self.server.url,
                                     log_dir=self.log_dir, cores=self.cores)
        self.client = ClockedClient(self.settings)
        warm = [Item.prompt(f"Count to {n}.", max_tokens=8) for n in range(2 * len(self.settings.shards))]
        self.client.submit_many(warm, policy="round-robin").wait(timeout=600)

    @property
    def worker_pids(self) -> list[int]:
        return [w.proc.pid for w in self.workers if w.proc is not None]

    @property
    def pids(self) -> list[int]:
        return self.worker_pids + ([self.server.proc.pid] if self.server.proc is not None else [])

    def close(self) -> None:
        for worker in self.workers:
            worker.stop()
        if self.workers:
            self.gc_per_worker = [gc_summary(worker.log_text()) for worker in self.workers]
            traces = [logged_dict(worker.log_text(), " steps: ") for worker in self.workers]
            self.steps_per_shard = {t["shard"]: t["steps"] for t in traces if t}
        self.workers = []
        self.server.__exit__(None, None, None)

    def run(self, burst: str, policy: str, max_tokens: int, *, documents: int | None = None,
            before_clock: Callable[[], None] | None = None) -> dict[str, object]:
        """One burst (its first ``documents`` documents if given): reset the prefix caches, submit
        every request, wait for the last result. ``before_clock`` runs once the caches are reset,
        just before the first enqueue."""
        items = load_items(burst, documents, max_tokens=max_tokens, temperature=0.0)
        replies = reset_prefix_caches(self.client.redis, self.settings.shards)
        if not all(r.ok for r in replies):
            raise RuntimeError(f"prefix caches not reset: {replies}")
        if before_clock is not None:
            before_clock()
        assert self.server.proc is not None
        pids, redis_pid = self.worker_pids, self.server.proc.pid
        # CPU is counted over the clock's span: read as the enqueue begins, and when the last
        # result is seen stored.
        cpu_at: list[CpuReading] = []
        last_done = 0.0

        def on_progress(done: int, _failed: int, total: int) -> None:
            nonlocal last_done
            if done == total and not last_done:
                last_done = time.time()
                cpu_at.append(_cpu_now(pids, redis_pid))

        self.client.at_enqueue = lambda: cpu_at.append(_cpu_now(pids, redis_pid))
        with MachineWatch() as machine:
            called = time.time()
            submission = self.client.submit_many(items, policy=policy)
            results = submission.wait(timeout=3600, progress=on_progress)
            returned = time.time()
        self.client.at_enqueue = None
        # The protocol's clock: from the first enqueue (the submission's one transaction, sent
        # once the producer has rendered, tokenized and routed it) to the last stored result
        # (when the waiting producer saw its done mark; reading the results back comes after).
        assert submission.enqueued_at is not None
        elapsed = last_done - submission.enqueued_at
        self.window = (submission.enqueued_at, last_done)
        cpu, preempted, by_process = _cpu_between(*cpu_at)
        oracle, total = oracle_cached_tokens(self.client, items, self.settings.block_size)
        done = [r.completion for r in results if r.completion is not None]
        cached = sum(c.cached_tokens for c in done)
        prompt = sum(c.prompt_tokens for c in done)
        return {
            "burst": burst, "policy": policy, "requests": len(items), "failed": len(items) - len(done),
            "seconds": round(elapsed, 2), "requests_per_s": round(len(items) / elapsed, 4),
            # Before the clock: rendering, tokenizing and routing (the baseline's client does
            # the same before its clock). From the call to every result read back: the clock
            # sessions 7-21 used.
            "prepare_s": round(submission.enqueued_at - called, 3),
            "seconds_from_submit": round(returned - called, 2),
            "cached_fraction": round(cached / prompt, 4), "oracle_cached_fraction": round(oracle / total, 4),
            "of_oracle": round(cached / oracle, 4) if oracle else None,
            "per_shard": dict(Counter(c.shard for c in done)),
            "taken_per_shard": taken_per_shard(self.client, submission.job_ids, results),
            "tokens_per_shard": tokens_per_shard(done),
            "kv_events": self.settings.kv_events,
            "cpu_s": cpu,
            "frontend_threads": busiest_threads(cpu_at[0].threads, cpu_at[1].threads),
            # Where the CPU figures were read, against the clock (0 at the first enqueue,
            # ``seconds`` at the last stored result), as the baseline's record has it.
            "cpu_window_s": [round(cpu_at[0].at - submission.enqueued_at, 3),
                             round(cpu_at[1].at - submission.enqueued_at, 3)],
            "engine_preempted": preempted,
            "engine_cpu_by_process": by_process,
            "machine": machine.summary(clock=submission.enqueued_at),
        }


def taken_per_shard(client: Client, job_ids: list[str], results: list[Any]) -> dict[str, int]:
    """How many jobs each shard ran that the router had sent to another shard (taken from that
    shard's queue: worker/stealing.py). The routed shard is in each job's description."""
    with client.redis.pipeline(transaction=False) as pipe:
        for job_id in job_ids:
            pipe.hget(PrefixqJob.key_for(job_id), "description")
        descriptions = pipe.execute()
    taken: Counter[str] = Counter()
    for description, result in zip(descriptions, results):
        routed = (description or b"").decode().rpartition("(")[2].rstrip(")")
        if result.completion is not None and routed and result.completion.shard != routed:
            taken[result.completion.shard] += 1
    return dict(taken)


def tokens_per_shard(done: list[Completion]) -> dict[str, dict[str, int]]:
    """The work each shard did: prompt, cached and completion tokens."""
    out: dict[str, dict[str, int]] = {}
    for c in done:
        totals = out.setdefault(c.shard, {"prompt": 0, "cached": 0, "completion": 0})
        totals["prompt"] += c.prompt_tokens
        totals["cached"] += c.cached_tokens
        totals["completion"] += c.completion_tokens
    return out


def run(burst: str, policy: str, max_tokens: int, log_dir: Path) -> dict[str, object]:
    """One burst on freshly started workers, with their GC figures (and engine steps, with
    PREFIXQ_STEP_TRACE)."""
    with Prefixq(log_dir) as system:
        record = system.run(burst, policy, max_tokens)
    return {**record, **gc_record(system.gc_per_worker), **steps_record(system.steps_per_shard, *system.window)}


def gc_record(gc_per_worker: list[dict[str, float]]) -> dict[str, object]:
    """The GC fields of a run's record: the longest pause of any worker, and each worker's."""
    return {"gc_max_pause_ms": max((g.get("max_pause_ms", 0.0) for g in gc_per_worker), default=None),
            "gc_per_worker": gc_per_worker}


class CpuReading(NamedTuple):
    """One reading of a prefixq run's CPU."""

    workers: list[TreeCpu]  # each worker's process tree (its engine's processes are children)
    redis: TreeCpu
    producer_s: float  # this process
    threads: ThreadTimes  # the workers' own threads
    at: float  # time.time() once read


def _cpu_now(worker_pids: list[int], redis_pid: int) -> CpuReading:
    return CpuReading([tree_cpu(pid) for pid in worker_pids], tree_cpu(redis_pid), time.process_time(),
                      thread_times(worker_pids), time.time())


def _cpu_between(before: CpuReading, after: CpuReading,
                 ) -> tuple[dict[str, float], dict[str, int], dict[str, float]]:
    """CPU seconds from ``before`` to ``after``: engines (the workers' child processes), the
    workers' own processes (vLLM's front end and prefixq's loop and Redis threads),
    redis-server, producer; how often the engines' main threads were preempted meanwhile; and
    the engines' CPU seconds by process name."""
    workers = [now - then for now, then in zip(after.workers, before.workers)]
    return {"engine": round(sum(w.children_s for w in workers), 2),
            "frontend": round(sum(w.own_s for w in workers), 2),
            "redis": round((after.redis - before.redis).own_s, 2),
            "producer": round(after.producer_s - before.producer_s, 2)}, \
        merge_counts(w.children_preempted for w in workers), \
        rounded(merge_counts(w.children_by_name for w in workers))


def logged_dict(log: str, marker: str) -> dict[str, Any]:
    """The dict a worker logged last after ``marker`` (its ``stages: {...}`` and
    ``stopped: gc={...}`` lines at stop), or {} if it logged none."""
    for line in reversed(log.splitlines()):
        if marker in line:
            return dict(ast.literal_eval(line.split(marker, 1)[1]))
    return {}


def gc_summary(log: str) -> dict[str, float]:
    """The GC figures a worker logs when it stops (``stopped: gc={...}``)."""
    return logged_dict(log, " stopped: gc=")


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
