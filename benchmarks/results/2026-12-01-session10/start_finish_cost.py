"""Cost of ShardQueue.start / finish per job (no engine): args packed, CPU (session 10 tool).
PYTHONPATH=<checkout> python start_finish_cost.py [batch]"""
import os, sys, time, collections
os.environ.setdefault("HF_HUB_OFFLINE", "1")
import redis.commands.core as core
from common.codec import WireCodec
from common.config import Settings
from common.schema import Completion
from producer.client import Client
from producer.items import Item
from producer.launch import RedisServer
from worker.rqbatch import ShardQueue
from worker.runner import Outcome
batch = int(sys.argv[1]) if len(sys.argv) > 1 else 128
argcount = collections.Counter()
orig = core.Script.__call__
def counting(self, keys=[], args=[], client=None):
    argcount[self.__dict__.get("_tag", "lua")] += len(args)
    return orig(self, keys, args, client)
core.Script.__call__ = counting
with RedisServer(appendonly=False) as server:
    settings = Settings.from_env(redis_url=server.url, shards=("gpu0",))
    client = Client(settings)
    rq = ShardQueue(client.redis, "gpu0", WireCodec(), name="gpu0.cost", result_ttl_s=3600, heartbeat_ttl_s=60)
    rq.register_birth()
    tot = collections.Counter()
    for rep in range(20):
        client.submit_many([Item.prompt(f"Question {rep} {i}?", tag=str(i), max_tokens=8) for i in range(batch)])
        ids = rq.pull(batch, 0)
        argcount.clear()
        c0 = time.process_time(); started = rq.start(ids); c1 = time.process_time()
        a_start = sum(argcount.values()); argcount.clear()
        outs = [Outcome(s, completion=Completion(text="ok", finish_reason="length", prompt_tokens=5, cached_tokens=0,
                completion_tokens=8, shard="gpu0", worker=rq.name, timings_ms={})) for s in started]
        c2 = time.process_time(); rq.finish(outs); c3 = time.process_time()
        a_fin = sum(argcount.values())
        if rep >= 5:
            tot["start_us"] += (c1 - c0) / len(ids) * 1e6; tot["finish_us"] += (c3 - c2) / len(ids) * 1e6; tot["n"] += 1
    print(f"batch {batch}: start {tot['start_us']/tot['n']:.1f} us/job CPU, {a_start/batch:.1f} Lua args/job; "
          f"finish {tot['finish_us']/tot['n']:.1f} us/job CPU, {a_fin/batch:.1f} Lua args/job")
