"""`prefixq status`, `results` and `cancel` against a real redis-server (no engine).

Jobs are enqueued by the real Client. Where a test needs started or finished jobs, it does a
worker's Redis bookkeeping with the worker's own ShardQueue (pull, start, store a result) and a
hand-made completion instead of an engine, so no vLLM process is needed.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result
from redis import Redis
from rq.job import Job
from rq.registry import CanceledJobRegistry

from common import keys
from common.codec import WireCodec
from common.config import Settings
from common.schema import Completion
from producer.cli import main
from producer.client import Client, Submission
from producer.items import Item
from worker.rqbatch import Outcome, ShardQueue, Started


@pytest.fixture
def client(redis: Redis, scratch_url: str, model_path: str) -> Client:
    return Client(Settings.from_env(redis_url=scratch_url))


def run(scratch_url: str, *args: str) -> Result:
    return CliRunner().invoke(main, [*args, "--redis-url", scratch_url])


def submit_prompts(client: Client, n: int, *, submission_id: str = "sub1",
                   policy: str = "round-robin") -> Submission:
    """``n`` plain prompts tagged p0..p<n-1>, alternating between the shards."""
    items = [Item.prompt(f"Say the number {i}.", tag=f"p{i}") for i in range(n)]
    return client.submit_many(items, submission_id=submission_id, policy=policy)


def work_off(redis: Redis, shard: str, *, num_jobs: int, finish: bool = True,
             error: str | None = None) -> tuple[ShardQueue, list[Started]]:
    """A worker's bookkeeping for ``num_jobs`` of ``shard``'s jobs, without an engine: register,
    pull, start, and (if ``finish``) store a made-up completion, or ``error`` as a failure."""
    rq = ShardQueue(redis, shard, WireCodec(), name=f"{shard}.test", result_ttl_s=3600,
                    heartbeat_ttl_s=60)
    rq.announce()
    started = rq.start(rq.pull(num_jobs, 0))
    assert len(started) == num_jobs and all(s.error is None for s in started)
    if finish:
        finish_jobs(rq, started, error=error)
    return rq, started


def finish_jobs(rq: ShardQueue, started: list[Started], *, error: str | None = None) -> None:
    rq.finish([Outcome(s, error=error) if error else Outcome(s, completion=Completion(
        text=f"answer to {s.request.tag if s.request else '?'}", finish_reason="stop",
        prompt_tokens=64, cached_tokens=32, completion_tokens=4, shard=rq.shard, worker=rq.name))
        for s in started])


def all_commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found += all_commands(command, (*prefix, name))
        else:
            found.append((*prefix, name))
    return found


# -- help ---------------------------------------------------------------------------------------


def test_every_command_has_help_with_an_example() -> None:
    commands = all_commands(main)
    assert {("status",), ("results",), ("cancel",), ("dashboard",), ("submit",), ("worker",)} <= set(commands)
    for path in commands:
        result = CliRunner().invoke(main, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert "Example" in result.stdout, path


def test_an_unreachable_redis_is_one_line_and_exit_1() -> None:
    result = CliRunner().invoke(main, ["status", "--redis-url", "redis://127.0.0.1:1/0"])
    assert result.exit_code == 1
    assert result.stderr.startswith("prefixq: error: Redis: ") and result.stderr.count("\n") == 1


# -- status -------------------------------------------------------------------------------------


def test_status_shows_queued_jobs_and_outstanding_load(client: Client, redis: Redis,
                                                       scratch_url: str) -> None:
    submit_prompts(client, 5)
    result = run(scratch_url, "status", "--json")
    assert result.exit_code == 0, result.output
    status = json.loads(result.stdout)
    shards = {s["shard"]: s for s in status["shards"]}
    assert list(shards) == ["gpu0", "gpu1"]
    assert shards["gpu0"]["queued"] == 3 and shards["gpu1"]["queued"] == 2
    load = {k.decode(): int(v) for k, v in redis.hgetall(keys.LOAD_KEY).items()}
    assert {name: s["load_tokens"] for name, s in shards.items()} == load
    assert all(n > 0 for n in load.values())
    assert shards["gpu0"]["hit_rate"] is None and status["workers"] == [] and status["jobs_per_s"] == 0

    text = run(scratch_url, "status").stdout
    assert "gpu0" in text and "gpu1" in text and "workers: none registered" in text


def test_status_shows_workers_hit_rates_and_throughput(client: Client, redis: Redis,
                                                       scratch_url: str) -> None:
    submit_prompts(client, 4)
    work_off(redis, "gpu0", num_jobs=2)
    work_off(redis, "gpu1", num_jobs=1, finish=False)  # busy with one job

    status = json.loads(run(scratch_url, "status", "--json").stdout)
    shards = {s["shard"]: s for s in status["shards"]}
    assert (shards["gpu0"]["queued"], shards["gpu0"]["finished"], shards["gpu0"]["started"]) == (0, 2, 0)
    assert (shards["gpu1"]["queued"], shards["gpu1"]["finished"], shards["gpu1"]["started"]) == (1, 0, 1)
    assert shards["gpu0"]["hit_rate"] == 0.5 and shards["gpu0"]["jobs"] == 2
    assert shards["gpu0"]["ended_in_window"] == 2 and status["jobs_per_s"] == pytest.approx(2 / 60)
    workers = {w["name"]: w for w in status["workers"]}
    assert set(workers) == {"gpu0.test", "gpu1.test"}
    assert workers["gpu0.test"]["successful_jobs"] == 2 and workers["gpu0.test"]["queues"] == ["gpu0"]
    assert workers["gpu1.test"]["state"] == "busy" and workers["gpu1.test"]["in_flight"] == 1

    text = run(scratch_url, "status").stdout
    assert "50.0%" in text and "gpu0.test" in text and "gpu1.test" in text
    assert "throughput: 0.03 jobs/s (2 finished or failed in the last 60 s)" in text


def test_status_of_one_submission(client: Client, redis: Redis, scratch_url: str) -> None:
    sub = submit_prompts(client, 5)
    work_off(redis, "gpu0", num_jobs=2)
    work_off(redis, "gpu1", num_jobs=1, finish=False)

    status = json.loads(run(scratch_url, "status", sub.id, "--json").stdout)
    assert status["total"] == 5 and status["done"] == 2
    assert status["counts"] == {"queued": 2, "started": 1, "finished": 2, "failed": 0}
    assert status["by_shard"] == {"gpu0": 3, "gpu1": 2}
    assert run(scratch_url, "status", sub.id).stdout == (
        "submission sub1: 2/5 done\njobs: queued 2, started 1, finished 2, failed 0\n"
        "by shard: gpu0 3, gpu1 2\n")


def test_status_counts_a_failed_job_as_failed(client: Client, redis: Redis, scratch_url: str) -> None:
    sub = submit_prompts(client, 2)
    work_off(redis, "gpu1", num_jobs=1, error="boom")
    status = json.loads(run(scratch_url, "status", sub.id, "--json").stdout)
    assert status["counts"]["failed"] == 1 and status["done"] == 1


def test_status_of_an_unknown_submission_is_one_line(redis: Redis, scratch_url: str) -> None:
    result = run(scratch_url, "status", "nope")
    assert result.exit_code == 1
    assert result.stderr == "prefixq: error: no submission 'nope' in Redis (expired or never made)\n"


# -- results ------------------------------------------------------------------------------------


def test_results_without_finished_jobs(client: Client, scratch_url: str) -> None:
    sub = submit_prompts(client, 3)
    result = run(scratch_url, "results", sub.id, "--wait", "--timeout", "0.3")
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.splitlines()[-1] == "prefixq: error: submission sub1: 0/3 done after 0.3 s"

    result = run(scratch_url, "results", sub.id)  # without --wait: what there is, and a note
    assert result.exit_code == 0 and result.stdout == ""
    assert "0 of 3 results written; 3 job(s) not finished yet (use --wait)" in result.stderr

    result = run(scratch_url, "results", sub.id, "--timeout", "1")
    assert result.exit_code == 2 and "--timeout needs --wait or --follow" in result.stderr


def test_results_are_written_in_input_order(client: Client, redis: Redis, scratch_url: str,
                                            tmp_path: Path) -> None:
    sub = submit_prompts(client, 5)
    work_off(redis, "gpu1", num_jobs=2)  # finish out of input order: p1, p3 first
    work_off(redis, "gpu0", num_jobs=3)
    out = tmp_path / "answers.jsonl"
    result = run(scratch_url, "results", sub.id, "--wait", "--timeout", "10", "--output", str(out))
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["id"] for line in lines] == ["p0", "p1", "p2", "p3", "p4"]
    assert lines[1] == {"id": "p1", "answer": "answer to p1", "finish_reason": "stop", "shard": "gpu1",
                        "usage": {"prompt_tokens": 64, "completion_tokens": 4, "total_tokens": 68,
                                  "prompt_tokens_details": {"cached_tokens": 32}}}

    plain = run(scratch_url, "results", sub.id)
    assert plain.exit_code == 0 and plain.stdout == out.read_text() and plain.stderr == ""

    followed = run(scratch_url, "results", sub.id, "--follow", "--timeout", "10")
    assert followed.exit_code == 0
    assert sorted(json.loads(line)["id"] for line in followed.stdout.splitlines()) == [
        "p0", "p1", "p2", "p3", "p4"]


def test_results_with_a_failed_job_exit_1(client: Client, redis: Redis, scratch_url: str) -> None:
    sub = submit_prompts(client, 2)
    work_off(redis, "gpu0", num_jobs=1)
    work_off(redis, "gpu1", num_jobs=1, error="engine said no")
    result = run(scratch_url, "results", sub.id)
    assert result.exit_code == 1
    assert json.loads(result.stdout.splitlines()[1]) == {"id": "p1", "error": "engine said no"}
    assert result.stderr == "prefixq: error: 1 of 2 job(s) failed (see 'error' in the output)\n"


def test_submit_wait_writes_questions_and_answers_in_input_order(redis: Redis, scratch_url: str,
                                                                model_path: str, tmp_path: Path) -> None:
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps({"id": "doc", "document": "Paris is in France.",
                                     "questions": ["Where is Paris?", "Which country?"]}) + "\n")
    submitted = run(scratch_url, "submit", str(questions), "--submission-id", "s1")
    assert submitted.exit_code == 0 and submitted.stdout == "s1\n"
    for shard in ("gpu0", "gpu1"):
        work_off(redis, shard, num_jobs=redis.llen(f"rq:queue:{shard}"))
    out = tmp_path / "answers.jsonl"
    waited = run(scratch_url, "submit", str(questions), "--submission-id", "s1", "--wait",
                 "--timeout", "10", "--output", str(out))
    assert waited.exit_code == 0, waited.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(line["id"], line["question"], line["answer"]) for line in lines] == [
        ("doc/0", "Where is Paris?", "answer to doc/0"), ("doc/1", "Which country?", "answer to doc/1")]


# -- cancel -------------------------------------------------------------------------------------


def test_cancel_takes_only_queued_jobs(client: Client, redis: Redis, scratch_url: str) -> None:
    other = submit_prompts(client, 2, submission_id="other")
    sub = submit_prompts(client, 6)
    work_off(redis, "gpu0", num_jobs=2)  # other-0 and sub1-0 finish
    busy, started = work_off(redis, "gpu1", num_jobs=2, finish=False)  # other-1, sub1-1 started

    result = run(scratch_url, "cancel", sub.id, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"submission_id": "sub1", "total": 6, "canceled": 4,
                                         "not_canceled": {"finished": 1, "started": 1}}
    canceled = ["sub1-2", "sub1-3", "sub1-4", "sub1-5"]
    assert [redis.hget(Job.key_for(j), "status") for j in canceled] == [b"canceled"] * 4
    assert redis.llen("rq:queue:gpu0") == 0 and redis.llen("rq:queue:gpu1") == 0
    assert sorted(CanceledJobRegistry("gpu0", connection=redis).get_job_ids(cleanup=False) +
                  CanceledJobRegistry("gpu1", connection=redis).get_job_ids(cleanup=False)) == canceled

    # The started jobs still finish; then no routing load is left over from the canceled ones.
    finish_jobs(busy, started)
    assert {int(v) for v in redis.hgetall(keys.LOAD_KEY).values()} == {0}
    # Waiters end: canceled jobs have a done mark and a result saying why.
    results = client.submission(sub.id).wait(timeout=5)
    assert [r.error for r in results] == [None, None] + [
        "canceled: removed from its queue by `prefixq cancel` before any worker took it"] * 4
    assert all(r is not None for r in other.results())

    again = run(scratch_url, "cancel", sub.id)
    assert again.exit_code == 0
    assert again.stdout == "canceled 0 of 6 job(s) of sub1; not canceled: canceled 4, finished 2\n"


def test_cancel_many_jobs_keeps_the_rest_of_the_queue_in_order(client: Client, redis: Redis,
                                                               scratch_url: str) -> None:
    first = submit_prompts(client, 10, submission_id="first")
    sub = submit_prompts(client, 60)  # 30 per shard: the script's single-pass path
    last = submit_prompts(client, 10, submission_id="last")
    result = run(scratch_url, "cancel", sub.id)
    assert result.stdout == "canceled 60 of 60 job(s) of sub1; not canceled: none\n"
    kept = [j.decode() for j in redis.lrange("rq:queue:gpu0", 0, -1)]
    assert kept == [j for j in first.job_ids + last.job_ids if int(j.rsplit("-", 1)[1]) % 2 == 0]
    assert {k.decode(): int(v) for k, v in redis.hgetall(keys.LOAD_KEY).items()} == _loads_of(
        redis, first.job_ids + last.job_ids)


def _loads_of(redis: Redis, job_ids: list[str]) -> dict[str, int]:
    """The routing load the given jobs reserved, by shard (read back from their payloads)."""
    from producer.admin import _load_tokens

    totals: dict[str, int] = {}
    for job_id in job_ids:
        origin, data = redis.hmget(Job.key_for(job_id), "origin", "data")
        assert origin is not None and data is not None
        totals[origin.decode()] = totals.get(origin.decode(), 0) + _load_tokens(data, WireCodec())
    return totals
