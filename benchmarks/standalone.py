"""The baseline: standalone vLLM, one process per shard running ``AsyncLLM`` directly.

The client routes with prefixq's own router, decision for decision: before the clock, the
producer's ``Client`` submits the burst to a private redis-server that no worker reads, and each
shard's queue is read back in order (prefix affinity, or round-robin for the uplift comparison).
Each engine process tokenizes its prompts with vLLM's own renderer before the clock, as
prefixq's producer tokenizes before its first enqueue, and submits every request at once as
token ids. The engines are plain vLLM: no KV-cache events. Engines are started once and warmed
with a few unrelated prompts; each burst starts with their prefix caches reset, and the clock
runs from the moment the requests are released to the last completion. (Until session 22 the
prompts went in as text, tokenized inside the clock, while prefixq's clock began before its
producer rendered, tokenized and routed.)
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import os
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from rq.queue import Queue

from benchmarks.cputime import busiest_threads, merge_counts, rounded, thread_times, tree_cpu
from benchmarks.machine import MachineWatch
from benchmarks.resident import Resident
from benchmarks.steps import steps_record
from common import keys
from common.config import Settings
from common.model import resolve_model
from common.prompts import load_tokenizer, render, split_prompt
from producer.client import Client
from producer.items import Item
from producer.launch import RedisServer, one_core_each

WARMUP = [f"Count to {n}." for n in range(2)]


@dataclass(frozen=True)
class ShardResult:
    """What one standalone engine process reports."""

    shard: str
    num_requests: int
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int
    finished_at: float
    engine_cpu_s: float = 0.0  # the engine's processes, from the start to the end of the burst
    frontend_cpu_s: float = 0.0  # this process (AsyncLLM's front end), the same span
    engine_preempted: dict[str, int] = field(default_factory=dict)  # the engine processes' main threads, the same span
    engine_cpu_by_process: dict[str, float] = field(default_factory=dict)  # engine_cpu_s by process name
    steps: list[tuple[float, ...]] | None = None  # the burst's engine steps, with PREFIXQ_STEP_TRACE
    cpu_span: tuple[float, float] = (0.0, 0.0)  # when (time.time()) the CPU figures were first and last read


def assign(items: list[Item], settings: Settings, model_path: str,
           policy: str = "affinity") -> dict[str, list[str]]:
    """Rendered prompts per shard, in order, as prefixq's router places them for one producer
    submitting ``items`` to empty queues (the protocol's "same routing done in the client").

    Until session 21 the baseline placed each new document on the shard with the fewest prompt
    tokens so far, where prefixq's router counts the tokens a shard has not cached: the two
    splits of reuse-256 differed (132/124 requests against 128/128), and on resident standalone
    engines prefixq's split ran the burst about 5% faster (benchmark notes, session 21).
    """
    tokenizer = load_tokenizer(model_path)
    with RedisServer(appendonly=False) as server:
        client = Client(replace(settings, redis_url=server.url))
        client.submit_many(items, policy=policy)
        prompts: dict[str, list[str]] = {shard: [] for shard in settings.shards}
        for shard in settings.shards:
            for job_id in client.redis.lrange(Queue(keys.queue_name(shard), connection=client.redis).key, 0, -1):
                index = int(job_id.decode().rpartition("-")[2])
                head, rest = split_prompt(tokenizer, items[index].messages)
                prompts[shard].append(head + rest)
        client.redis.close()
    placed = sum(map(len, prompts.values()))
    if placed != len(items):
        raise RuntimeError(f"routing placed {placed} of {len(items)} requests")
    return prompts


class Standalone(Resident):
    """Standalone engines kept running between bursts: one process per shard, each bound to its
    own core (or to ``cores[i]``), warmed once. Every burst starts with their prefix caches reset.

    Use as a context manager; :meth:`run` runs one burst.
    """

    def __init__(self, cores: list[int] | None = None) -> None:
        self.settings = Settings.from_env()
        self.cores = cores or one_core_each(len(self.settings.shards))
        self.model_path = resolve_model(self.settings.model, self.settings.model_cache)
        ctx = mp.get_context("spawn")
        self._go, self._all_finished = ctx.Event(), ctx.Event()
        self._procs: list[Any] = []
        self._conns: list[Any] = []
        self._finished: list[Any] = []
        self._ctx = ctx
        self.runs = 0

    def start(self) -> None:
        for core, shard in zip(self.cores, self.settings.shards):
            parent, child = self._ctx.Pipe()
            finished = self._ctx.Event()
            proc = self._ctx.Process(target=_serve, args=(shard, core, child,
                                                          self._go, finished, self._all_finished))
            proc.start()
            self._procs.append(proc)
            self._conns.append(parent)
            self._finished.append(finished)
        for conn, proc in zip(self._conns, self._procs):
            self._recv(conn, proc, 900)  # "ready": started and warmed

    @property
    def pids(self) -> list[int]:
        return [proc.pid for proc in self._procs]

    def close(self) -> None:
        for conn in self._conns:
            try:
                conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        for proc in self._procs:
            proc.join(120)
            if proc.is_alive():
                proc.kill()
        self._procs, self._conns = [], []

    def run(self, items: list[Item], sampling: dict[str, Any], policy: str = "affinity", *,
            before_clock: Callable[[], None] | None = None) -> dict[str, Any]:
        """One burst over ``items``, every request released at once; throughput and cache figures.
        ``before_clock`` runs once the prefix caches are reset, just before the release."""
        per_shard = assign(items, self.settings, self.model_path, policy)
        self._go.clear()
        self._all_finished.clear()
        for finished in self._finished:
            finished.clear()
        self.runs += 1
        for conn, prompts in zip(self._conns, per_shard.values()):
            conn.send((self.runs, prompts, sampling))
        for conn, proc in zip(self._conns, self._procs):
            self._recv(conn, proc, 300)  # "armed": prefix cache reset, waiting for the go
        if before_clock is not None:
            before_clock()
        threads0 = thread_times(self.pids)
        with MachineWatch() as machine:
            t0 = time.time()
            self._go.set()
            for finished, proc in zip(self._finished, self._procs):
                while not finished.wait(1.0):
                    if not proc.is_alive():
                        raise RuntimeError(f"a standalone engine exited with {proc.exitcode}")
            # The shards read their CPU now, as the last result is seen (prefixq's is read when
            # its last result is stored), not after the machine watch's last reading: refreshing
            # DAMON's statistics there takes up to a second or more, while the engines spin.
            threads = busiest_threads(threads0, thread_times(self.pids))
            self._all_finished.set()
            results: list[ShardResult] = [self._recv(conn, proc, 600) for conn, proc in zip(self._conns, self._procs)]
        elapsed = max(r.finished_at for r in results) - t0
        prompt = sum(r.prompt_tokens for r in results)
        return {"system": "standalone", "policy": policy, "prompts": "token ids",
                "requests": len(items), "seconds": round(elapsed, 2),
                "requests_per_s": round(len(items) / elapsed, 4),
                "cached_fraction": round(sum(r.cached_tokens for r in results) / prompt, 4),
                "per_shard": {r.shard: r.num_requests for r in results},
                "tokens_per_shard": {r.shard: {"prompt": r.prompt_tokens, "cached": r.cached_tokens,
                                               "completion": r.completion_tokens} for r in results},
                "cpu_s": {"engine": round(sum(r.engine_cpu_s for r in results), 2),
                          "frontend": round(sum(r.frontend_cpu_s for r in results), 2)},
                "frontend_threads": threads,
                "engine_preempted": merge_counts(r.engine_preempted for r in results),
                "engine_cpu_by_process": rounded(merge_counts(r.engine_cpu_by_process for r in results)),
                "machine": machine.summary(clock=t0),
                # Where the shards' CPU figures were read, against the clock (0 at the release,
                # ``seconds`` at the last result): [earliest first reading, latest last reading].
                "cpu_window_s": [round(min(r.cpu_span[0] for r in results) - t0, 3),
                                 round(max(r.cpu_span[1] for r in results) - t0, 3)],
                **steps_record({r.shard: r.steps for r in results if r.steps is not None}, t0, t0 + elapsed)}

    @staticmethod
    def _recv(conn: Any, proc: Any, timeout_s: float) -> Any:
        """The engine process's next message; raises if it died or said nothing in time."""
        deadline = time.monotonic() + timeout_s
        while not conn.poll(1.0):
            if not proc.is_alive():
                raise RuntimeError(f"a standalone engine exited with {proc.exitcode}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"a standalone engine said nothing for {timeout_s:g} s")
        message = conn.recv()
        if isinstance(message, BaseException):
            raise RuntimeError("a standalone engine failed") from message
        return message


def run_standalone(items: list[Item], sampling: dict[str, Any], policy: str = "affinity") -> dict[str, Any]:
    """One standalone run over ``items`` on freshly started engines."""
    with Standalone() as engines:
        return engines.run(items, sampling, policy)


def _serve(shard: str, core: int, conn: Any, go: Any, finished: Any, all_finished: Any) -> None:
    os.environ["VLLM_CPU_OMP_THREADS_BIND"] = str(core)
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "WARNING")
    try:
        asyncio.run(_serve_bursts(shard, conn, go, finished, all_finished))
    except BaseException as e:  # the parent raises it
        conn.send(RuntimeError(f"{shard}: {type(e).__name__}: {e}"))
        raise


async def _serve_bursts(shard: str, conn: Any, go: Any, finished: Any, all_finished: Any) -> None:
    from worker.engines import VllmEngine

    loop = asyncio.get_running_loop()
    settings = Settings.from_env().replace(kv_events=False)  # plain vLLM
    model_path = resolve_model(settings.model, settings.model_cache)
    engine = VllmEngine(model_path, settings)
    try:
        tokenizer = load_tokenizer(model_path)
        await asyncio.gather(*(engine.generate(f"warm-{i}", render(tokenizer, Item.prompt(p).messages),
                                               {"max_tokens": 8}) for i, p in enumerate(WARMUP)))
        conn.send("ready")
        while (command := await loop.run_in_executor(None, conn.recv)) is not None:
            burst, prompts, sampling = command
            if not await engine.reset_prefix_cache():
                raise RuntimeError("vLLM refused to reset its prefix cache")
            # Tokenized before the clock, by vLLM's own renderer, and handed over as prefixq's
            # workers hand theirs (a tuple of ids): prefixq's producer tokenizes before its
            # first enqueue, so neither system's clock includes tokenizing.
            prompts = [tuple(engine.tokenize(p)) for p in prompts]
            conn.send("armed")
            await loop.run_in_executor(None, go.wait)
            cpu0 = tree_cpu(os.getpid())
            cpu_from = time.time()
            first_step = len(engine.step_trace or ())
            outs = await asyncio.gather(*(engine.generate(f"{shard}-{burst}-{i}", p, sampling)
                                          for i, p in enumerate(prompts)))
            finished_at = time.time()
            # CPU is read when every shard has finished, as it is for prefixq (whose figure is
            # read when the burst's last result is stored): both then include idle spinning
            # after the last step of whichever engine finished first.
            finished.set()
            await loop.run_in_executor(None, all_finished.wait)
            cpu = tree_cpu(os.getpid()) - cpu0
            cpu_to = time.time()
            conn.send(ShardResult(shard, len(outs), sum(o.prompt_tokens for o in outs),
                                  sum(o.cached_tokens for o in outs), sum(o.completion_tokens for o in outs),
                                  finished_at,
                                  engine_cpu_s=cpu.children_s, frontend_cpu_s=cpu.own_s,
                                  engine_preempted=cpu.children_preempted,
                                  engine_cpu_by_process=cpu.children_by_name,
                                  steps=None if engine.step_trace is None else engine.step_trace[first_step:],
                                  cpu_span=(cpu_from, cpu_to)))
    finally:
        engine.shutdown()
