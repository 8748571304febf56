"""Producer only: enqueue 20,000 small jobs (the overhead benchmark's) in submissions of 500."""
import time
from pathlib import Path
from common.config import Settings
from producer.client import Client
from producer.launch import RedisServer
from benchmarks.overhead import _items

if __name__ == "__main__":
    with RedisServer(appendonly=False) as server:
        client = Client(Settings.from_env(redis_url=server.url, shards=("gpu0",)))
        client.submit_many(_items(16))
        items = _items(20000)
        t = time.perf_counter(); c = time.process_time()
        for i in range(0, 20000, 500):
            client.submit_many(items[i:i + 500])
        print("enqueue jobs/s", round(20000 / (time.perf_counter() - t)), "cpu ms/job", round((time.process_time() - c) / 20, 4))
