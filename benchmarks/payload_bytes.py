"""Bytes a producer writes to Redis for a burst, against the raw JSON of its rendered prompts.

    python -m benchmarks.payload_bytes [reuse-256|noreuse-64|FILE.jsonl]

Starts a private redis-server, submits the burst (no workers: nothing runs), and reads the
server's own count of bytes received (``INFO stats: total_net_input_bytes``), so everything the
producer sent counts: routing calls, shared documents, RQ job hashes, queue entries,
submission bookkeeping, and the protocol framing.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from redis import Redis

from common.config import Settings
from common.prompts import load_tokenizer, render
from producer.client import Client
from producer.launch import RedisServer
from benchmarks.workloads import load_items


def net_input_bytes(redis: Redis) -> int:
    return int(redis.info("stats")["total_net_input_bytes"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("burst", nargs="?", default="reuse-256")
    parser.add_argument("--out", type=Path, default=None, help="Also write the figures (JSON) here.")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    items = load_items(args.burst, max_tokens=32, temperature=0.0)
    with RedisServer(appendonly=False) as server:
        settings = Settings.from_env(redis_url=server.url)
        client = Client(settings)
        tokenizer = load_tokenizer(client.model_path)
        raw_json = sum(len(json.dumps(render(tokenizer, item.messages)).encode()) for item in items)
        probe = Redis.from_url(server.url)
        before = net_input_bytes(probe)
        submission = client.submit_many(items)
        sent = net_input_bytes(probe) - before - len(b"*2\r\n$4\r\nINFO\r\n$5\r\nstats\r\n")
        blob_bytes = sum(probe.strlen(k) for k in probe.scan_iter("prefixq:blob:*"))
        job_bytes = sum(probe.memory_usage(f"rq:job:{j}") or 0 for j in submission.job_ids)
        figures = {
            "burst": args.burst, "requests": len(items),
            "raw_prompt_json_bytes": raw_json,
            "bytes_written": sent,
            "ratio": round(sent / raw_json, 4),
            "one_in": round(raw_json / sent, 1),
            "shared_prefix_blob_bytes": blob_bytes,
            "rq_job_hashes_memory_bytes": job_bytes,
        }
    print(json.dumps(figures, indent=2))
    if args.out:
        args.out.write_text(json.dumps(figures) + "\n")


if __name__ == "__main__":
    main()
