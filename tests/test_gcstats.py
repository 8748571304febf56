"""The worker's GC monitor: pauses recorded per generation, the middle generation collected
more often and full collections more rarely, and everything restored when it stops."""

from __future__ import annotations

import gc

from worker.gcstats import FULL_EVERY, MIDDLE_EVERY, GcMonitor


def test_pauses_are_recorded_per_generation_and_thresholds_restored() -> None:
    before = gc.get_threshold()
    seen: list[float] = []
    monitor = GcMonitor(on_pause=seen.append)
    monitor.freeze_and_watch()
    try:
        assert gc.get_threshold() == (before[0], MIDDLE_EVERY, FULL_EVERY)
        gc.collect(0)
        gc.collect(2)
        summary = monitor.summary()
        assert summary["num_collections"] >= 2 and len(seen) == summary["num_collections"]
        assert summary["collections_by_gen"][0] >= 1 and summary["collections_by_gen"][2] >= 1
        assert summary["max_pause_ms"] == max(summary["max_pause_ms_by_gen"])
        assert isinstance(summary["max_cpu_ms"], float)  # reported; its size is for benchmarks
        assert 0 <= summary["switched_collections"] <= summary["num_collections"]
    finally:
        monitor.stop()
        gc.unfreeze()
    assert gc.get_threshold() == before
    count = monitor.num_collections
    gc.collect()
    assert monitor.num_collections == count  # no longer watching


def test_the_costliest_collection_says_its_generation_and_what_it_freed() -> None:
    monitor = GcMonitor()
    # Collections as gc reports them (times given, so nothing here depends on the machine).
    monitor._record(1.0, 0.5, {"generation": 0, "collected": 10, "uncollectable": 0}, switches=1)
    monitor._record(2.0, 3.0, {"generation": 2, "collected": 50_000, "uncollectable": 2}, switches=2)
    monitor._record(5.0, 1.0, {"generation": 1, "collected": 7, "uncollectable": 0})
    summary = monitor.summary()
    assert (summary["max_cpu_ms"], summary["max_cpu_generation"], summary["max_cpu_collected"]) == \
        (3.0, 2, 50_002)
    # The costliest collection was switched out twice; two of the three were switched out at all.
    assert (summary["max_cpu_switches"], summary["switched_collections"]) == (2, 2)
    assert summary["max_pause_ms"] == 5.0 and summary["collections_by_gen"] == [1, 1, 1]
