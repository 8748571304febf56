"""What the rest of the machine did while a burst ran: CPU taken by processes outside the runs
being measured, and time the hypervisor gave to other guests (steal).

A run's own processes are the benchmark process and its descendants (standalone vLLM's engine
processes; prefixq's workers, their engines, redis-server). Everything else that ran on the two
cores during the burst (the machine's own services, kernel threads, a stray shell) took that
time from the engines, by an amount that changes from run to run: the record says how much.

    with MachineWatch() as watch:
        ...  # the burst
    record["machine"] = watch.summary()
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import psutil

TOP = 5  # the outside processes named in a record, costliest first


def _own_pids() -> set[int]:
    """This process and every process it started (the run being measured)."""
    me = psutil.Process(os.getpid())
    return {me.pid, *(child.pid for child in me.children(recursive=True))}


def _outside_cpu() -> dict[tuple[int, str], float]:
    """CPU seconds so far of every live process outside this one's tree, by (pid, name)."""
    own = _own_pids()
    cpu: dict[tuple[int, str], float] = {}
    for proc in psutil.process_iter(["name", "cpu_times"]):
        times = proc.info["cpu_times"]
        if proc.pid in own or times is None:
            continue
        cpu[(proc.pid, proc.info["name"] or "?")] = times.user + times.system
    return cpu


class MachineWatch:
    """Reads the machine's CPU counters and the outside processes' CPU at the start and end."""

    def __init__(self) -> None:
        self._before: dict[tuple[int, str], float] = {}
        self._after: dict[tuple[int, str], float] = {}
        self._times0: Any = None
        self._times1: Any = None

    def __enter__(self) -> MachineWatch:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self._before = _outside_cpu()
        self._times0 = psutil.cpu_times()

    def stop(self) -> None:
        self._times1 = psutil.cpu_times()
        self._after = _outside_cpu()

    def summary(self, top: int = TOP) -> dict[str, Any]:
        """``outside_cpu_s``: CPU of the processes outside the run (a process that started during
        the burst counts from 0, one that ended is missed); ``outside_top``: the costliest of
        them by name; ``steal_s`` and ``idle_s``: the machine's counters over the same span."""
        spent: Counter[str] = Counter()
        for key, cpu in self._after.items():
            used = cpu - self._before.get(key, 0.0)
            if used > 0:
                spent[key[1]] += used
        t0, t1 = self._times0, self._times1
        return {"outside_cpu_s": round(sum(spent.values()), 3),
                "outside_top": {name: round(s, 3) for name, s in spent.most_common(top)},
                "steal_s": round(t1.steal - t0.steal, 3),
                "idle_s": round((t1.idle + t1.iowait) - (t0.idle + t0.iowait), 3)}
