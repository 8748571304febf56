"""The producer Client against a real redis-server (no workers): routing, storage, validation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from redis import Redis

from common import keys
from common.config import Settings
from common.errors import InputError, PromptTooLongError
from common.prompts import document_messages, load_tokenizer, render
from common.rqjob import PrefixqJob
from common.schema import Request, SharedPrefix
from common.tokens import unpack_ids
from producer.cli import main
from producer.client import Client
from producer.items import Item


def test_documents_are_stored_once_and_jobs_reference_them(redis: Redis, scratch_url: str,
                                                           model_path: str) -> None:
    client = Client(Settings.from_env(redis_url=scratch_url))
    document = "The capital of France is Paris. " * 30
    submission = client.submit_document(document, ["Capital?", "Country?", "River?"], doc_id="fr")
    blobs = list(redis.scan_iter(f"{keys.PREFIX}:blob:*"))
    assert len(blobs) == 1
    prefix = SharedPrefix.from_wire(client.codec.loads(redis.get(blobs[0])))
    assert document in prefix.text
    assert submission.tags == ["fr/0", "fr/1", "fr/2"]
    assert redis.llen("rq:queue:gpu0") + redis.llen("rq:queue:gpu1") == 3
    assert {redis.llen("rq:queue:gpu0"), redis.llen("rq:queue:gpu1")} == {0, 3}  # one shard
    # The same document again (another submission) is not sent again.
    client.submit_document(document, ["Who?"], doc_id="fr")
    assert len(list(redis.scan_iter(f"{keys.PREFIX}:blob:*"))) == 1


def test_token_ids_travel_with_the_text_and_make_up_the_whole_prompt(redis: Redis, scratch_url: str,
                                                                      model_path: str) -> None:
    client = Client(Settings.from_env(redis_url=scratch_url))
    document = "Le café coûte 3,50 €.\n\n  Tabs\tand  spaces  " * 20
    submission = client.submit_document(document, ["Combien?", "Où ?"], doc_id="cafe")
    tokenizer = load_tokenizer(model_path)
    (blob,) = redis.scan_iter(f"{keys.PREFIX}:blob:*")
    prefix = SharedPrefix.from_wire(client.codec.loads(redis.get(blob)))
    assert prefix.tokenizer == tokenizer.fingerprint != ""
    assert unpack_ids(prefix.token_ids).tolist() == tokenizer.encode_batch([prefix.text])[0]
    for job_id, question in zip(submission.job_ids, ["Combien?", "Où ?"]):
        job = PrefixqJob.fetch(job_id, connection=redis, serializer=client.codec)
        request = Request.from_wire(job.args[0])
        assert request.tokenizer == tokenizer.fingerprint
        assert prefix.text + request.prompt == render(tokenizer, document_messages(document, question))
        # The two parts, tokenized apart, are exactly the whole prompt's tokens.
        whole = tokenizer.encode_batch([prefix.text + request.prompt])[0]
        assert unpack_ids(prefix.token_ids).tolist() + unpack_ids(request.token_ids).tolist() == whole


def test_resubmitting_the_same_id_enqueues_nothing(redis: Redis, scratch_url: str, model_path: str) -> None:
    client = Client(Settings.from_env(redis_url=scratch_url))
    first = client.submit_many([Item.prompt("a"), Item.prompt("b")], submission_id="batch-1")
    again = client.submit_many([Item.prompt("a"), Item.prompt("b")], submission_id="batch-1")
    assert again.job_ids == first.job_ids
    assert redis.llen("rq:queue:gpu0") + redis.llen("rq:queue:gpu1") == 2


def test_prompt_beyond_context_is_refused_before_enqueue(redis: Redis, scratch_url: str,
                                                         model_path: str) -> None:
    client = Client(Settings.from_env(redis_url=scratch_url, max_model_len=256))
    with pytest.raises(PromptTooLongError, match="context of 256 tokens: long"):
        client.submit_many([Item.prompt("short"), Item.prompt("word " * 400, tag="long")])
    assert redis.dbsize() == 0


def test_cli_names_file_line_and_field_for_a_document_beyond_context(
        redis: Redis, scratch_url: str, model_path: str, tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps({"id": "ok", "document": "Short.", "questions": ["Q?"]}) + "\n"
                    + json.dumps({"id": "big", "document": "word " * 5000, "questions": ["Q?"]}) + "\n")
    result = CliRunner().invoke(main, ["submit", str(path), "--redis-url", scratch_url])
    assert result.exit_code == 1
    assert f"{path}:2: document: the prompt for question 0 has" in result.output
    assert redis.dbsize() == 0


def test_submit_requires_prompt_or_messages(scratch_url: str) -> None:
    with pytest.raises(InputError, match="exactly one"):
        Client(Settings.from_env(redis_url=scratch_url)).submit()
