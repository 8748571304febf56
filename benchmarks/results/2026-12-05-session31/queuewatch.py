"""Sample, every 0.2 s, what each shard has queued in Redis and its outstanding reserved work
(``prefixq:load``) during a prefixq burst: when does each queue run dry, and what would a
stealing worker have seen then? Finds the run's private redis-server by its listening port
(any but the machine's own 6379).

    PYTHONPATH=. python benchmarks/results/2026-12-05-session31/queuewatch.py OUT.jsonl &
    python -m benchmarks.routing --burst reuse-256 --policy affinity
"""

import json
import sys
import time

import psutil
from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from common import keys
from worker.stealing import queue_key

SHARDS = ("gpu0", "gpu1")


def private_redis() -> Redis | None:
    for proc in psutil.process_iter(["name"]):
        if proc.info["name"] != "redis-server":
            continue
        for conn in proc.net_connections(kind="tcp"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr.port != 6379:
                return Redis(host="127.0.0.1", port=conn.laddr.port)
    return None


def main(out: str, seconds: float = 600.0) -> None:
    deadline = time.monotonic() + seconds
    conn = None
    with open(out, "w") as f:
        while time.monotonic() < deadline:
            conn = conn or private_redis()
            if conn is None:
                time.sleep(0.5)
                continue
            try:
                with conn.pipeline(transaction=False) as pipe:
                    for shard in SHARDS:
                        pipe.llen(queue_key(shard))
                    pipe.hgetall(keys.LOAD_KEY)
                    *lengths, load = pipe.execute()
            except RedisConnectionError:  # the server went away: look for the next one
                conn = None
                continue
            if any(lengths) or load:
                f.write(json.dumps({"t": round(time.time(), 2), "queued": dict(zip(SHARDS, lengths)),
                                    "load": {k.decode(): int(v) for k, v in load.items()}}) + "\n")
                f.flush()
            time.sleep(0.2)


if __name__ == "__main__":
    main(sys.argv[1])
