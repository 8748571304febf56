"""The overhead ceiling: jobs/s through Redis and one worker whose engine takes no time.

    python -m benchmarks.overhead [--jobs 20000] [--submission-size N] [--profile FILE] [--out FILE]

Uses the ``sim`` engine (a SIMULATOR: no model runs, zero cost per token). Two measurements,
each on a private redis-server:

- end-to-end: the worker is started and ready; the producer submits every job, in one
  submission or (``--submission-size``) in several one after another; the clock runs from the
  first enqueue to the last stored result (producer, Redis and worker share the machine's
  cores, as they would on a small host). A submission is enqueued atomically, so with one
  submission the worker starts only once the producer has enqueued everything.
- backlog: every job is enqueued first, then the worker drains the queue in burst mode; the
  drain rate is jobs / (first job started .. last job ended), start-up excluded.

Per stage: enqueue (producer), queue wait, admission (started to handed to the engine) and
engine time per job from the completions; the worker's Redis bookkeeping per job (pull, start,
finish = result write), wall and CPU, from its ``stages`` log line; the CPU time per job of the
producer (while it enqueues), of redis-server (from the first enqueue to the last result) and of
the worker. With ``--profile FILE`` the end-to-end worker runs under py-spy (sampling every thread
while it holds the GIL, i.e. CPU time) and the functions its CPU goes to are printed; the raw
samples are kept in FILE.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import Counter
from pathlib import Path
from statistics import mean
from typing import Any

import psutil
from redis import Redis
from rq.utils import utcparse

from benchmarks.cputime import redis_cpu_s, tree_cpu
from benchmarks.report import emit
from benchmarks.routing import gc_summary, logged_dict
from common.config import Settings
from common.rqjob import PrefixqJob
from producer.client import Client
from producer.items import Item
from producer.launch import RedisServer, WorkerProcess

SIM_ENV = {"PREFIXQ_ENGINE": "sim", "PREFIXQ_LOG_LEVEL": "INFO"}


def _items(n: int) -> list[Item]:
    return [Item.prompt(f"Question number {i}?", tag=str(i), max_tokens=8) for i in range(n)]


def _worker_args(max_batch: int) -> tuple[str, ...]:
    return ("--max-batch", str(max_batch), "--max-inflight", str(max(256, max_batch)), "--no-kv-events")


def end_to_end(jobs: int, max_batch: int, log_dir: Path, profile: Path | None,
               submission_size: int = 0) -> dict[str, Any]:
    """Worker ready first; clock from the first enqueue to the last stored result. The jobs go
    in one submission, or in submissions of ``submission_size`` jobs one after another (the
    worker then starts on the first while the producer prepares the next)."""
    with RedisServer(appendonly=False) as server:
        settings = Settings.from_env(redis_url=server.url, shards=("gpu0",), max_tokens=8)
        worker = WorkerProcess("gpu0", redis_url=server.url, core=None, log_dir=log_dir,
                               extra_args=_worker_args(max_batch), env=SIM_ENV)
        if profile is not None:  # py-spy starts the worker and samples it until it exits
            worker.wrapper = ("py-spy", "record", "--gil", "--threads", "--nonblocking", "--rate", "250",
                              "--format", "raw", "-o", str(profile), "--")
        worker.start()
        try:
            worker.wait_ready(120)
            client = Client(settings)
            client.submit_many(_items(16)).wait(timeout=60)  # warm both sides
            # Under py-spy the worker is py-spy's child, and py-spy's own CPU is not the worker's.
            pid = worker.proc.pid if profile is None else None  # type: ignore[union-attr]
            cpu0 = tree_cpu(pid).own_s if pid is not None else 0.0
            redis_conn = Redis.from_url(server.url)
            redis_cpu0 = redis_cpu_s(redis_conn)
            items = _items(jobs)
            size = submission_size or jobs
            t0, producer_cpu0 = time.perf_counter(), time.process_time()
            submissions = [client.submit_many(items[i:i + size]) for i in range(0, jobs, size)]
            enqueue_s, producer_cpu_s = time.perf_counter() - t0, time.process_time() - producer_cpu0
            results = [r for submission in submissions for r in submission.wait(timeout=600)]
            elapsed = time.perf_counter() - t0
            redis_used_s = redis_cpu_s(redis_conn) - redis_cpu0
            cpu_s = tree_cpu(pid).own_s - cpu0 if pid is not None else None
        finally:
            if profile is not None and worker.proc is not None:  # end the worker, not py-spy
                for child in psutil.Process(worker.proc.pid).children():
                    child.terminate()
                worker.proc.wait(timeout=120)  # py-spy writes its samples once the worker exits
            worker.stop()
    done = [r.completion for r in results if r.completion is not None]
    log = worker.log_text()
    out = {"run": "end-to-end", "engine": "sim (simulator, zero cost)", "jobs": jobs, "stored": len(done),
           "submissions": len(submissions),
           "seconds": round(elapsed, 3), "jobs_per_s": round(jobs / elapsed),
           "enqueue_s": round(enqueue_s, 3), "enqueue_jobs_per_s": round(jobs / enqueue_s),
           "worker_cpu_ms_per_job": round(cpu_s * 1e3 / jobs, 4) if cpu_s is not None else None,
           "producer_cpu_ms_per_job": round(producer_cpu_s * 1e3 / jobs, 4),  # while enqueueing
           "redis_cpu_ms_per_job": round(redis_used_s * 1e3 / jobs, 4),  # first enqueue to last result
           "per_job_ms": _per_job(done), "stages": stage_summary(log), "gc": gc_summary(log)}
    if profile is not None:
        out["profile"] = str(profile)
    return out


def backlog(jobs: int, max_batch: int, log_dir: Path) -> dict[str, Any]:
    """Everything enqueued first; the worker drains it; start-up is left out of the rate."""
    with RedisServer(appendonly=False) as server:
        settings = Settings.from_env(redis_url=server.url, shards=("gpu0",), max_tokens=8)
        client = Client(settings)
        submission = client.submit_many(_items(jobs))
        worker = WorkerProcess("gpu0", redis_url=server.url, core=None, log_dir=log_dir,
                               extra_args=(*_worker_args(max_batch), "--burst"), env=SIM_ENV).start()
        if worker.proc.wait(timeout=600) != 0:  # type: ignore[union-attr]
            raise RuntimeError("the worker failed:\n" + worker.log_text()[-3000:])
        worker.stop()
        results = submission.results()
        first, last = _started_ended(Redis.from_url(server.url), [r.job_id for r in results])
    done = [r.completion for r in results if r is not None and r.completion is not None]
    log = worker.log_text()
    return {"run": "backlog", "engine": "sim (simulator, zero cost)", "jobs": jobs, "stored": len(done),
            "drain_s": round(last - first, 3), "drain_jobs_per_s": round(jobs / (last - first)),
            "per_job_ms": _per_job(done), "stages": stage_summary(log), "gc": gc_summary(log)}


def _per_job(done: list[Any]) -> dict[str, float]:
    return {stage: round(mean(c.timings_ms.get(stage, 0.0) for c in done), 3)
            for stage in ("queue", "admit", "engine")}


def _started_ended(conn: Redis, job_ids: list[str]) -> tuple[float, float]:
    """The first ``started_at`` and the last ``ended_at`` among the jobs (RQ's own fields)."""
    with conn.pipeline(transaction=False) as pipe:
        for job_id in job_ids:
            pipe.hmget(PrefixqJob.key_for(job_id), "started_at", "ended_at")
        rows = pipe.execute()
    started = [utcparse(s.decode()).timestamp() for s, _ in rows if s]
    ended = [utcparse(e.decode()).timestamp() for _, e in rows if e]
    return min(started), max(ended)


def stage_summary(log: str) -> dict[str, Any]:
    """The bookkeeping stages a worker logs when it stops (``stages: {...}``)."""
    return logged_dict(log, " stages: ")


_PLUMBING = ("threading.py", "concurrent/futures", "<frozen runpy>", "click/", "asyncio/", "metrics.py",
             "producer/cli.py", "worker/cli.py")


def profile_report(raw: Path, top: int = 25) -> dict[str, list[tuple[float, str]]]:
    """Shares of the CPU samples in py-spy's raw output: per function including what it calls
    (thread and event-loop plumbing left out), and per function alone (the innermost frame)."""
    total, cumulative, own = 0, Counter[str](), Counter[str]()
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = [frame for frame in stack.split(";")[1:] if frame]
        total += int(count)
        if frames:
            own[_function(frames[-1])] += int(count)
        for name in {_function(f) for f in frames if not any(p in f for p in _PLUMBING)}:
            cumulative[name] += int(count)
    if not total:
        return {"cumulative": [], "own": []}
    return {kind: [(round(n / total, 3), name) for name, n in counts.most_common(top)]
            for kind, counts in (("cumulative", cumulative), ("own", own))}


def _function(frame: str) -> str:
    """``name (path:line)`` -> ``name (file)``."""
    name, _, where = frame.partition(" (")
    return f"{name} ({where.rsplit(':', 1)[0].rsplit('/', 1)[-1]})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=20000)
    parser.add_argument("--max-batch", type=int, default=256)
    parser.add_argument("--submission-size", type=int, default=0,
                        help="End-to-end: submit the jobs in submissions of this many, one after "
                             "another [default: all in one].")
    parser.add_argument("--profile", type=Path, default=None, help="py-spy raw samples go here")
    parser.add_argument("--profile-only", action="store_true", help="Only the profiled run.")
    parser.add_argument("--out", type=Path, default=None, help="Append each run's JSON line here.")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory(prefix="prefixq-overhead-") as tmp:
        if not args.profile_only:
            emit(end_to_end(args.jobs, args.max_batch, Path(tmp), None, args.submission_size), args.out)
            emit(backlog(args.jobs, args.max_batch, Path(tmp)), args.out)
        if args.profile is not None:
            end_to_end(args.jobs, args.max_batch, Path(tmp), args.profile, args.submission_size)
            for kind, rows in profile_report(args.profile).items():
                print(f"-- worker CPU samples, {kind}")
                for share, name in rows:
                    print(f"{share:6.1%}  {name}")


if __name__ == "__main__":
    main()
