"""Several producer processes routing through the shared Redis state at the same time.

Four producers submit the reuse burst together to two shards (producer k sends question k of
every document, so all four race on every document). No workers run, so the jobs stay queued
where the router put them.
"""

from __future__ import annotations

import json
import multiprocessing
import multiprocessing.synchronize
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from common import keys

WORKLOADS = Path(__file__).resolve().parents[2] / "shared" / "workloads"
REUSE = WORKLOADS / "reuse-256.jsonl"
SHARDS = ("gpu0", "gpu1")
PRODUCERS = 4
TOLERANCE = 0.15


def _read_documents(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def produce(redis_url: str, k: int, path: str, barrier: multiprocessing.synchronize.Barrier,
            out: Any) -> None:
    """Producer ``k``: submit question ``k`` of every document (runs in a spawned process)."""
    from common.config import Settings
    from common.prompts import load_tokenizer
    from producer.client import Client
    from producer.items import Item

    docs = _read_documents(Path(path))
    client = Client(Settings.from_env(redis_url=redis_url, shards=SHARDS, policy="affinity"))
    items = [Item.document_question(d["document"], d["questions"][k], tag=f"{d['id']}/{k}") for d in docs]
    load_tokenizer(client.model_path)  # load before the barrier, so the producers race on routing
    barrier.wait(timeout=300)
    submission = client.submit_many(items)
    client.redis.close()
    out.put((k, submission.id))


@pytest.mark.timeout(600)
def test_four_producers_reuse_burst(redis: Redis, scratch_url: str, model_path: str) -> None:
    """Every document's questions on one shard; per-shard load within 15% of the mean."""
    if not REUSE.is_file():
        pytest.skip(f"the shared workload {REUSE} is absent (expected beside the repository)")
    from common.blocks import model_seed
    from common.config import Settings
    from common.prompts import load_tokenizer
    from producer.items import Item
    from producer.prepare import prepare

    docs = _read_documents(REUSE)
    assert len(docs) == 64 and all(len(d["questions"]) == PRODUCERS for d in docs)

    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(PRODUCERS)
    out = ctx.Queue()
    procs = [ctx.Process(target=produce, args=(scratch_url, k, str(REUSE), barrier, out), daemon=True)
             for k in range(PRODUCERS)]
    for p in procs:
        p.start()
    try:
        submissions = dict(out.get(timeout=540) for _ in procs)
    finally:
        for p in procs:
            p.join(timeout=60)
            if p.is_alive():
                p.kill()
                p.join()
        out.close()
        out.join_thread()
    assert [p.exitcode for p in procs] == [0] * PRODUCERS
    assert sorted(submissions) == list(range(PRODUCERS))

    # job id -> tag, through each submission's lists
    tag_of: dict[str, str] = {}
    for sub_id in submissions.values():
        job_ids = [j.decode() for j in redis.lrange(keys.submission_jobs_key(sub_id), 0, -1)]
        tags = [t.decode() for t in redis.lrange(keys.submission_tags_key(sub_id), 0, -1)]
        assert len(job_ids) == len(tags) == len(docs)
        tag_of.update(zip(job_ids, tags))

    shard_of: dict[str, str] = {}  # tag -> shard whose queue holds its job
    for shard in SHARDS:
        for job_id in redis.lrange(f"rq:queue:{keys.queue_name(shard)}", 0, -1):
            tag = tag_of[job_id.decode()]
            assert tag not in shard_of, f"{tag} queued twice"
            shard_of[tag] = shard
    assert len(shard_of) == PRODUCERS * len(docs) == 256

    split = {d["id"]: sorted({shard_of[f"{d['id']}/{k}"] for k in range(PRODUCERS)}) for d in docs}
    assert {doc: s for doc, s in split.items() if len(s) > 1} == {}

    raw = redis.hgetall(keys.LOAD_KEY)
    load = {s: int(raw.get(s.encode(), 0)) for s in SHARDS}
    _assert_balanced(load, "reserved load (uncached prompt tokens)")

    settings = Settings.from_env(redis_url=scratch_url, shards=SHARDS)
    items = [Item.document_question(d["document"], q, tag=f"{d['id']}/{k}")
             for d in docs for k, q in enumerate(d["questions"])]
    prepared = prepare(load_tokenizer(model_path), items, settings.block_size,
                       model_seed("SmolLM2-135M-Instruct"))
    prompt_tokens = {s: 0 for s in SHARDS}
    for p in prepared:
        prompt_tokens[shard_of[p.item.tag]] += p.prompt_tokens
    _assert_balanced(prompt_tokens, "prompt tokens")
    # the reserved load is what the prompts cost minus what the shard already held
    assert all(0 < load[s] < prompt_tokens[s] for s in SHARDS)


def _assert_balanced(per_shard: dict[str, int], what: str) -> None:
    mean = sum(per_shard.values()) / len(per_shard)
    assert mean > 0
    worst = max(abs(v - mean) / mean for v in per_shard.values())
    assert worst <= TOLERANCE, f"{what} per shard {per_shard}: {worst:.1%} from the mean"
