"""CPU time of the processes a benchmark run is made of, split into engine and everything else.

On this machine each engine has a core of its own and everything else (vLLM's front-end
process, the worker's Redis threads, redis-server, the producer) runs on the same two cores: the
CPU the rest takes is what a serving layer can cost the engines.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import psutil


@dataclass(frozen=True)
class TreeCpu:
    """CPU seconds (user + system) of one process and of its descendants, and how many times the
    descendants' main threads were preempted (involuntary context switches), by process name.
    vLLM's model runs in the main thread of its ``VLLM::Worker`` process, so that name's count
    is how often something else took the model's core; ``VLLM::EngineCore``'s includes its
    ``sched_yield`` spin while it waits for a step."""

    own_s: float
    children_s: float
    children_preempted: dict[str, int] = field(default_factory=dict)

    def __sub__(self, other: TreeCpu) -> TreeCpu:
        preempted = {name: n - other.children_preempted.get(name, 0) for name, n in self.children_preempted.items()}
        return TreeCpu(self.own_s - other.own_s, self.children_s - other.children_s, preempted)


def tree_cpu(pid: int) -> TreeCpu:
    """The process's CPU time and the sum over its live descendants (0 if it is gone)."""
    try:
        proc = psutil.Process(pid)
        own = _cpu_s(proc)
        descendants = proc.children(recursive=True)
        children = sum(_cpu_s(child) for child in descendants)
        preempted = merge_counts(_preempted(child) for child in descendants)
    except psutil.NoSuchProcess:
        return TreeCpu(0.0, 0.0)
    return TreeCpu(own, children, preempted)


def _cpu_s(proc: psutil.Process) -> float:
    try:
        times = proc.cpu_times()
    except psutil.NoSuchProcess:
        return 0.0
    return times.user + times.system


def _preempted(proc: psutil.Process) -> dict[str, int]:
    try:  # the main thread's count (Linux /proc/PID/status)
        return {proc.name(): proc.num_ctx_switches().involuntary}
    except psutil.NoSuchProcess:
        return {}


def merge_counts(counts: Iterable[dict[str, int]]) -> dict[str, int]:
    """Counts by name, summed over several processes' figures."""
    total: dict[str, int] = {}
    for one in counts:
        for name, n in one.items():
            total[name] = total.get(name, 0) + n
    return total
