"""CPU time of the processes a benchmark run is made of, split into engine and everything else.

On this machine each engine has a core of its own and everything else (vLLM's front-end
process, the worker's Redis threads, redis-server, the producer) runs on the same two cores: the
CPU the rest takes is what a serving layer can cost the engines.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import psutil
from redis import Redis

Number = TypeVar("Number", int, float)


@dataclass(frozen=True)
class TreeCpu:
    """CPU seconds (user + system) of one process and of its descendants (in all, and by process
    name), and how many times the descendants' main threads were preempted (involuntary context
    switches), by process name. The split by name separates the model's ``VLLM::Worker`` from
    the scheduler's ``VLLM::EngineCore`` (which also runs vLLM's KV-cache events publisher).
    vLLM's model runs in the main thread of its ``VLLM::Worker`` process, so that name's count
    is how often something else took the model's core; ``VLLM::EngineCore``'s includes its
    ``sched_yield`` spin while it waits for a step."""

    own_s: float
    children_preempted: dict[str, int] = field(default_factory=dict)
    children_by_name: dict[str, float] = field(default_factory=dict)

    @property
    def children_s(self) -> float:
        return sum(self.children_by_name.values(), 0.0)

    def __sub__(self, other: TreeCpu) -> TreeCpu:
        preempted = {name: n - other.children_preempted.get(name, 0) for name, n in self.children_preempted.items()}
        # Every name of either side, so the difference of the sums is the sum of the differences.
        by_name = {name: self.children_by_name.get(name, 0.0) - other.children_by_name.get(name, 0.0)
                   for name in self.children_by_name.keys() | other.children_by_name.keys()}
        return TreeCpu(self.own_s - other.own_s, preempted, by_name)


def tree_cpu(pid: int) -> TreeCpu:
    """The process's CPU time and the sum over its live descendants (0 if it is gone)."""
    try:
        proc = psutil.Process(pid)
        own = _cpu_s(proc)
        descendants = proc.children(recursive=True)
        by_name = merge_counts(_by_name(child, _cpu_s) for child in descendants)
        preempted = merge_counts(_by_name(child, _preempted) for child in descendants)
    except psutil.NoSuchProcess:
        return TreeCpu(0.0)
    return TreeCpu(own, preempted, by_name)


def redis_cpu_s(conn: Redis) -> float:
    """redis-server's CPU seconds (user + system, all its threads), as it reports them in
    ``INFO cpu``: getrusage's figure, to the microsecond. psutil's reading of ``/proc`` counts
    in clock ticks (10 ms), too coarse for a run that costs Redis a few milliseconds."""
    info = conn.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def _cpu_s(proc: psutil.Process) -> float:
    try:
        times = proc.cpu_times()
    except psutil.NoSuchProcess:
        return 0.0
    return times.user + times.system


def _preempted(proc: psutil.Process) -> int:
    return proc.num_ctx_switches().involuntary  # the main thread's count (Linux /proc/PID/status)


def _by_name(proc: psutil.Process, figure: Callable[[psutil.Process], Number]) -> dict[str, Number]:
    """``{name: figure}`` for one process; nothing if it is gone."""
    try:
        return {proc.name(): figure(proc)}
    except psutil.NoSuchProcess:
        return {}


def merge_counts(counts: Iterable[dict[str, Number]]) -> dict[str, Number]:
    """Counts (or seconds) by name, summed over several processes' figures."""
    total: dict[str, Number] = {}
    for one in counts:
        for name, n in one.items():
            total[name] = total.get(name, 0) + n
    return total


def rounded(seconds: dict[str, float]) -> dict[str, float]:
    """Seconds by name, to the hundredth as the records give them."""
    return {name: round(s, 2) for name, s in seconds.items()}


TICK = os.sysconf("SC_CLK_TCK")
ThreadTimes = dict[tuple[int, int], tuple[str, float, float]]  # (pid, tid): (name, user s, system s)


def thread_times(pids: Iterable[int]) -> ThreadTimes:
    """Every thread of the given processes (not their children), with its user and system CPU
    seconds, from ``/proc/PID/task/TID/stat``. A process's main thread is named ``NAME (main)``."""
    out: ThreadTimes = {}
    for pid in pids:
        try:
            tasks = list(Path(f"/proc/{pid}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                name = (task / "comm").read_text().strip()
                fields = (task / "stat").read_text().rpartition(")")[2].split()
            except OSError:  # the thread ended meanwhile
                continue
            tid = int(task.name)
            out[(pid, tid)] = (f"{name} (main)" if tid == pid else name,
                               int(fields[11]) / TICK, int(fields[12]) / TICK)
    return out


def busiest_threads(before: ThreadTimes, after: ThreadTimes, top: int = 6) -> list[list[Any]]:
    """``[name, user s, system s]`` of the ``top`` thread names that used the most CPU from
    ``before`` to ``after``, summed over the processes' threads of that name (a thread that
    started meanwhile counts from zero)."""
    spent: dict[str, list[float]] = {}
    for key, (name, user, system) in after.items():
        _, user0, system0 = before.get(key, (name, 0.0, 0.0))
        total = spent.setdefault(name, [0.0, 0.0])
        total[0] += user - user0
        total[1] += system - system0
    ranked = sorted(spent.items(), key=lambda kv: -sum(kv[1]))[:top]
    return [[name, round(user, 2), round(system, 2)] for name, (user, system) in ranked]
