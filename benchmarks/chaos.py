"""Chaos: the reuse burst through two real workers while workers die and Redis restarts.

    python -m benchmarks.chaos [--burst reuse-256] [--kills 5] [--redis-restart-after 3]

A private redis-server with its append-only file on, two real vLLM workers (gpu0, gpu1, one CPU
core each, the built-in model; heartbeat 1 s so a lease runs out after 3 s, and a shard with no
worker hands its queue to the other after 5 s). The burst is submitted at once (max_tokens 16,
temperature 0). Then, while it runs:

- ``--kills`` times, a worker that holds started jobs (live leases) is killed with SIGKILL (its
  whole process group, engine included) and started again at once. Kills alternate between the
  workers where both hold jobs; each kill waits until that worker's previous incarnation has
  logged "ready" and until at least 1/(2 * (kills + 1)) of the burst has been stored since the
  previous kill, so every kill lands on started jobs in the middle of the burst. The other
  worker may be down at the same time (then nothing runs until one is back).
- after kill number ``--redis-restart-after``, once both workers are ready and jobs are in flight,
  Redis is stopped (SIGTERM) and started again on the same port and folder (AOF on).

A job whose worker is killed is started again; each start counts as an attempt. The workers
run with ``PREFIXQ_MAX_ATTEMPTS`` = kills + 1 so that the kills alone can never exhaust a job's
attempts (at the default, 3, a job at the front of a queue that meets three kills fails, as
designed). Prints one JSON object: jobs with a stored result, jobs whose result stream has
exactly one entry, jobs lost (no result), failed jobs, duplicate runs the workers dropped,
reruns, what each kill hit, and the wall time from submission to the last stored result. Exits 1
if a job is lost or stored more than once.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rq.results import Result

from benchmarks.workloads import load_items
from common import keys
from common.codec import WireCodec
from common.config import Settings
from producer.client import Client
from producer.launch import RedisServer, WorkerProcess
from producer.results import fetch_results

SHARDS = ("gpu0", "gpu1")
READY_TIMEOUT_S = 900
DUPLICATE_LINE = "already has a result; dropping this duplicate run"
T = TypeVar("T")


def _results_key(job_id: str) -> str:
    """RQ's result stream of a job."""
    return str(Result.get_key(job_id))  # type: ignore[no-untyped-call]


@dataclass
class Shard:
    """One shard's worker, restarted as a new process (and log file) after each kill."""

    name: str
    core: int
    redis_url: str
    log_root: Path
    env: dict[str, str]
    incarnation: int = 0
    proc: WorkerProcess | None = None
    logs: list[Path] = field(default_factory=list)

    def start(self) -> None:
        self.incarnation += 1
        log_dir = self.log_root / f"{self.name}.{self.incarnation}"
        log_dir.mkdir(parents=True)
        self.proc = WorkerProcess(self.name, redis_url=self.redis_url, core=self.core, log_dir=log_dir,
                                  env=self.env).start()
        self.logs.append(self.proc.log_path)

    def wait_ready(self) -> None:
        assert self.proc is not None
        self.proc.wait_ready(READY_TIMEOUT_S)

    def is_ready(self) -> bool:
        return self.proc is not None and " ready: " in self.proc.log_text()

    def kill_and_restart(self) -> None:
        assert self.proc is not None
        self.proc.stop(signal.SIGKILL)
        self.start()

    def log_text(self) -> str:
        return "".join(path.read_text(errors="replace") for path in self.logs if path.exists())


def _retrying(fn: Callable[..., T], *args: object) -> T:
    """Call ``fn`` until Redis answers (it may be restarting)."""
    while True:
        try:
            return fn(*args)
        except (RedisConnectionError, RedisTimeoutError):
            time.sleep(0.5)


def _num_stored(redis: Redis, job_ids: list[str]) -> int:
    with redis.pipeline(transaction=False) as pipe:
        for job_id in job_ids:
            pipe.exists(_results_key(job_id))
        return sum(pipe.execute())


def _live_leases(redis: Redis, shard: str) -> int:
    """Started jobs on ``shard`` whose lease has not run out (held by a live worker)."""
    return int(redis.zcount(f"rq:wip:{shard}", time.time(), "+inf"))


def run(burst: str, num_kills: int, redis_restart_after: int, max_tokens: int, log_root: Path,
        timeout_s: float, engine: str = "vllm", max_inflight: int | None = None) -> dict[str, object]:
    items = load_items(burst, max_tokens=max_tokens, temperature=0.0)
    min_progress = max(1, len(items) // (2 * (num_kills + 1)))
    server = RedisServer(appendonly=True).start()
    env = {"PREFIXQ_SHARDS": ",".join(SHARDS), "PREFIXQ_HEARTBEAT_INTERVAL_S": "1",
           "PREFIXQ_SHARD_DOWN_GRACE_S": "5", "PREFIXQ_MAX_ATTEMPTS": str(num_kills + 1),
           "HF_HUB_OFFLINE": "1", "PREFIXQ_ENGINE": engine}
    if engine == "sim":  # a SIMULATOR: only to try this script out; costs make the burst last
        env.update({"PREFIXQ_SIM_PREFILL_S_PER_TOKEN": "0.0005", "PREFIXQ_SIM_DECODE_S_PER_TOKEN": "0.02"})
    if max_inflight is not None:
        env.update({"PREFIXQ_MAX_INFLIGHT": str(max_inflight),
                    "PREFIXQ_MAX_BATCH": str(min(max_inflight, Settings().max_batch))})
    shards = {name: Shard(name, i % (os.cpu_count() or 1), server.url, log_root, env)
              for i, name in enumerate(SHARDS)}
    kills: list[dict[str, object]] = []
    redis_restart: dict[str, object] = {}
    try:
        for shard in shards.values():
            shard.start()
        for shard in shards.values():
            shard.wait_ready()
        redis = Redis.from_url(server.url, socket_timeout=10)
        client = Client(Settings.from_env({}, redis_url=server.url, shards=SHARDS))
        t0 = time.perf_counter()
        submission = client.submit_many(items)
        job_ids = submission.job_ids
        deadline = time.monotonic() + timeout_s
        stored_at_last_kill, last_victim = 0, ""
        while time.monotonic() < deadline:
            stored = _retrying(_num_stored, redis, job_ids)
            if stored == len(job_ids):
                break
            restart_due = len(kills) >= redis_restart_after and not redis_restart
            if len(kills) < num_kills and not restart_due and stored - stored_at_last_kill >= min_progress:
                holders = [s for s in shards.values() if s.is_ready() and _retrying(_live_leases, redis, s.name)]
                holders.sort(key=lambda s: s.name == last_victim)  # alternate where both hold jobs
                if holders:
                    victim = holders[0]
                    held = _retrying(_live_leases, redis, victim.name)
                    victim.kill_and_restart()
                    kills.append({"shard": victim.name, "started_jobs_held": held, "stored_before": stored,
                                  "at_s": round(time.perf_counter() - t0, 1)})
                    stored_at_last_kill, last_victim = stored, victim.name
                    print(f"chaos: kill {len(kills)}: SIGKILL {victim.name} holding {held} started job(s), "
                          f"{stored}/{len(job_ids)} stored", file=sys.stderr, flush=True)
            if restart_due and all(s.is_ready() for s in shards.values()) and \
                    any(_retrying(_live_leases, redis, s) for s in SHARDS):
                in_flight = sum(_retrying(_live_leases, redis, s) for s in SHARDS)
                t_stop = time.perf_counter()
                server.stop()
                time.sleep(1.0)
                server.start()
                redis_restart = {"at_s": round(t_stop - t0, 1), "jobs_in_flight": in_flight,
                                 "stored_before": stored, "down_s": round(time.perf_counter() - t_stop, 1)}
                print(f"chaos: restarted Redis with {in_flight} job(s) in flight, {stored}/{len(job_ids)} "
                      "stored", file=sys.stderr, flush=True)
            time.sleep(0.2)
        elapsed = time.perf_counter() - t0
        for shard in shards.values():  # every incarnation started after a kill came up
            shard.wait_ready()
        report = _account(redis, client, job_ids, shards)
        report.update({
            "engine": engine if engine == "vllm" else f"{engine} (SIMULATOR, not a model)",
            "burst": burst, "requests": len(items), "max_tokens": max_tokens,
            "seconds": round(elapsed, 1), "kills": len(kills), "kill_log": kills,
            "redis_restarts": int(bool(redis_restart)), "redis_restart": redis_restart,
            "worker_env": {k: v for k, v in env.items() if k.startswith("PREFIXQ_")},
            "timed_out": elapsed >= timeout_s,
        })
        return report
    finally:
        for shard in shards.values():
            if shard.proc is not None:
                shard.proc.stop(signal.SIGTERM, timeout_s=60)
        server.cleanup()


def _account(redis: Redis, client: Client, job_ids: list[str], shards: dict[str, Shard]) -> dict[str, object]:
    """Count, per job: stored results, result stream entries, claims, attempts; from the logs:
    duplicate runs dropped and reaper actions."""
    with redis.pipeline(transaction=False) as pipe:
        for job_id in job_ids:
            pipe.xlen(_results_key(job_id))
            pipe.exists(keys.claim_key(job_id))
            pipe.hget(f"rq:job:{job_id}", keys.ATTEMPTS_FIELD)
        replies = pipe.execute()
    entries = replies[0::3]
    claims, attempts = replies[1::3], [int(a or 0) for a in replies[2::3]]
    results = fetch_results(redis, job_ids, ["" for _ in job_ids], WireCodec())
    failed = [r for r in results if r is not None and not r.is_ok]
    logs = "".join(shard.log_text() for shard in shards.values())
    leftover = {s: {"queued": redis.llen(f"rq:queue:{s}"), "started": redis.zcard(f"rq:wip:{s}")}
                for s in SHARDS}
    return {
        "results": f"{sum(n > 0 for n in entries)}/{len(job_ids)}",
        "stored_exactly_once": sum(n == 1 for n in entries),
        "stored_more_than_once": sum(n > 1 for n in entries),
        "lost": sum(n == 0 for n in entries),
        "failed": len(failed),
        "failure_reasons": dict(Counter(r.error or "" for r in failed)),
        "claims": sum(claims),
        "duplicates_dropped": logs.count(DUPLICATE_LINE),
        "reruns": sum(a > 1 for a in attempts),
        "attempts_histogram": {str(k): v for k, v in sorted(Counter(attempts).items())},
        "reaper_requeued": len(re.findall(r"reaper .*: job \S+ \(worker on \S+ died\) requeued", logs)),
        "moved_from_dead_shard": len(re.findall(r"moved from dead shard", logs)),
        "left_in_queues": leftover,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--burst", default="reuse-256")
    parser.add_argument("--kills", type=int, default=5, help="SIGKILLs of a worker during the burst.")
    parser.add_argument("--redis-restart-after", type=int, default=3,
                        help="Restart Redis once, after this many kills.")
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--engine", choices=["vllm", "sim"], default="vllm",
                        help="vllm (the real thing) or sim, a SIMULATOR for trying the script out.")
    parser.add_argument("--max-inflight", type=int, default=None,
                        help="The workers' bound on requests in the engine [default: theirs, 256].")
    parser.add_argument("--timeout", type=float, default=3600, help="Give up after this many seconds.")
    parser.add_argument("--log-dir", type=Path, default=None,
                        help="Keep the workers' logs here (default: a temp folder, removed).")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory(prefix="prefixq-chaos-") as tmp:
        log_root = args.log_dir or Path(tmp)
        report = run(args.burst, args.kills, args.redis_restart_after, args.max_tokens, log_root,
                     args.timeout, args.engine, args.max_inflight)
    print(json.dumps(report), flush=True)
    ok = report["lost"] == 0 and report["stored_more_than_once"] == 0 and not report["timed_out"]
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
