"""What the rest of the machine did while a burst ran: CPU taken by processes outside the runs
being measured, and time the hypervisor gave to other guests (steal).

A run's own processes are the benchmark process and its descendants (standalone vLLM's engine
processes; prefixq's workers, their engines, redis-server). Everything else that ran on the two
cores during the burst (the machine's own services, kernel threads, a stray shell) took that
time from the engines, by an amount that changes from run to run: the record says how much.

    with MachineWatch() as watch:
        ...  # the burst
    record["machine"] = watch.summary()

It also counts the memory the kernel took back during the burst: pages read back from disk (major
faults) in the run's own processes and in the whole machine, file pages refaulted after being
reclaimed, and what the kernel's proactive reclaimer (DAMON's ``pageout`` schemes, on machines
that run one) paged out. Code and file pages of the engines that are reclaimed mid-burst must be
read back, and the model waits for them.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import psutil

TOP = 5  # the outside processes named in a record, costliest first
DAMON = Path("/sys/kernel/mm/damon/admin/kdamonds")


def _own_pids() -> set[int]:
    """This process and every process it started (the run being measured)."""
    me = psutil.Process(os.getpid())
    return {me.pid, *(child.pid for child in me.children(recursive=True))}


def outside_name(name: str) -> str:
    """The name a process is reported under: a kernel worker thread's own part only (it renames
    itself after the work item it runs, "kworker/u8:0-events_unbound", "kworker/u8:0-writeback")."""
    return name.partition("-")[0] if name.startswith("kworker/") else name


def _vmstat(*names: str) -> dict[str, int]:
    """Counters from /proc/vmstat (0 for one this kernel lacks)."""
    found = dict.fromkeys(names, 0)
    try:
        for line in Path("/proc/vmstat").read_text().splitlines():
            name, _, value = line.partition(" ")
            if name in found:
                found[name] = int(value)
    except OSError:
        pass
    return found


def _major_faults(pids: set[int]) -> int:
    """Major page faults so far of some processes (field 12 of /proc/PID/stat)."""
    total = 0
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        total += int(stat.rpartition(")")[2].split()[9])
    return total


def damon_paged_out() -> int | None:
    """Bytes DAMON's ``pageout`` schemes have paged out so far, over every running kdamond; None
    where there is no DAMON, or its statistics cannot be refreshed (that takes root)."""
    total, found = 0, False
    for kdamond in sorted(DAMON.glob("[0-9]*")):
        try:
            if (kdamond / "state").read_text().strip() != "on":
                continue
            (kdamond / "state").write_text("update_schemes_stats")
            for scheme in kdamond.glob("contexts/*/schemes/[0-9]*"):
                if (scheme / "action").read_text().strip() == "pageout":
                    total += int((scheme / "stats" / "sz_applied").read_text())
                    found = True
        except (OSError, ValueError):
            return None
    return total if found else None


def _outside_cpu(own: set[int]) -> dict[tuple[int, float], tuple[str, float]]:
    """Every live process outside ``own`` (this one's tree), by (pid, start time): its name and
    its CPU seconds so far. Not by name: a process may rename itself during a burst (kernel
    worker threads do, all the time), and it must still be matched with its own earlier reading."""
    cpu: dict[tuple[int, float], tuple[str, float]] = {}
    for proc in psutil.process_iter(["name", "cpu_times", "create_time"]):
        times = proc.info["cpu_times"]
        if proc.pid in own or times is None:
            continue
        key = (proc.pid, proc.info["create_time"] or 0.0)
        cpu[key] = (outside_name(proc.info["name"] or "?"), times.user + times.system)
    return cpu


class MachineWatch:
    """Reads the machine's CPU counters and the outside processes' CPU at the start and end."""

    def __init__(self) -> None:
        self._before: dict[tuple[int, float], tuple[str, float]] = {}
        self._after: dict[tuple[int, float], tuple[str, float]] = {}
        self._times0: Any = None
        self._times1: Any = None
        self._memory0: dict[str, int | None] = {}
        self._memory1: dict[str, int | None] = {}
        self._started_at = self._stopped_at = 0.0  # time.time() at the CPU counters' two readings

    def __enter__(self) -> MachineWatch:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # The memory counters are read outside the CPU counters' span: refreshing DAMON's statistics
    # waits for the kdamond's next sampling interval (0.5 s here, longer under load).
    def start(self) -> None:
        own = _own_pids()
        self._memory0 = self._memory(own)
        self._before = _outside_cpu(own)
        self._times0 = psutil.cpu_times()
        self._started_at = time.time()

    def stop(self) -> None:
        self._times1 = psutil.cpu_times()
        self._stopped_at = time.time()
        own = _own_pids()
        self._after = _outside_cpu(own)
        self._memory1 = self._memory(own)

    @staticmethod
    def _memory(own: set[int]) -> dict[str, int | None]:
        vmstat = _vmstat("pgmajfault", "workingset_refault_file")
        return {"own_major_faults": _major_faults(own),
                "major_faults": vmstat["pgmajfault"],
                "file_refaults": vmstat["workingset_refault_file"],
                "damon_paged_out_bytes": damon_paged_out()}

    def summary(self, top: int = TOP, clock: float | None = None) -> dict[str, Any]:
        """``outside_cpu_s``: CPU of the processes outside the run (a process that started during
        the burst counts from 0, one that ended is missed); ``outside_top``: the costliest of
        them by name (a kernel worker thread's without its work item; its name at the end);
        ``steal_s`` and ``idle_s``: the machine's counters over the same span; ``memory``: major
        faults in the run's own processes (``own_major_faults``) and in the whole machine, file
        pages refaulted, and the bytes DAMON paged out (None where it cannot be read); with
        ``clock`` (a run's time 0), ``window_s``: when the CPU counters were read, against it."""
        spent: Counter[str] = Counter()
        for key, (name, cpu) in self._after.items():
            _, cpu_before = self._before.get(key, (name, 0.0))
            used = cpu - cpu_before
            if used > 0:
                spent[name] += used
        t0, t1 = self._times0, self._times1
        return {"outside_cpu_s": round(sum(spent.values()), 3),
                "outside_top": {name: round(s, 3) for name, s in spent.most_common(top)},
                "steal_s": round(t1.steal - t0.steal, 3),
                "idle_s": round((t1.idle + t1.iowait) - (t0.idle + t0.iowait), 3),
                "memory": {name: (None if before is None or self._memory1[name] is None
                                  else self._memory1[name] - before)
                           for name, before in self._memory0.items()},
                **({} if clock is None else
                   {"window_s": [round(self._started_at - clock, 3), round(self._stopped_at - clock, 3)]})}
