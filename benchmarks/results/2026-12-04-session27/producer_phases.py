"""The producer's CPU by phase for 20,000 small jobs in 40 submissions of 500 (no worker).

    PYTHONPATH=. python benchmarks/results/2026-12-04-session27/producer_phases.py

A private redis-server, two shards, the overhead benchmark's jobs; prints the wall time, the
producer's CPU, jobs/s, and the CPU in ``prepare`` (render, tokenize, hash), ``Client._route``
and ``Client._enqueue``.
"""
import time
from collections import defaultdict
from common.config import Settings
from producer.client import Client
from producer.launch import RedisServer
from benchmarks.overhead import _items
import producer.client as pc
spent = defaultdict(float)
def timed(name, fn):
    def wrapper(*a, **k):
        t = time.process_time()
        try:
            return fn(*a, **k)
        finally:
            spent[name] += time.process_time() - t
    return wrapper
with RedisServer(appendonly=False) as server:
    settings = Settings.from_env(redis_url=server.url, shards=("gpu0", "gpu1"), max_tokens=8)
    client = Client(settings)
    client._route = timed("route", client._route)
    client._enqueue = timed("enqueue", client._enqueue)
    pc.prepare = timed("prepare", pc.prepare)
    client.submit_many(_items(500))
    spent.clear()
    items = _items(20000)
    t0 = time.perf_counter(); cpu0 = time.process_time()
    for i in range(0, 20000, 500):
        client.submit_many(items[i:i + 500])
    cpu = time.process_time() - cpu0
    print("wall %.2f cpu %.2f jobs/s %.0f" % (time.perf_counter() - t0, cpu, 20000 / (time.perf_counter() - t0)), {k: round(v, 2) for k, v in spent.items()})
