"""What the CLI writes: result lines (JSONL) and the progress line on stderr."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any, TextIO

from producer.results import JobResult


def result_line(result: JobResult, question: str | None) -> dict[str, Any]:
    """One output line in prefixq's document-question result format (without ``question``
    when it is None: Redis keeps the rendered prompts, not the questions)."""
    line: dict[str, Any] = {"id": result.tag}
    if question is not None:
        line["question"] = question
    if result.completion is None:
        return {**line, "error": result.error}
    c = result.completion
    return {**line, "answer": c.text, "finish_reason": c.finish_reason, "usage": c.usage,
            "shard": c.shard}


def write_results(out: TextIO, results: Iterable[JobResult], questions: Iterable[str | None]) -> None:
    """One JSON line per result, flushed as each is written (so a follower sees it at once)."""
    for result, question in zip(results, questions):
        out.write(json.dumps(result_line(result, question), ensure_ascii=False) + "\n")
        out.flush()


class Progress:
    """Progress on stderr: done, failed, rate, ETA. On a terminal one line rewritten in place;
    otherwise (a log file) one line every ``log_interval_s`` seconds and one at the end.

    Use it as a context manager so an error message never lands on a half-written line.
    """

    def __init__(self, stream: TextIO, log_interval_s: float = 10.0) -> None:
        self.stream, self.started = stream, time.monotonic()
        self.is_tty = stream.isatty()
        self.log_interval_s = log_interval_s
        self._last_log = float("-inf")
        self._open_line = False

    def __call__(self, done: int, failed: int, total: int) -> None:
        now = time.monotonic()
        elapsed = now - self.started
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = f"{(total - done) / rate:.0f}s" if rate > 0 else "?"
        text = f"{done}/{total} done, {failed} failed, {rate:.2f} req/s, ETA {eta}"
        if self.is_tty:
            self.stream.write(f"\r{text}   " + ("\n" if done == total else ""))
            self._open_line = done != total
        elif done == total or now - self._last_log >= self.log_interval_s:
            self.stream.write(text + "\n")
            self._last_log = now
        self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._open_line:
            self.stream.write("\n")
            self.stream.flush()
            self._open_line = False
