"""A document split by a neighbour that begins alike (a tool of session 12): GFDL-1.2-01 and
GFDL-1.3-01 share their first 3 blocks. Routes question 0 of each, then question 1 of the first,
on a private redis-server; prints each route.  PYTHONPATH=<checkout> python split_repro.py"""
import json
from redis import Redis
from common.blocks import model_seed
from common.config import Settings
from common.prompts import load_tokenizer
from common.model import prepare_builtin_model
from producer.items import Item
from producer.prepare import prepare
from producer.launch import RedisServer
from producer.router import Router, parse_route
docs = {json.loads(l)["id"]: json.loads(l) for l in open("../shared/workloads/reuse-256.jsonl")}
tok = load_tokenizer(str(prepare_builtin_model()))
s = Settings.from_env({})
items = [Item.document_question(docs[d]["document"], docs[d]["questions"][k]) for d, k in
         [("GFDL-1.2-01", 0), ("GFDL-1.3-01", 0), ("GFDL-1.2-01", 1)]]
prep = prepare(tok, items, s.block_size, model_seed(s.model))
with RedisServer() as server:
    r = Redis.from_url(server.url)
    router = Router(r, ["gpu0", "gpu1"], s.block_size)
    for name, p in zip(["1.2-01 q0", "1.3-01 q0", "1.2-01 q1"], prep):
        with r.pipeline() as pipe:
            router.route(pipe, p.hashes, p.prompt_tokens)
            print(name, len(p.hashes), "blocks", parse_route(pipe.execute()[0]))
