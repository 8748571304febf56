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
    """CPU seconds (user + system) of one process and of its descendants, and how many times the
    descendants' main threads were preempted (involuntary context switches: another task took
    the core). vLLM's model runs in the main thread of its worker process on one core, so the
    latter counts how often something else interrupted the model."""

    own_s: float
    children_s: float
    children_preempted: int = 0

    def __sub__(self, other: TreeCpu) -> TreeCpu:
        return TreeCpu(self.own_s - other.own_s, self.children_s - other.children_s,
                       self.children_preempted - other.children_preempted)


def tree_cpu(pid: int) -> TreeCpu:
    """The process's CPU time and the sum over its live descendants (0 if it is gone)."""
    try:
        proc = psutil.Process(pid)
        own = _cpu_s(proc)
        descendants = proc.children(recursive=True)
        children = sum(_cpu_s(child) for child in descendants)
        preempted = sum(_preempted(child) for child in descendants)
    except psutil.NoSuchProcess:
        return TreeCpu(0.0, 0.0)
    return TreeCpu(own, children, preempted)


def _cpu_s(proc: psutil.Process) -> float:
    try:
        times = proc.cpu_times()
    except psutil.NoSuchProcess:
        return 0.0
    return times.user + times.system


def _preempted(proc: psutil.Process) -> int:
    try:
        return proc.num_ctx_switches().involuntary  # the main thread's (Linux /proc/PID/status)
    except psutil.NoSuchProcess:
        return 0
