"""Standalone vLLM on one burst with two shard splits, alternating on the same resident engines:
``own``, the baseline's client routing (``benchmarks.standalone.assign``: each new document on
the shard with the fewest prompt tokens so far), and ``prefixq``, the split prefixq's router makes
(``benchmarks.standalone.assign`` since 28c3cef; this session's runs used a copy of it that
stood in this file). Each burst starts with the prefix caches reset.

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
from producer.items import Item  # noqa: E402

def own_assign(items: list[Item], settings: Settings, model_path: str,
               policy: str = "affinity") -> dict[str, list[str]]:
    """The baseline's routing until 28c3cef (kept here so that this comparison can be rerun):
    each new document on the shard with the fewest prompt tokens so far."""
    tokenizer = load_tokenizer(model_path)
    load = {shard: 0 for shard in settings.shards}
    home: dict[str, str] = {}
    prompts: dict[str, list[str]] = {shard: [] for shard in settings.shards}
    for item in items:
        head, rest = split_prompt(tokenizer, item.messages)
        shard = home.get(head) or min(settings.shards, key=load.__getitem__)
        home.setdefault(head, shard)
        load[shard] += len(tokenizer.encode_batch([head + rest])[0])
        prompts[shard].append(head + rest)
    return prompts


prefixq_assign = standalone.assign  # since 28c3cef: prefixq's router, on a private redis-server


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
