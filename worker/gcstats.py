"""Garbage-collector pauses, measured with ``gc.callbacks`` after ``gc.freeze()``.

After the freeze the oldest generation holds only what the worker allocated since start-up, so
CPython's rule for full collections (when it has grown by a quarter) fires often; each full
collection walks every object that requests left alive. A full collection is therefore
allowed only once per ``FULL_EVERY`` collections of the middle generation (CPython's default
is 10).

The middle generation is collected after every ``MIDDLE_EVERY`` young collections (CPython:
10). A burst of admissions leaves every new request's objects alive through the young
collections it triggers; with CPython's default they pile up in the middle generation and one
collection then walks them all at once (up to 3 ms of CPU per reuse-256 burst, session 9).
Collected more often, the middle generation holds fewer of them each time; the total is a little
higher, since objects that live through a young collection but die soon after are walked there
more often (a reuse-256 burst: at most 1.1 ms of CPU per collection instead of 2.8 ms, 9-15 ms
of pauses per worker in all instead of 7-12 ms). Full collections stay about as rare as before
(about one per thousand young collections), and the young ones keep freeing cyclic garbage of
short-lived objects promptly.

A pause is timed twice: wall-clock (what the event loop lost) and the CPU time of the thread
that collected (what the collector itself cost). On a machine whose cores are busy with the
engines, the two differ by the time the OS ran something else mid-collection. The costliest
collection also says how often the OS switched the collector out mid-walk (involuntary context
switches, where the platform counts them per thread): in a probe of the collector alone, the
walks of an unchanging heap that cost 4-9 times the usual CPU had all been switched out mid-walk,
though most switched walks cost no more (benchmark notes, session 54).
"""

from __future__ import annotations

import gc
import resource
import time
from collections.abc import Callable
from typing import Any


MIDDLE_EVERY = 2  # young collections between middle-generation ones (CPython default: 10)
FULL_EVERY = 350  # middle-generation collections between full ones (CPython default: 10)

_RUSAGE_THREAD = getattr(resource, "RUSAGE_THREAD", None)  # Linux: this thread's own counts


def _involuntary_switches() -> int:
    """This thread's involuntary context switches so far (0 where not counted per thread)."""
    return resource.getrusage(_RUSAGE_THREAD).ru_nivcsw if _RUSAGE_THREAD is not None else 0


class GcMonitor:
    """Freezes what start-up allocated, then records every collection's pause."""

    def __init__(self, on_pause: Callable[[float], None] | None = None) -> None:
        self.on_pause = on_pause  # called with each pause, in seconds
        self.total_pause_ms = 0.0
        self.max_pause_ms_by_gen = [0.0, 0.0, 0.0]
        self.collections_by_gen = [0, 0, 0]
        self.max_cpu_ms = 0.0
        # The costliest collection (by the collector's CPU): its generation and what it freed,
        # to tell a long walk of live objects from a large heap of garbage.
        self.max_cpu_generation = -1
        self.max_cpu_collected = 0
        # How often the OS switched the collector out during that collection, and how many
        # collections in all were switched out at least once.
        self.max_cpu_switches = 0
        self.switched_collections = 0
        self._started_at = 0.0
        self._started_cpu = 0.0
        self._started_switches = 0
        self._thresholds = gc.get_threshold()

    @property
    def num_collections(self) -> int:
        return sum(self.collections_by_gen)

    @property
    def max_pause_ms(self) -> float:
        return max(self.max_pause_ms_by_gen)

    def freeze_and_watch(self) -> None:
        """Collect once, move every live object to the permanent generation, start timing."""
        gc.collect()
        gc.freeze()
        self._thresholds = gc.get_threshold()
        gc.set_threshold(self._thresholds[0], MIDDLE_EVERY, FULL_EVERY)
        gc.callbacks.append(self._on_gc)

    def stop(self) -> None:
        """Stop timing and restore the thresholds (the frozen objects stay frozen)."""
        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)
            gc.set_threshold(*self._thresholds)

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started_switches = _involuntary_switches()
            self._started_cpu = time.thread_time()
            self._started_at = time.perf_counter()
            return
        pause_ms = (time.perf_counter() - self._started_at) * 1000.0
        cpu_ms = (time.thread_time() - self._started_cpu) * 1000.0
        self._record(pause_ms, cpu_ms, info, _involuntary_switches() - self._started_switches)

    def _record(self, pause_ms: float, cpu_ms: float, info: dict[str, Any], switches: int = 0) -> None:
        """One collection: its wall-clock pause, the collector's CPU, gc's info dict, and how often
        the OS switched the collector out meanwhile."""
        self.total_pause_ms += pause_ms
        gen = int(info.get("generation", 2))
        if switches > 0:
            self.switched_collections += 1
        if cpu_ms > self.max_cpu_ms:
            self.max_cpu_ms, self.max_cpu_generation = cpu_ms, gen
            self.max_cpu_collected = int(info.get("collected", 0)) + int(info.get("uncollectable", 0))
            self.max_cpu_switches = switches
        self.collections_by_gen[gen] += 1
        self.max_pause_ms_by_gen[gen] = max(self.max_pause_ms_by_gen[gen], pause_ms)
        if self.on_pause is not None:
            self.on_pause(pause_ms / 1000.0)

    def summary(self) -> dict[str, float]:
        return {"num_collections": self.num_collections, "max_pause_ms": round(self.max_pause_ms, 3),
                "total_pause_ms": round(self.total_pause_ms, 3),
                "collections_by_gen": list(self.collections_by_gen),
                "max_pause_ms_by_gen": [round(v, 3) for v in self.max_pause_ms_by_gen],
                "max_cpu_ms": round(self.max_cpu_ms, 3),
                "max_cpu_generation": self.max_cpu_generation,
                "max_cpu_collected": self.max_cpu_collected,
                "max_cpu_switches": self.max_cpu_switches,
                "switched_collections": self.switched_collections}
