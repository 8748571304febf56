"""What the CLI writes: result lines (prefixq's JSONL, or OpenAI batch output) and the progress
line on stderr."""

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


def openai_batch_line(result: JobResult, custom_id: str, url: str, model: str,
                      created: int | None = None) -> dict[str, Any]:
    """One line of an OpenAI Batch API output file for a request read from a batch input line.

    ``url`` is the request's endpoint: ``/v1/completions`` gets a ``text_completion`` body,
    anything else a ``chat.completion``. A failed job has ``"response": null`` and an
    ``error`` object, as OpenAI writes it. Ids are made from the RQ job id.
    """
    line: dict[str, Any] = {"id": f"batch_req_{result.job_id}", "custom_id": custom_id}
    c = result.completion
    if c is None:
        error = result.error or "failed"
        code = "batch_cancelled" if error.startswith("canceled") else "job_failed"
        return {**line, "response": None, "error": {"code": code, "message": error}}
    is_text = url == "/v1/completions"
    choice: dict[str, Any] = {"index": 0, "text": c.text} if is_text else \
        {"index": 0, "message": {"role": "assistant", "content": c.text}}
    body = {"id": f"{'cmpl' if is_text else 'chatcmpl'}-{result.job_id}",
            "object": "text_completion" if is_text else "chat.completion",
            "created": int(time.time()) if created is None else created, "model": model,
            "choices": [{**choice, "logprobs": None, "finish_reason": c.finish_reason}],
            "usage": c.usage}
    return {**line, "response": {"status_code": 200, "request_id": result.job_id, "body": body},
            "error": None}


def write_lines(out: TextIO, lines: Iterable[dict[str, Any]]) -> None:
    """One JSON line per object, flushed as each is written."""
    for line in lines:
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
        out.flush()


def write_results(out: TextIO, results: Iterable[JobResult], questions: Iterable[str | None]) -> None:
    """One JSON line per result, flushed as each is written (so a follower sees it at once)."""
    write_lines(out, (result_line(r, q) for r, q in zip(results, questions)))


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
