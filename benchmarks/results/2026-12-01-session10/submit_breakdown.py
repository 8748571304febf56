"""Where submit_many's time goes, no workers, a private redis-server (a one-off tool of session 10):
    PYTHONPATH=<checkout> python submit_breakdown.py reuse-256|noreuse-64
Two timed submissions (wall ms), then one under cProfile (cumulative times, the top 35)."""
import cProfile, os, pstats, sys, time
os.environ.setdefault("HF_HUB_OFFLINE", "1")
from common.config import Settings
from producer.client import Client
from producer.launch import RedisServer
from benchmarks.workloads import load_items
burst = sys.argv[1]
items = load_items(burst, max_tokens=32, temperature=0.0)
with RedisServer(appendonly=False) as server:
    client = Client(Settings.from_env(redis_url=server.url))
    client.submit_many(load_items("noreuse-64", 1, max_tokens=8, temperature=0.0))
    for rep in range(2):
        server_r = client.redis; server_r.flushall()
        t0 = time.perf_counter()
        client.submit_many(items)
        print(burst, "wall ms", round((time.perf_counter() - t0) * 1e3, 1))
    client.redis.flushall()
    prof = cProfile.Profile(); prof.enable(); client.submit_many(items); prof.disable()
    pstats.Stats(prof).sort_stats("cumulative").print_stats(35)
