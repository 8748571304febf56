"""Standalone vLLM on one burst with two shard splits, alternating on the same resident engines:
``own``, the baseline's client routing (``benchmarks.standalone.assign``: each new document on
the shard with the fewest prompt tokens so far), and ``prefixq``, the split prefixq's router makes
(the real ``Client`` submits the burst to a private redis-server with no worker, and the
queues' contents are read back). Each burst starts with the prefix caches reset.

    PYTHONPATH=. python benchmarks/results/2026-12-03-session21/split.py BURST ROUNDS OUT
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import benchmarks.standalone as standalone  # noqa: E402
from benchmarks.workloads import load_items  # noqa: E402
from common.config import Settings  # noqa: E402
from common.prompts import load_tokenizer, split_prompt  # noqa: E402
from producer.client import Client  # noqa: E402
from producer.items import Item  # noqa: E402
from producer.launch import RedisServer  # noqa: E402

own_assign = standalone.assign


def prefixq_assign(items: list[Item], shards: tuple[str, ...], model_path: str,
                   policy: str = "affinity") -> dict[str, list[str]]:
    """The prompts per shard as prefixq's router places them, in each queue's order."""
    tokenizer = load_tokenizer(model_path)
    with RedisServer() as server:
        client = Client(Settings.from_env(redis_url=server.url))
        client.submit_many(items, policy=policy)
        per_shard: dict[str, list[str]] = {}
        for shard in shards:
            per_shard[shard] = []
            for job_id in client.redis.lrange(f"rq:queue:{shard}", 0, -1):
                head, rest = split_prompt(tokenizer, items[int(job_id.decode().rsplit("-", 1)[1])].messages)
                per_shard[shard].append(head + rest)
    return per_shard


def main() -> None:
    burst, rounds, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    items = load_items(burst, max_tokens=32, temperature=0.0)
    sampling = {"max_tokens": 32, "temperature": 0.0}
    splits = {"own": own_assign, "prefixq": prefixq_assign}
    with standalone.Standalone() as engines:
        for r in range(rounds):
            order = ["own", "prefixq"] if r % 2 == 0 else ["prefixq", "own"]
            for name in order:
                standalone.assign = splits[name]
                record: dict[str, Any] = engines.run(items, sampling)
                record.update({"burst": burst, "round": r, "split": name})
                with open(out, "a") as f:
                    f.write(json.dumps(record) + "\n")
                print(name, r, record["seconds"], record["per_shard"], record["tokens_per_shard"], flush=True)


if __name__ == "__main__":
    main()
