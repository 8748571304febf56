"""``prefixq worker``: one long-lived process per GPU (or CPU core) serving one shard."""

from __future__ import annotations

import asyncio
import gc
import logging
import os

import click
from redis import Redis
from redis.exceptions import AuthenticationError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from common.codec import WireCodec
from common.config import Settings
from common.errors import ConfigError
from common.keys import is_valid_shard
from worker.metrics import WorkerMetrics


@click.command("worker")
@click.option("--shard", required=True, help="The shard (and RQ queue) to serve, e.g. gpu0.")
@click.option("--model", default=None, help="Model folder or name; default: the built-in SmolLM2-135M-Instruct.")
@click.option("--engine", type=click.Choice(["vllm", "sim"]), default=None,
              help="Inference engine [default: vllm]; sim is a simulator for load tests only.")
@click.option("--redis-url", default=None, help="Redis URL [env PREFIXQ_REDIS_URL].")
@click.option("--max-batch", type=int, default=None, help="Jobs moved per pull [default: 64].")
@click.option("--batch-wait-ms", type=float, default=None,
              help="When waiting on an empty queue brings a job, let the rest of the burst arrive "
                   "this long before pulling [default: 2].")
@click.option("--max-inflight", type=int, default=None,
              help="Bound on the jobs held started at once: in the engine, or finished with "
                   "their results not yet stored [default: 256].")
@click.option("--lookahead-steps", type=float, default=None,
              help="Pull only while the engine has fewer than this many steps' worth of prompt "
                   "tokens waiting (vLLM's max_num_batched_tokens a step), so queued jobs stay in "
                   "Redis for whichever worker is free first; 0 pulls up to --max-inflight at "
                   "once [default: 3].")
@click.option("--steal/--no-steal", default=None,
              help="When this shard's queue is empty and the engine wants more, take whole prefix "
                   "groups from the tail of a busier shard's queue [default: on].")
@click.option("--max-model-len", type=int, default=None, help="Context length [default: 4096].")
@click.option("--cpu-core", default=None,
              help="CPU build only: cores the engine binds to, e.g. 0 or 0-3 (sets "
                   "VLLM_CPU_OMP_THREADS_BIND; every thread of vLLM's processes is bound there).")
@click.option("--kv-cache-gib", type=click.IntRange(min=1), default=2, show_default=True,
              help="CPU build only: KV-cache size (sets VLLM_CPU_KVCACHE_SPACE unless already set).")
@click.option("--kv-cache-blocks", type=int, default=None,
              help="Size the KV cache to exactly this many blocks (vLLM's num_gpu_blocks_override; "
                   "for cache-pressure tests) [default: sized by vLLM].")
@click.option("--kv-events/--no-kv-events", default=None,
              help="Publish vLLM's KV-cache events into the routing state, so producers route on "
                   "the blocks this engine really holds [default: on].")
@click.option("--name", default=None, help="RQ worker name [default: <shard>.<host>.<random>].")
@click.option("--burst", is_flag=True, help="Exit once the queue is empty and nothing is in flight.")
@click.option("--metrics-port", type=int, default=None,
              help="Serve Prometheus metrics on this port (off unless given).")
@click.option("--metrics-host", default="127.0.0.1", show_default=True,
              help="Address the metrics server binds to (0.0.0.0 in containers).")
def worker_command(shard: str, model: str | None, engine: str | None, redis_url: str | None,
                   max_batch: int | None, batch_wait_ms: float | None, max_inflight: int | None,
                   lookahead_steps: float | None, steal: bool | None, max_model_len: int | None,
                   cpu_core: str | None, kv_cache_gib: int,
                   kv_cache_blocks: int | None, kv_events: bool | None, name: str | None,
                   burst: bool, metrics_port: int | None, metrics_host: str) -> None:
    """Serve one shard: pull its jobs in batches, run them on vLLM, store the results.

    \b
    Example (one worker per GPU; on a CPU machine, one per core):
      prefixq worker --shard gpu0 --cpu-core 0
      prefixq worker --shard gpu1 --cpu-core 1 --model /models/my-model

    Logs a line containing "ready" once the engine is up and it is pulling. SIGTERM stops
    pulling, finishes the jobs in flight and exits 0; an engine that dies exits 1.
    """
    if not is_valid_shard(shard):
        raise ConfigError(f"--shard: {shard!r} is not a valid shard name")
    settings = Settings.from_env(model=model, engine=engine, redis_url=redis_url, max_batch=max_batch,
                                 batch_wait_ms=batch_wait_ms, max_inflight=max_inflight,
                                 lookahead_steps=lookahead_steps, steal=steal,
                                 max_model_len=max_model_len, kv_cache_blocks=kv_cache_blocks,
                                 kv_events=kv_events)
    logging.basicConfig(level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if cpu_core is not None:
        os.environ["VLLM_CPU_OMP_THREADS_BIND"] = cpu_core
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", str(kv_cache_gib))  # vLLM reads whole GiB
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "WARNING")
    metrics = WorkerMetrics(shard)
    if metrics_port is not None:
        metrics.serve(metrics_port, metrics_host)
    code = asyncio.run(serve(settings, shard, name=name, burst=burst, metrics=metrics))
    if code != 0:
        # A dead engine can leave threads behind that would keep the interpreter from exiting;
        # the supervisor needs the exit status now.
        logging.shutdown()
        os._exit(code)
    raise SystemExit(code)


async def serve(settings: Settings, shard: str, *, name: str | None = None, burst: bool = False,
                metrics: WorkerMetrics | None = None) -> int:
    """Start the engine, register with RQ, and run until stopped; returns the exit code."""
    from common.model import resolve_model
    from worker.engines import ids_taken_from, make_engine
    from worker.recovery import Reaper
    from worker.rqbatch import ShardQueue, new_worker_name
    from worker.runner import WorkerRunner

    model_path = resolve_model(settings.model, settings.model_cache) if settings.engine == "vllm" \
        else "(none: simulator)"
    engine = make_engine(settings.engine, model_path, settings)
    try:
        takes_ids_of = ids_taken_from(engine, model_path)
        redis, codec = Redis.from_url(settings.redis_url), WireCodec(settings.max_decoded_bytes)
        delay_s = 0.1
        while True:  # RQ's worker asks Redis for its address: wait for a Redis that is restarting
            try:
                rq = ShardQueue(redis, shard, codec, name=name or new_worker_name(shard),
                                result_ttl_s=settings.result_ttl_s, heartbeat_ttl_s=settings.lease_s,
                                blob_cache_entries=settings.blob_cache_entries,
                                takes_ids_of=takes_ids_of)
                break
            except (RedisConnectionError, RedisTimeoutError) as e:
                if isinstance(e, AuthenticationError):
                    raise  # a wrong password does not get better by waiting
                logging.getLogger(__name__).warning("Redis unreachable (%s); retrying in %.1f s", e, delay_s)
                await asyncio.sleep(delay_s)
                delay_s = min(delay_s * 2, 10.0)
        reaper = Reaper(redis, codec, settings.shards, name=rq.name,
                        max_attempts=settings.max_attempts, result_ttl_s=settings.result_ttl_s,
                        down_grace_s=settings.shard_down_grace_s)
        code = await WorkerRunner(settings, engine, rq, model=model_path, reaper=reaper,
                                  metrics=metrics).run(burst=burst)
    except BaseException:
        engine.shutdown()
        raise
    if code != 0:  # a dead engine: end what is left of it without waiting on it
        engine.kill()
        return code
    engine.shutdown()
    gc.collect()
    return code
