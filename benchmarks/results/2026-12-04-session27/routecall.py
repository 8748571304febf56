"""How long one routing script call holds Redis: 100 new documents of 40 blocks (block size 32)
in one call, then the same documents again (all predicted), three times, on a private
redis-server; then Redis's own count of microseconds per EVALSHA.

    PYTHONPATH=. python benchmarks/results/2026-12-04-session27/routecall.py

With ROUTE_CHUNK_BLOCKS at 1,024 the 100 documents go in four calls."""
import random, time
from producer.launch import RedisServer
from producer.router import Router, RoutingConfig, parse_routes
from common.blocks import block_hashes
from redis import Redis
with RedisServer(appendonly=False) as server:
    r = Redis.from_url(server.url)
    router = Router(r, ["gpu0", "gpu1"], 32, RoutingConfig())
    rng = random.Random(1)
    docs = [block_hashes([d] + [rng.randrange(50000) for _ in range(32 * 40 - 1)], 32, 7) for d in range(100)]
    for rep in range(3):
        for label, reqs in (("100 new docs x 40 blocks", [(h, 1300) for h in docs]), ("the same again (all predicted)", [(h, 1300) for h in docs])):
            t = time.perf_counter()
            with r.pipeline(transaction=False) as pipe:
                router.route(pipe, reqs)
                replies = pipe.execute()
            print(label, len(replies), "call(s)", "%.1f ms" % ((time.perf_counter() - t) * 1e3))
        r.flushdb()
    print(r.info("commandstats").get("cmdstat_evalsha"))
