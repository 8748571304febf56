"""Shared fixtures: a private redis-server per test session, the built-in model, real workers."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis

from producer.launch import RedisServer, WorkerProcess, free_port, start_workers

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# Workers (started once per session) use database 0; unit tests get database 15, flushed per test.
WORKER_DB = 0
SCRATCH_DB = 15
SHARDS = ("gpu0", "gpu1")


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server


@pytest.fixture
def redis(redis_server: RedisServer) -> Iterator[Redis]:
    """A clean database of the session's redis-server."""
    client = Redis(port=redis_server.port, db=SCRATCH_DB)
    client.flushdb()
    yield client
    client.close()


@pytest.fixture
def scratch_url(redis_server: RedisServer) -> str:
    return f"redis://127.0.0.1:{redis_server.port}/{SCRATCH_DB}"


@pytest.fixture(scope="session")
def model_path() -> str:
    from common.model import prepare_builtin_model

    return str(prepare_builtin_model())


@pytest.fixture(scope="session")
def worker_url(redis_server: RedisServer) -> str:
    return f"redis://127.0.0.1:{redis_server.port}/{WORKER_DB}"


@pytest.fixture(scope="session")
def metrics_ports() -> dict[str, int]:
    """The Prometheus port of each session worker."""
    return {shard: free_port() for shard in SHARDS}


@pytest.fixture(scope="session")
def workers(worker_url: str, model_path: str, metrics_ports: dict[str, int],
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[WorkerProcess]]:
    """Two real vLLM workers (gpu0, gpu1), each bound to one CPU core, for the whole session."""
    log_dir: Path = tmp_path_factory.mktemp("worker-logs")
    procs = start_workers(list(SHARDS), redis_url=worker_url, log_dir=log_dir, timeout_s=900,
                          metrics_ports=[metrics_ports[shard] for shard in SHARDS])
    yield procs
    for proc in procs:
        proc.stop()
