"""CPU time of the processes a benchmark run is made of, split into engine and everything else.

On this machine each engine has a core of its own and everything else (vLLM's front-end
process, the worker's Redis threads, redis-server, the producer) runs on the same two cores: the
CPU the rest takes is what a serving layer can cost the engines.
"""

from __future__ import annotations

from dataclasses import dataclass

import psutil


@dataclass(frozen=True)
class TreeCpu:
    """CPU seconds (user + system) of one process and of its descendants."""

    own_s: float
    children_s: float

    def __sub__(self, other: TreeCpu) -> TreeCpu:
        return TreeCpu(self.own_s - other.own_s, self.children_s - other.children_s)


def tree_cpu(pid: int) -> TreeCpu:
    """The process's CPU time and the sum over its live descendants (0 if it is gone)."""
    try:
        proc = psutil.Process(pid)
        own = _cpu_s(proc)
        children = sum(_cpu_s(child) for child in proc.children(recursive=True))
    except psutil.NoSuchProcess:
        return TreeCpu(0.0, 0.0)
    return TreeCpu(own, children)


def _cpu_s(proc: psutil.Process) -> float:
    try:
        times = proc.cpu_times()
    except psutil.NoSuchProcess:
        return 0.0
    return times.user + times.system
