"""``prefixq demo``: everything on one machine, started and stopped by one command."""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import click

from common.config import Settings, env_var
from common.model import prepare_builtin_model
from producer.client import Client
from producer.inputs import read_document_questions
from producer.items import Item
from producer.launch import RedisServer, start_workers


@contextlib.contextmanager
def _redis(settings: Settings) -> Iterator[str]:
    """The configured Redis, or a private one for the demo's lifetime."""
    if env_var("redis_url") in os.environ:
        yield settings.redis_url
        return
    with RedisServer() as server:
        click.echo(f"started a private redis-server on {server.url}", err=True)
        yield server.url


def run_demo(path: Path, *, max_tokens: int) -> None:
    """Answer every question of ``path`` with local workers and print them."""
    records = read_document_questions(path)
    settings = Settings.from_env(max_tokens=max_tokens)
    if not settings.model:
        click.echo(f"built-in model: {prepare_builtin_model(Path(settings.model_cache))}", err=True)
    with _redis(settings) as url, tempfile.TemporaryDirectory(prefix="prefixq-demo-") as logs:
        settings = settings.replace(redis_url=url)
        click.echo(f"starting {len(settings.shards)} workers ({', '.join(settings.shards)}); "
                   f"logs in {logs}", err=True)
        t0 = time.monotonic()
        workers = start_workers(list(settings.shards), redis_url=url, log_dir=Path(logs))
        try:
            click.echo(f"workers ready in {time.monotonic() - t0:.0f} s", err=True)
            items = [Item.document_question(r.document, q, tag=f"{r.id}/{i}", temperature=0.0)
                     for r in records for i, q in enumerate(r.questions)]
            t1 = time.monotonic()
            results = Client(settings).submit_many(items).wait(timeout=1800)
            click.echo(f"{len(results)} answers in {time.monotonic() - t1:.1f} s", err=True)
            questions = [q for r in records for q in r.questions]
            for result, question in zip(results, questions):
                answer = result.completion.text.strip() if result.completion else f"ERROR: {result.error}"
                shard = result.completion.shard if result.completion else "-"
                click.echo(f"[{result.tag} on {shard}] Q: {question}\n    A: {answer}")
        finally:
            for worker in workers:
                worker.stop()
