"""How long a producer takes from submit_many() to its jobs being on the queues, no workers
(a one-off tool of session 9): PYTHONPATH=<checkout> python submit_latency.py"""
import os, sys, time
os.environ.setdefault("HF_HUB_OFFLINE", "1")
from common.config import Settings
from producer.client import Client
from producer.launch import RedisServer
from benchmarks.workloads import load_items
for burst in ("noreuse-64", "reuse-256"):
    items = load_items(burst, max_tokens=32, temperature=0.0)
    for rep in range(3):
        with RedisServer(appendonly=False) as server:
            client = Client(Settings.from_env(redis_url=server.url))
            client.submit_many(load_items("noreuse-64", 1, max_tokens=8, temperature=0.0))  # tokenizer loaded
            t0 = time.perf_counter(); c0 = time.process_time()
            client.submit_many(items)
            print(burst, rep, "wall ms", round((time.perf_counter() - t0) * 1e3, 1), "cpu ms", round((time.process_time() - c0) * 1e3, 1))
