"""End to end with real parts: redis-server, two `prefixq worker` processes on real vLLM."""

from __future__ import annotations

import json
import subprocess
import sys
import zlib
from pathlib import Path

import msgpack
import pytest
from redis import Redis
from rq.job import Job, JobStatus
from rq.queue import Queue
from rq.registry import FinishedJobRegistry

from common import keys
from common.codec import MAGIC, serializer
from common.config import Settings
from common.prompts import document_messages, load_tokenizer, split_prompt
from common.rqjob import PrefixqJob
from common.schema import Request
from common.tokens import pack_ids
from producer.client import Client, JobHandle
from producer.prepare import content_id
from producer.inputs import read_document_questions
from producer.items import Item

pytestmark = pytest.mark.vllm

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "documents.jsonl"


@pytest.fixture
def client(worker_url: str, workers: object) -> Client:
    return Client(Settings.from_env(redis_url=worker_url, max_tokens=24))


def test_sixteen_questions_about_four_documents(client: Client) -> None:
    records = read_document_questions(EXAMPLES)
    assert len(records) == 4 and sum(len(r.questions) for r in records) == 16
    items = [Item.document_question(r.document, q, tag=f"{r.id}/{i}", temperature=0.0)
             for r in records for i, q in enumerate(r.questions)]
    submission = client.submit_many(items)
    results = submission.wait(timeout=900)
    assert [r.tag for r in results] == [item.tag for item in items]

    # Every result is fetched again by its job id alone, through a fresh handle.
    for job_id, tag in zip(submission.job_ids, submission.tags):
        fetched = client.submission(submission.id).handles[submission.job_ids.index(job_id)].result(timeout=1)
        assert fetched.job_id == job_id and fetched.tag == tag
        assert fetched.completion is not None, fetched.error
        assert fetched.completion.text.strip()
        assert fetched.completion.prompt_tokens > 0 and fetched.completion.completion_tokens > 0

    by_tag = {r.tag: r for r in results}
    paris = by_tag["france/0"].completion
    assert paris is not None and "Paris" in paris.text

    # All questions about one document went to one shard, and both shards got work.
    shards_per_doc = {r.id: {by_tag[f"{r.id}/{i}"].completion.shard for i in range(4)} for r in records}  # type: ignore[union-attr]
    assert all(len(s) == 1 for s in shards_per_doc.values())
    # Questions after the first about a document hit vLLM's prefix cache.
    assert any(r.completion and r.completion.cached_tokens > 0 for r in results)


def test_jobs_move_through_rq_registries(client: Client, worker_url: str) -> None:
    handle = client.submit("What is the capital of France?", temperature=0.0)
    result = handle.result(timeout=600)
    assert result.completion is not None and "Paris" in result.completion.text
    assert handle.status() == JobStatus.FINISHED
    redis = Redis.from_url(worker_url)
    shard = result.completion.shard
    assert handle.id in FinishedJobRegistry(shard, connection=redis).get_job_ids()
    job = Job.fetch(handle.id, connection=redis, serializer=serializer)
    assert job.func_name == keys.JOB_FUNC
    assert job.latest_result().return_value["text"] == result.completion.text


def test_job_data_is_zlib_msgpack_never_pickle(client: Client, worker_url: str) -> None:
    handle = client.submit("Say hi.", max_tokens=4)
    handle.result(timeout=600)
    raw = Redis.from_url(worker_url).hget(Job.key_for(handle.id), "data")
    assert raw is not None and raw.startswith(MAGIC)
    func, instance, args, kwargs = msgpack.unpackb(zlib.decompress(raw[len(MAGIC):]))
    assert func == keys.JOB_FUNC and instance is None and kwargs == {}
    assert "Say hi." in args[0]["p"]
    assert b"\x80\x04" not in raw[:2] and b"\x80\x05" not in raw[:2]  # no pickle protocol header


def test_rq_info_sees_queues_and_workers(workers: object, worker_url: str) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "rq.cli", "info", "--url", worker_url,
         "--serializer", "common.codec.serializer"],
        capture_output=True, text=True, timeout=60, check=True).stdout
    assert "gpu0" in out and "gpu1" in out
    assert "2 workers" in out, out


def test_cli_submit_wait_writes_results_in_input_order(workers: object, worker_url: str,
                                                        tmp_path: Path) -> None:
    out_path = tmp_path / "answers.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "producer.cli", "submit", str(EXAMPLES), "--redis-url", worker_url,
         "--wait", "--output", str(out_path), "--max-tokens", "16", "--timeout", "900"],
        capture_output=True, text=True, timeout=1000)
    assert proc.returncode == 0, proc.stderr
    submission_id = proc.stdout.strip().splitlines()[-1]
    assert keys.is_valid_id(submission_id)
    lines = [json.loads(line) for line in out_path.read_text().splitlines()]
    records = read_document_questions(EXAMPLES)
    assert [line["id"] for line in lines] == [f"{r.id}/{i}" for r in records for i in range(len(r.questions))]
    assert [line["question"] for line in lines] == [q for r in records for q in r.questions]
    for line in lines:
        assert line["answer"].strip()
        usage = line["usage"]
        assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
        assert 0 <= usage["prompt_tokens_details"]["cached_tokens"] <= usage["prompt_tokens"]
        assert line["shard"] in ("gpu0", "gpu1")


def test_only_ids_of_the_checked_tokenizer_are_run_as_they_are(client: Client, worker_url: str) -> None:
    """Each job carries ids that would make nonsense: the worker must run the text instead,
    because they come from another tokenizer, or because the shared head was stored as text
    alone (by a producer that shipped no ids)."""
    redis = Redis.from_url(worker_url)
    tokenizer = load_tokenizer(client.model_path)
    question = "What is the capital of France?"
    head, rest = split_prompt(tokenizer, document_messages("Paris is the capital of France (ids test).", question))
    redis.set(keys.blob_key(content_id(head)), zlib.compress(head.encode()))  # text alone
    nonsense = pack_ids([0] * 8)
    requests = {
        "other-tokenizer": Request(prompt=head + rest, sampling={"max_tokens": 16, "temperature": 0.0},
                                   submission_id="ids-test", index=0, token_ids=nonsense,
                                   tokenizer="json:0000000000000000"),
        "text-only-head": Request(prompt=rest, sampling={"max_tokens": 16, "temperature": 0.0},
                                  submission_id="ids-test", index=1, prefix_id=content_id(head),
                                  token_ids=nonsense, tokenizer=tokenizer.fingerprint),
    }
    queue = Queue(keys.queue_name("gpu0"), connection=redis, serializer=client.codec, job_class=PrefixqJob)
    for request in requests.values():
        queue.enqueue_call(keys.JOB_FUNC, args=(request.to_wire(),),
                           job_id=keys.job_id(request.submission_id, request.index))
    for tag, request in requests.items():
        result = JobHandle(client, keys.job_id(request.submission_id, request.index), tag).result(timeout=300)
        assert result.is_ok, (tag, result.error)
        assert "Paris" in result.completion.text, tag  # type: ignore[union-attr]
