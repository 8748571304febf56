"""Prometheus metrics of one worker, served on ``--metrics-port``."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

_LATENCY_BUCKETS_S = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
_BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
_GC_BUCKETS_S = (0.0001, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.05, 0.1)
_STAGE_BUCKETS_S = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1)
STAGES = ("pull", "steal", "start", "finish")
T = TypeVar("T")


class WorkerMetrics:
    """The worker's counters, gauges and histograms, in a registry of their own."""

    def __init__(self, shard: str) -> None:
        self.registry = CollectorRegistry()
        r, labels = self.registry, {"shard": shard}
        self.jobs = Counter("prefixq_jobs", "Jobs finished, by outcome (ok, failed).",
                            ["shard", "outcome"], registry=r)
        self._jobs_ok = self.jobs.labels(shard=shard, outcome="ok")
        self._jobs_failed = self.jobs.labels(shard=shard, outcome="failed")
        self.prompt_tokens = Counter("prefixq_prompt_tokens", "Prompt tokens of finished jobs.",
                                     ["shard"], registry=r).labels(**labels)
        self.cached_tokens = Counter("prefixq_cached_tokens",
                                     "Prompt tokens served from vLLM's prefix cache.",
                                     ["shard"], registry=r).labels(**labels)
        self.completion_tokens = Counter("prefixq_completion_tokens", "Generated tokens.",
                                         ["shard"], registry=r).labels(**labels)
        prompts = Counter("prefixq_prompts", "Prompts sent to the engine, by form: token_ids (the "
                          "producer's, run as they are) or text (tokenized by the engine).",
                          ["shard", "form"], registry=r)
        self._prompts_by_form = {is_text: prompts.labels(shard=shard, form="text" if is_text else "token_ids")
                                 for is_text in (True, False)}
        self.batch_size = Histogram("prefixq_batch_size", "Jobs admitted per pull.", ["shard"],
                                    buckets=_BATCH_BUCKETS, registry=r).labels(**labels)
        self.in_flight = Gauge("prefixq_in_flight_requests", "Requests in the engine now.",
                               ["shard"], registry=r).labels(**labels)
        self.engine_steps = Counter("prefixq_engine_steps", "Engine steps that reported the requests the engine runs.",
                                    ["shard"], registry=r).labels(**labels)
        self.engine_waiting = Gauge("prefixq_engine_waiting_requests",
                                    "Requests handed to the engine that it had not begun at its last step.",
                                    ["shard"], registry=r).labels(**labels)
        self.queue_wait_s = Histogram("prefixq_queue_wait_seconds", "Enqueue to start of a job.",
                                      ["shard"], buckets=_LATENCY_BUCKETS_S, registry=r).labels(**labels)
        self.engine_s = Histogram("prefixq_engine_seconds", "Time a request spent in the engine.",
                                  ["shard"], buckets=_LATENCY_BUCKETS_S, registry=r).labels(**labels)
        self.gc_pause_s = Histogram("prefixq_gc_pause_seconds", "Garbage-collector pauses after start-up.",
                                    ["shard"], buckets=_GC_BUCKETS_S, registry=r).labels(**labels)

        self.stage_s = Histogram("prefixq_stage_seconds",
                                 "Redis bookkeeping per batch: pull (move ids), steal (take ids from a "
                                 "busier shard's queue), start (load and mark started), finish "
                                 "(store results).", ["shard", "stage"],
                                 buckets=_STAGE_BUCKETS_S, registry=r)
        per_stage = {stage: self.stage_s.labels(shard=shard, stage=stage) for stage in STAGES}
        self.stages = StageClock(on_call=lambda stage, wall_s: per_stage[stage].observe(wall_s))

    def serve(self, port: int, host: str) -> None:
        """Serve ``/metrics`` over HTTP from a daemon thread."""
        start_http_server(port, addr=host, registry=self.registry)

    def prompt_sent(self, prompt: str | Sequence[int]) -> None:
        """Count one prompt sent to the engine, as text or as token ids."""
        self._prompts_by_form[isinstance(prompt, str)].inc()

    def job_done(self, *, ok: bool, prompt_tokens: int = 0, cached_tokens: int = 0,
                 completion_tokens: int = 0, queue_wait_s: float = 0.0, engine_s: float | None = None) -> None:
        """Record one finished job."""
        (self._jobs_ok if ok else self._jobs_failed).inc()
        if ok:
            self.prompt_tokens.inc(prompt_tokens)
            self.cached_tokens.inc(cached_tokens)
            self.completion_tokens.inc(completion_tokens)
        self.queue_wait_s.observe(queue_wait_s)
        if engine_s is not None:
            self.engine_s.observe(engine_s)


class StageClock:
    """Totals per bookkeeping stage: calls, jobs, wall-clock and the calling thread's CPU time.

    The stages run in the worker's Redis threads; wall time includes waiting on Redis (and on
    the GIL), CPU time is what the stage itself cost this process.
    """

    def __init__(self, on_call: Callable[[str, float], None] | None = None) -> None:
        self.on_call = on_call
        self._lock = threading.Lock()
        self._totals = {stage: [0, 0, 0.0, 0.0] for stage in STAGES}  # calls, jobs, wall, cpu

    def time(self, stage: str, jobs: Callable[[T], int], fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` and charge it to ``stage``; ``jobs(result)`` counts its jobs."""
        wall0, cpu0 = time.perf_counter(), time.thread_time()
        result = fn(*args)
        wall_s, cpu_s = time.perf_counter() - wall0, time.thread_time() - cpu0
        with self._lock:
            totals = self._totals[stage]
            totals[0] += 1
            totals[1] += jobs(result)
            totals[2] += wall_s
            totals[3] += cpu_s
        if self.on_call is not None:
            self.on_call(stage, wall_s)
        return result

    def summary(self) -> dict[str, dict[str, float]]:
        """Per stage: calls, jobs, total wall and CPU ms, and both per job (0 without jobs)."""
        out = {}
        with self._lock:
            for stage, (calls, jobs, wall_s, cpu_s) in self._totals.items():
                out[stage] = {"calls": calls, "jobs": jobs, "wall_ms": round(wall_s * 1e3, 3),
                              "cpu_ms": round(cpu_s * 1e3, 3),
                              "wall_ms_per_job": round(wall_s * 1e3 / jobs, 4) if jobs else 0.0,
                              "cpu_ms_per_job": round(cpu_s * 1e3 / jobs, 4) if jobs else 0.0}
        return out
