"""Each engine's processes stay on the core it was given."""

from __future__ import annotations

import os

import psutil
import pytest

from producer.launch import WorkerProcess
from worker.engines import bound_cores


@pytest.mark.parametrize(("spec", "cores"), [
    ("1", {1}), ("0-3", {0, 1, 2, 3}), ("0,2", {0, 2}), (" 0-1,3 ", {0, 1, 3}),
    ("auto", None), ("nobind", None), ("all", None), ("", None), ("0-1|2-3", None), ("1-", None),
])
def test_bound_cores_reads_one_engines_binding(spec: str, cores: set[int] | None) -> None:
    assert bound_cores(spec) == cores


@pytest.mark.vllm
def test_every_thread_of_each_engine_runs_on_its_workers_core(workers: list[WorkerProcess]) -> None:
    """vLLM binds only its compute threads; the worker binds the rest of the engine's processes
    (the engine core spins while it waits for a step and would take the other engine's core)."""
    for worker in workers:
        assert worker.proc is not None and worker.core is not None
        engine_procs = psutil.Process(worker.proc.pid).children(recursive=True)
        names = {p.name() for p in engine_procs}
        assert any("EngineCore" in n for n in names), names
        for proc in engine_procs:
            for thread in proc.threads():
                try:
                    assert os.sched_getaffinity(thread.id) == {worker.core}, (worker.shard, proc.name())
                except ProcessLookupError:  # a thread that ended meanwhile
                    continue
