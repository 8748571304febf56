"""Commands to workers through Redis: RQ's shutdown command, and resetting prefix caches."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from redis import Redis
from rq.command import send_shutdown_command
from rq.worker import Worker

from common import keys
from common.config import Settings
from producer.admin import reset_prefix_caches
from producer.cli import main
from producer.client import Client
from producer.items import Item
from producer.launch import WorkerProcess

SHARDS = ("gpu0", "gpu1")


def test_rq_shutdown_command_drains_and_stops_a_worker(redis: Redis, scratch_url: str,
                                                      tmp_path: Path) -> None:
    """RQ's own ``send_shutdown_command`` stops a prefixq worker cleanly (SIMULATOR engine)."""
    worker = WorkerProcess("gpu0", redis_url=scratch_url, core=None, log_dir=tmp_path,
                           extra_args=("--engine", "sim"), env={"PREFIXQ_SHARDS": ",".join(SHARDS)}).start()
    try:
        worker.wait_ready(120)
        name = redis.get(keys.alive_key("gpu0"))
        assert name is not None
        assert [w.name for w in Worker.all(connection=redis)] == [name.decode()]
        send_shutdown_command(redis, name.decode())
        assert worker.proc is not None
        assert worker.proc.wait(timeout=60) == 0, worker.log_text()
        assert "shutdown command received" in worker.log_text()
        assert Worker.all(connection=redis) == []  # unregistered, as after SIGTERM
        assert redis.get(keys.alive_key("gpu0")) is None
    finally:
        worker.stop()


def test_reset_without_a_live_worker_says_so(redis: Redis, scratch_url: str) -> None:
    replies = reset_prefix_caches(redis, ("gpu0",), timeout_s=1)
    assert [(r.shard, r.worker, r.ok, r.detail) for r in replies] == [("gpu0", None, False, "no live worker")]
    result = CliRunner().invoke(main, ["reset-cache", "--redis-url", scratch_url, "--timeout", "1"])
    assert result.exit_code == 1
    assert result.stdout.splitlines() == ["gpu0: NOT reset (no worker: no live worker)",
                                          "gpu1: NOT reset (no worker: no live worker)"]


@pytest.mark.vllm
def test_reset_cache_empties_engines_and_routing_state(worker_url: str, workers: object) -> None:
    """After ``prefixq reset-cache`` the same document is computed again from scratch: vLLM
    reports no cached tokens, the confirmed sets are empty and each shard has a new epoch."""
    redis = Redis.from_url(worker_url)
    client = Client(Settings.from_env(redis_url=worker_url, max_tokens=4))
    document = " ".join(f"Fact {i}: the lighthouse keeper logged ship number {i * 7}." for i in range(40))
    asks = [Item.document_question(document, f"What is fact {n}?") for n in range(2)]

    first = [client.submit_many([ask], policy="affinity").wait(timeout=300)[0] for ask in asks]
    assert all(r.completion is not None for r in first)
    assert first[1].completion is not None and first[1].completion.cached_tokens > 0  # reuse before reset
    epochs = {s: int(redis.hget(keys.EPOCH_KEY, s) or 0) for s in SHARDS}

    result = CliRunner().invoke(main, ["reset-cache", "--redis-url", worker_url])
    assert result.exit_code == 0, result.output
    assert sorted(line.split(":")[0] for line in result.stdout.splitlines()) == list(SHARDS)
    assert {s: int(redis.hget(keys.EPOCH_KEY, s) or 0) for s in SHARDS} == {s: epochs[s] + 1 for s in SHARDS}
    assert all(redis.scard(keys.kv_confirmed_key(s)) == 0 for s in SHARDS)

    again = client.submit_many([asks[0]], policy="affinity").wait(timeout=300)
    assert again[0].completion is not None
    assert again[0].completion.cached_tokens == 0


def test_the_workers_threads_carry_their_names_into_the_os() -> None:
    """``top -H`` and /proc show prefixq's threads by name (the kernel keeps 15 bytes)."""
    import threading
    from pathlib import Path

    from worker.threads import name_this_thread

    seen: list[str] = []

    def run() -> None:
        name_this_thread()
        seen.append(Path(f"/proc/self/task/{threading.get_native_id()}/comm").read_text().strip())

    thread = threading.Thread(target=run, name="prefixq-commands")
    thread.start()
    thread.join()
    assert seen == ["prefixq-command"]
