"""Garbage-collector pauses, measured with ``gc.callbacks`` after ``gc.freeze()``."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any


class GcMonitor:
    """Freezes what start-up allocated, then records every collection's pause."""

    def __init__(self, on_pause: Callable[[float], None] | None = None) -> None:
        self.on_pause = on_pause  # called with each pause, in seconds
        self.num_collections = 0
        self.max_pause_ms = 0.0
        self.total_pause_ms = 0.0
        self._started_at = 0.0

    def freeze_and_watch(self) -> None:
        """Collect once, move every live object to the permanent generation, start timing."""
        gc.collect()
        gc.freeze()
        gc.callbacks.append(self._on_gc)

    def stop(self) -> None:
        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started_at = time.perf_counter()
            return
        pause_ms = (time.perf_counter() - self._started_at) * 1000.0
        self.num_collections += 1
        self.total_pause_ms += pause_ms
        self.max_pause_ms = max(self.max_pause_ms, pause_ms)
        if self.on_pause is not None:
            self.on_pause(pause_ms / 1000.0)

    def summary(self) -> dict[str, float]:
        return {"num_collections": self.num_collections, "max_pause_ms": round(self.max_pause_ms, 3),
                "total_pause_ms": round(self.total_pause_ms, 3)}
