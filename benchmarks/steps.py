"""Engine steps over one burst, from the step trace both systems' vLLM engines keep when the
benchmark asks for it (``PREFIXQ_STEP_TRACE``, see worker/engines.py).

A step's time is when vLLM's front end saw its output (the stat logger runs then), not when the
engine core ran it; both systems see their steps the same way. The summary answers where a
burst's time went on each shard: how long after the clock started the first step came, how
long the steps took (those that computed prompt tokens apart from those that only decoded),
how long after the last step the burst ended, and how many steps ran while requests waited to
be scheduled or with fewer running than the shard's busiest step.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

Step = Sequence[float]  # (time, running, waiting, prompt tokens, generated tokens)


def window(steps: Sequence[Step], start: float, end: float) -> list[Step]:
    """The steps seen from ``start`` to ``end`` (wall-clock seconds)."""
    return [s for s in steps if start <= s[0] <= end]


def summarize(steps: Sequence[Step], start: float, end: float) -> dict[str, float | int]:
    """One shard's steps over a burst that ran from ``start`` to ``end``."""
    steps = window(steps, start, end)
    if not steps:
        return {"steps": 0}
    times = [s[0] for s in steps]
    gaps = [b - a for a, b in zip(times, times[1:])]
    peak = max(int(s[1]) for s in steps)
    return {
        "steps": len(steps),
        "first_step_s": round(times[0] - start, 3),
        "last_step_s": round(times[-1] - start, 3),
        "after_last_step_s": round(end - times[-1], 3),
        "median_step_s": round(statistics.median(gaps), 4) if gaps else None,
        "max_step_s": round(max(gaps), 4) if gaps else None,
        **by_kind(steps),
        "prompt_tokens": int(sum(s[3] for s in steps)),
        "generated_tokens": int(sum(s[4] for s in steps)),
        "peak_running": peak,
        "steps_waiting": sum(1 for s in steps if s[2] > 0),
        "steps_below_peak": sum(1 for s in steps if s[1] < peak),
    }


def by_kind(steps: Sequence[Step]) -> dict[str, float | None]:
    """The steps' summed intervals and their medians, apart for steps that computed prompt
    tokens (a prefill, with any decodes) and steps that only decoded; a step's interval is the
    time since the step before it."""
    prefill = [b[0] - a[0] for a, b in zip(steps, steps[1:]) if b[3] > 0]
    decode = [b[0] - a[0] for a, b in zip(steps, steps[1:]) if b[3] <= 0]
    return {"prefill_steps_s": round(sum(prefill), 3),
            "median_prefill_step_s": round(statistics.median(prefill), 4) if prefill else None,
            "decode_steps_s": round(sum(decode), 3),
            "median_decode_step_s": round(statistics.median(decode), 4) if decode else None}


def per_shard(traces: dict[str, Sequence[Step]], start: float, end: float) -> dict[str, dict[str, float | int]]:
    """:func:`summarize` for each shard's trace."""
    return {shard: summarize(trace, start, end) for shard, trace in sorted(traces.items())}


def steps_record(traces: dict[str, Sequence[Step]], start: float, end: float) -> dict[str, object]:
    """The fields a run's record gets from its traces (none without traces): the summary per
    shard and the steps themselves (times relative to ``start``), for a closer look."""
    if not traces:
        return {}
    return {"steps": per_shard(traces, start, end),
            "step_trace": {shard: [[round(s[0] - start, 4), *s[1:]] for s in window(trace, start, end)]
                           for shard, trace in sorted(traces.items())}}
