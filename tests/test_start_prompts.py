"""The prompt a worker builds when it starts a job whose token ids it can run: the producer's ids,
prefix and question joined, in a form the garbage collector stops walking.

Against a real redis-server; the jobs are enqueued by the real Client and started with the
worker's own ShardQueue, so no engine runs.
"""

from __future__ import annotations

import gc

from redis import Redis

from common.codec import WireCodec
from common.config import Settings
from common.prompts import document_messages, load_tokenizer, render
from producer.client import Client
from worker.rqbatch import ShardQueue


def test_token_id_prompts_are_the_whole_prompt_and_untracked_by_the_gc(redis: Redis, scratch_url: str,
                                                                        model_path: str) -> None:
    client = Client(Settings.from_env(redis_url=scratch_url))
    document = "The river Seine flows through Paris. " * 40
    questions = ["Which river?", "Which city?"]
    submission = client.submit_document(document, questions, doc_id="seine")
    shard = next(s for s in ("gpu0", "gpu1") if redis.llen(f"rq:queue:{s}"))
    tokenizer = load_tokenizer(model_path)
    rq = ShardQueue(redis, shard, WireCodec(), name=f"{shard}.start-test", result_ttl_s=3600,
                    heartbeat_ttl_s=60, takes_ids_of=lambda fingerprint: fingerprint == tokenizer.fingerprint)
    rq.announce()
    started = rq.start(rq.pull(len(questions), 0))
    assert [s.job.id for s in started] == submission.job_ids
    for s, question in zip(started, questions):
        assert s.error is None
        whole = tokenizer.encode_batch([render(tokenizer, document_messages(document, question))])[0]
        assert list(s.prompt) == whole and len(whole) > 300
        # A list of ids would stay tracked (and be walked by every collection of its generation)
        # for as long as the request runs; a tuple of ints is dropped at its first collection.
        gc.collect()
        assert not gc.is_tracked(s.prompt)
