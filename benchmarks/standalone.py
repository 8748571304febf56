"""The baseline: standalone vLLM, one process per shard running ``AsyncLLM`` directly.

The client does the same routing prefixq does for one producer (every question about a document
on one shard; a new document goes to the shard with the least prompt tokens so far), or
round-robin for the uplift comparison, and submits every request at once. The engines are plain
vLLM: no KV-cache events. Engines are started fresh, warmed with a few unrelated prompts, and the
clock runs from the moment the requests are released to the last completion.
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import os
import time
from dataclasses import dataclass
from typing import Any

from benchmarks.cputime import tree_cpu
from common.config import Settings
from common.model import resolve_model
from common.prompts import load_tokenizer, render
from producer.items import Item
from producer.prepare import split_prompt

WARMUP = [f"Count to {n}." for n in range(2)]


@dataclass(frozen=True)
class ShardResult:
    """What one standalone engine process reports."""

    shard: str
    num_requests: int
    prompt_tokens: int
    cached_tokens: int
    finished_at: float
    engine_cpu_s: float = 0.0  # the engine's processes, from the start to the end of the burst
    frontend_cpu_s: float = 0.0  # this process (AsyncLLM's front end), the same span


def assign(items: list[Item], shards: tuple[str, ...], model_path: str,
           policy: str = "affinity") -> dict[str, list[str]]:
    """Rendered prompts per shard: with ``affinity``, documents placed greedily on the
    least-loaded shard; with ``round-robin``, request ``i`` on shard ``i mod n``."""
    tokenizer = load_tokenizer(model_path)
    load = {shard: 0 for shard in shards}
    home: dict[str, str] = {}
    prompts: dict[str, list[str]] = {shard: [] for shard in shards}
    for i, item in enumerate(items):
        head, rest = split_prompt(tokenizer, item.messages)
        if policy == "round-robin":
            shard = shards[i % len(shards)]
        else:
            shard = home.get(head) or min(shards, key=load.__getitem__)
        home.setdefault(head, shard)
        load[shard] += len(tokenizer.encode_batch([head + rest])[0])
        prompts[shard].append(head + rest)
    return prompts


def _serve(shard: str, core: int, prompts: list[str], sampling: dict[str, Any], ready: Any,
           go: Any, finished: Any, all_finished: Any, out: Any) -> None:
    os.environ["VLLM_CPU_OMP_THREADS_BIND"] = str(core)
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "WARNING")
    out.put(asyncio.run(_run_engine(shard, prompts, sampling, ready, go, finished, all_finished)))


async def _run_engine(shard: str, prompts: list[str], sampling: dict[str, Any], ready: Any,
                      go: Any, finished: Any, all_finished: Any) -> ShardResult:
    from worker.engines import VllmEngine

    settings = Settings.from_env().replace(kv_events=False)  # plain vLLM
    engine = VllmEngine(resolve_model(settings.model, settings.model_cache), settings)
    try:
        tokenizer = load_tokenizer(resolve_model(settings.model, settings.model_cache))
        await asyncio.gather(*(engine.generate(f"warm-{i}", render(tokenizer, Item.prompt(p).messages),
                                               {"max_tokens": 8}) for i, p in enumerate(WARMUP)))
        ready.set()
        await asyncio.get_running_loop().run_in_executor(None, go.wait)
        cpu0 = tree_cpu(os.getpid())
        outs = await asyncio.gather(*(engine.generate(f"{shard}-{i}", p, sampling)
                                      for i, p in enumerate(prompts)))
        finished_at = time.time()
        # CPU is read when every shard has finished, as it is for prefixq (whose figure is read
        # when the burst's last result is stored): both then include idle spinning after the
        # last step of whichever engine finished first.
        finished.set()
        await asyncio.get_running_loop().run_in_executor(None, all_finished.wait, 3600)
        cpu = tree_cpu(os.getpid()) - cpu0
    finally:
        engine.shutdown()
    return ShardResult(shard, len(outs), sum(o.prompt_tokens for o in outs),
                       sum(o.cached_tokens for o in outs), finished_at,
                       engine_cpu_s=cpu.children_s, frontend_cpu_s=cpu.own_s)


def run_standalone(items: list[Item], sampling: dict[str, Any], policy: str = "affinity") -> dict[str, Any]:
    """One standalone run over ``items``; returns throughput and cache figures."""
    settings = Settings.from_env()
    per_shard = assign(items, settings.shards, resolve_model(settings.model, settings.model_cache), policy)
    ctx = mp.get_context("spawn")
    go, all_finished, out = ctx.Event(), ctx.Event(), ctx.Queue()
    readies, finishes, procs = [], [], []
    for core, (shard, prompts) in enumerate(per_shard.items()):
        ready, finished = ctx.Event(), ctx.Event()
        proc = ctx.Process(target=_serve, args=(shard, core % (os.cpu_count() or 1), prompts,
                                                sampling, ready, go, finished, all_finished, out))
        proc.start()
        readies.append(ready)
        finishes.append(finished)
        procs.append(proc)
    for ready in readies:
        if not ready.wait(900):
            raise RuntimeError("a standalone engine did not start")
    t0 = time.time()
    go.set()
    for finished, proc in zip(finishes, procs):
        while not finished.wait(1.0):
            if not proc.is_alive():
                raise RuntimeError(f"a standalone engine exited with {proc.exitcode}")
    all_finished.set()
    results = [out.get(timeout=3600) for _ in procs]
    for proc in procs:
        proc.join(120)
    elapsed = max(r.finished_at for r in results) - t0
    prompt = sum(r.prompt_tokens for r in results)
    return {"system": "standalone", "policy": policy, "requests": len(items), "seconds": round(elapsed, 2),
            "requests_per_s": round(len(items) / elapsed, 4),
            "cached_fraction": round(sum(r.cached_tokens for r in results) / prompt, 4),
            "per_shard": {r.shard: r.num_requests for r in results},
            "cpu_s": {"engine": round(sum(r.engine_cpu_s for r in results), 2),
                      "frontend": round(sum(r.frontend_cpu_s for r in results), 2)}}
