"""The Lua choose-and-reserve router, against the real Redis server (no tokenizer, no vLLM).

Requests are built from token-id lists: a "document" is a token list shared by its questions;
a question's block hashes are the document's full blocks (the shared head, as ``prepare`` hashes
it) and its prompt is the document plus the question tokens.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis import Redis

from common.blocks import block_hashes, model_seed
from common.keys import EPOCH_KEY, LOAD_KEY
from producer.router import Policy, Route, Router, RoutingConfig, parse_routes

SEED = model_seed("router-test-model")
NEVER_GUARD = dict(guard_abs_tokens=10**12, guard_rel=1000.0)
PROPERTY_SETTINGS = settings(max_examples=50, deadline=None,
                             suppress_health_check=[HealthCheck.function_scoped_fixture])


@dataclass(frozen=True)
class Doc:
    tokens: list[int]
    hashes: list[bytes]

    def prompt_tokens(self, question_tokens: int) -> int:
        return len(self.tokens) + question_tokens


def make_doc(rng: random.Random, n_tokens: int, marker: int, block_size: int) -> Doc:
    """A document whose first token (``marker``) is unique, so documents never share a block."""
    tokens = [marker] + [rng.randrange(50_000) for _ in range(n_tokens - 1)]
    return Doc(tokens, block_hashes(tokens, block_size, SEED))


def route(redis: Redis, router: Router, hashes: Sequence[bytes], prompt_tokens: int,
          policy: Policy = Policy.AFFINITY) -> Route:
    with redis.pipeline(transaction=False) as pipe:
        router.route(pipe, [(hashes, prompt_tokens)], policy)
        (reply,) = pipe.execute()
    return parse_routes([reply])[0]


def loads(redis: Redis, shards: Sequence[str]) -> dict[str, int]:
    raw = redis.hgetall(LOAD_KEY)
    return {s: int(raw.get(s.encode(), 0)) for s in shards}


def overloaded(load: dict[str, int], shard: str, cfg: RoutingConfig) -> bool:
    """The guard's condition for ``shard``, computed independently of the script."""
    low = min(load.values())
    return load[shard] > low + cfg.guard_abs_tokens and load[shard] > cfg.guard_rel * low


@st.composite
def workloads(draw: st.DrawFn) -> tuple[int, list[Doc], list[tuple[int, int]]]:
    """(block size, documents, interleaved requests as (document index, question tokens))."""
    block_size = draw(st.sampled_from([16, 32]))
    n_docs = draw(st.integers(2, 12))
    rng = draw(st.randoms(use_true_random=False))
    docs = [make_doc(rng, draw(st.integers(40, 700)), 100_000 + d, block_size) for d in range(n_docs)]
    requests = [(d, draw(st.integers(1, 60)))
                for d in range(n_docs) for _ in range(draw(st.integers(1, 6)))]
    return block_size, docs, draw(st.permutations(requests))


def eligible(cfg: RoutingConfig, matched: int, block_size: int, prompt_tokens: int) -> bool:
    return matched >= cfg.min_match_blocks and matched * block_size >= cfg.min_match_fraction * prompt_tokens


# -- 1. affinity with a guard that never fires --------------------------------------------------

@PROPERTY_SETTINGS
@given(work=workloads(), n_shards=st.integers(2, 4))
def test_documents_stick_to_one_shard_without_guard(redis: Redis, work: tuple[int, list[Doc], list[tuple[int, int]]],
                                                    n_shards: int) -> None:
    redis.flushdb()
    block_size, docs, requests = work
    shards = [f"gpu{i}" for i in range(n_shards)]
    cfg = RoutingConfig(**NEVER_GUARD)
    router = Router(redis, shards, block_size, cfg)
    placed: dict[int, str] = {}
    total = 0
    for d, q in requests:
        doc = docs[d]
        prompt = doc.prompt_tokens(q)
        r = route(redis, router, doc.hashes, prompt)
        assert not r.guarded
        if d in placed:
            assert r.matched_blocks == len(doc.hashes)
            assert eligible(cfg, r.matched_blocks, block_size, prompt)  # the generator's promise
            assert r.shard == placed[d], f"document {d} moved from {placed[d]} to {r.shard}"
            assert r.load_tokens == prompt - len(doc.hashes) * block_size
        else:
            assert r.matched_blocks == 0
            assert r.load_tokens == prompt
            placed[d] = r.shard
        total += r.load_tokens
    assert sum(loads(redis, shards).values()) == total


# -- 2. the load guard under a tight threshold ----------------------------------------------------

@PROPERTY_SETTINGS
@given(work=workloads(), n_shards=st.integers(2, 4), guard_abs=st.integers(0, 2000),
       guard_rel=st.floats(1.0, 2.0), initial=st.lists(st.integers(0, 3000), min_size=4, max_size=4))
def test_tight_guard_invariants(redis: Redis, work: tuple[int, list[Doc], list[tuple[int, int]]], n_shards: int,
                                guard_abs: int, guard_rel: float, initial: list[int]) -> None:
    redis.flushdb()
    block_size, docs, requests = work
    shards = [f"gpu{i}" for i in range(n_shards)]
    redis.hset(LOAD_KEY, mapping=dict(zip(shards, initial)))
    cfg = RoutingConfig(guard_abs_tokens=guard_abs, guard_rel=guard_rel)
    router = Router(redis, shards, block_size, cfg)
    held: dict[int, set[str]] = {}  # document -> shards its blocks were recorded on
    for d, q in requests:
        doc = docs[d]
        prompt = doc.prompt_tokens(q)
        before = loads(redis, shards)
        r = route(redis, router, doc.hashes, prompt)
        after = loads(redis, shards)
        holders = held.get(d)
        if holders is None:  # cold: least loaded, never guarded
            assert r.matched_blocks == 0 and not r.guarded
            assert before[r.shard] == min(before.values())
        else:
            assert r.matched_blocks == len(doc.hashes)
            assert eligible(cfg, r.matched_blocks, block_size, prompt)
            least_holder = min(before[s] for s in holders)  # the preferred holder's load
            preferred = next(s for s in holders if before[s] == least_holder)
            if r.guarded:
                assert r.shard not in holders
                assert before[r.shard] == min(before.values())
                assert overloaded(before, preferred, cfg)
            else:
                assert r.shard in holders and before[r.shard] == least_holder
                assert not overloaded(before, r.shard, cfg)
        expected = prompt - r.matched_blocks * block_size if holders and r.shard in holders else prompt
        assert r.load_tokens == expected
        assert after == {s: before[s] + (expected if s == r.shard else 0) for s in shards}
        held.setdefault(d, set()).add(r.shard)


# -- 3. guard edges ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("pref_load", "other_load", "guard_abs", "guard_rel", "moves"), [
    (2000, 1000, 1000, 1.5, False),   # exactly guard_abs above (relative exceeded): stays
    (2001, 1000, 1000, 1.5, True),    # one token more, relative also exceeded: moves
    (12000, 10000, 1000, 1.5, False),  # absolute exceeded, relative not (12000 <= 15000): stays
    (6000, 4000, 0, 1.5, False),      # exactly guard_rel times the other: stays
    (6001, 4000, 0, 1.5, True),       # one token more: moves
    (1, 0, 0, 1.0, True),             # an idle shard beside a busy one with no slack at all
])
def test_guard_edges(redis: Redis, pref_load: int, other_load: int, guard_abs: int, guard_rel: float,
                     moves: bool) -> None:
    shards, block_size = ["gpu0", "gpu1"], 16
    doc = make_doc(random.Random(7), 200, 1, block_size)
    router = Router(redis, shards, block_size, RoutingConfig(guard_abs_tokens=guard_abs, guard_rel=guard_rel))
    preferred = route(redis, router, doc.hashes, doc.prompt_tokens(10)).shard
    other = next(s for s in shards if s != preferred)
    redis.hset(LOAD_KEY, mapping={preferred: pref_load, other: other_load})
    prompt = doc.prompt_tokens(20)
    r = route(redis, router, doc.hashes, prompt)
    assert r.matched_blocks == len(doc.hashes)
    if moves:
        assert (r.shard, r.guarded, r.load_tokens) == (other, True, prompt)
        assert loads(redis, shards) == {preferred: pref_load, other: other_load + prompt}
    else:
        uncached = prompt - len(doc.hashes) * block_size
        assert (r.shard, r.guarded, r.load_tokens) == (preferred, False, uncached)
        assert loads(redis, shards) == {preferred: pref_load + uncached, other: other_load}
    # the blocks are recorded where they went: with the loads level again, the next question
    # finds them all on a shard that was sent them (after a move, on either), unguarded
    redis.hset(LOAD_KEY, mapping={s: 0 for s in shards})
    again = route(redis, router, doc.hashes, prompt)
    assert (again.matched_blocks, again.guarded) == (len(doc.hashes), False)
    assert again.shard in ({preferred, other} if moves else {preferred})
    assert again.load_tokens == prompt - len(doc.hashes) * block_size


# -- 4. minimum match ---------------------------------------------------------------------------------

def _second_route(redis: Redis, cfg: RoutingConfig, doc_tokens: int, prompt: int, block_size: int = 16,
                  ) -> tuple[str, Route, Doc]:
    """Route a document once, make its shard the busier one (far below the guard), route it again."""
    shards = ["gpu0", "gpu1"]
    doc = make_doc(random.Random(11), doc_tokens, 2, block_size)
    router = Router(redis, shards, block_size, cfg)
    preferred = route(redis, router, doc.hashes, prompt).shard
    other = next(s for s in shards if s != preferred)
    redis.hset(LOAD_KEY, mapping={preferred: 500, other: 100})
    return preferred, route(redis, router, doc.hashes, prompt), doc


@pytest.mark.parametrize(("doc_tokens", "sticks"), [(47, False), (48, True)])
def test_min_match_blocks_edge(redis: Redis, doc_tokens: int, sticks: bool) -> None:
    # min 3 blocks of 16: 47 tokens hold 2 full blocks (treated as unseen), 48 hold 3
    cfg = RoutingConfig(min_match_blocks=3, min_match_fraction=0.0)
    prompt = doc_tokens + 5
    preferred, r, doc = _second_route(redis, cfg, doc_tokens, prompt)
    assert r.matched_blocks == len(doc.hashes) == doc_tokens // 16
    assert not r.guarded
    if sticks:
        assert (r.shard, r.load_tokens) == (preferred, prompt - 48)
    else:
        assert r.shard != preferred and r.load_tokens == prompt


@pytest.mark.parametrize(("prompt", "sticks"), [(128, True), (129, False)])
def test_min_match_fraction_edge(redis: Redis, prompt: int, sticks: bool) -> None:
    # 2 matched blocks of 16 = 32 tokens; 0.25 * 128 = 32 (enough), 0.25 * 129 = 32.25 (not)
    cfg = RoutingConfig(min_match_blocks=1, min_match_fraction=0.25)
    preferred, r, doc = _second_route(redis, cfg, 40, prompt)
    assert r.matched_blocks == len(doc.hashes) == 2
    assert not r.guarded
    if sticks:
        assert (r.shard, r.load_tokens) == (preferred, prompt - 32)
    else:
        assert r.shard != preferred and r.load_tokens == prompt


def test_short_match_on_the_least_loaded_shard_still_counts_its_cached_blocks(redis: Redis) -> None:
    """Below the minimum match the prefix does not attract the request, but when the least-loaded
    shard happens to be the one holding it, the load reserved is the uncached part only."""
    shards, block_size = ["gpu0", "gpu1"], 16
    doc = make_doc(random.Random(3), 47, 3, block_size)
    router = Router(redis, shards, block_size, RoutingConfig(min_match_blocks=3, min_match_fraction=0.0))
    preferred = route(redis, router, doc.hashes, 52).shard
    other = next(s for s in shards if s != preferred)
    redis.hset(LOAD_KEY, mapping={preferred: 100, other: 500})
    r = route(redis, router, doc.hashes, 52)
    assert (r.shard, r.matched_blocks, r.guarded, r.load_tokens) == (preferred, 2, False, 52 - 32)


def test_longest_known_prefix_is_matched(redis: Redis) -> None:
    shards, block_size = ["gpu0", "gpu1"], 16
    base = make_doc(random.Random(5), 100, 4, block_size)  # 6 full blocks
    longer = base.tokens + [9] * 60
    router = Router(redis, shards, block_size, RoutingConfig(**NEVER_GUARD))
    first = route(redis, router, base.hashes, 110)
    r = route(redis, router, block_hashes(longer, block_size, SEED), 170)
    assert (r.shard, r.matched_blocks, r.load_tokens) == (first.shard, 6, 170 - 96)
    diverged = base.tokens[:50] + [7] * 50  # shares 3 full blocks only
    r = route(redis, router, block_hashes(diverged, block_size, SEED), 100)
    assert (r.shard, r.matched_blocks, r.load_tokens) == (first.shard, 3, 100 - 48)


def test_documents_that_begin_alike_each_keep_their_whole_prefix(redis: Redis) -> None:
    """Two documents share their first 3 blocks, too few to draw the second to the first's shard;
    the second's request records those blocks on its own shard too, and the first's later
    questions still match their whole prefix where they began (a key held one shard once:
    they then matched 3 blocks on the wrong shard and went wherever the load was least)."""
    shards, block_size = ["gpu0", "gpu1"], 16
    a = make_doc(random.Random(11), 200, 6, block_size)  # 12 full blocks
    b_tokens = a.tokens[:50] + make_doc(random.Random(12), 150, 7, block_size).tokens
    b = Doc(b_tokens, block_hashes(b_tokens, block_size, SEED))
    assert a.hashes[:3] == b.hashes[:3] and a.hashes[3] != b.hashes[3]
    router = Router(redis, shards, block_size, RoutingConfig(**NEVER_GUARD))
    home_a = route(redis, router, a.hashes, a.prompt_tokens(10)).shard
    first_b = route(redis, router, b.hashes, b.prompt_tokens(10))  # 48 of 210 tokens: below 25%
    assert (first_b.matched_blocks, first_b.shard != home_a) == (3, True)
    for question in (11, 12, 13):
        r = route(redis, router, a.hashes, a.prompt_tokens(question))
        assert (r.shard, r.matched_blocks) == (home_a, len(a.hashes))
        r = route(redis, router, b.hashes, b.prompt_tokens(question))
        assert (r.shard, r.matched_blocks) == (first_b.shard, len(b.hashes))

# -- 5. epochs ------------------------------------------------------------------------------------------

def test_epoch_bump_forgets_the_shards_prefixes(redis: Redis) -> None:
    shards, block_size = ["gpu0", "gpu1"], 16
    doc = make_doc(random.Random(9), 300, 5, block_size)
    router = Router(redis, shards, block_size, RoutingConfig(**NEVER_GUARD))
    shard = route(redis, router, doc.hashes, 310).shard
    other = next(s for s in shards if s != shard)
    redis.hincrby(EPOCH_KEY, other, 1)  # another shard's restart changes nothing here
    r = route(redis, router, doc.hashes, 310)
    assert (r.shard, r.matched_blocks) == (shard, len(doc.hashes))
    redis.hincrby(EPOCH_KEY, shard, 1)
    r = route(redis, router, doc.hashes, 310)
    assert r.matched_blocks == 0
    assert r.load_tokens == 310
    # recorded again under the current epoch: the next request matches
    assert route(redis, router, doc.hashes, 310).matched_blocks == len(doc.hashes)


# -- 6. tie-break -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("equal_load", [0, 5000])
def test_tie_break_is_stable_and_spreads(redis: Redis, equal_load: int) -> None:
    shards, block_size = ["gpu0", "gpu1"], 16
    router = Router(redis, shards, block_size, RoutingConfig())
    rng = random.Random(13)
    chosen: list[str] = []
    for i in range(40):
        doc = make_doc(rng, 120, 10 + i, block_size)
        picks = []
        for _ in range(2):
            redis.flushdb()
            redis.hset(LOAD_KEY, mapping={s: equal_load for s in shards})
            picks.append(route(redis, router, doc.hashes, 130).shard)
        assert picks[0] == picks[1], f"document {i} went to {picks} from the same cold state"
        chosen.append(picks[0])
    assert set(chosen) == set(shards)


# -- 7. other policies ------------------------------------------------------------------------------------

def test_round_robin_cycles_and_adds_load(redis: Redis) -> None:
    shards, block_size = ["gpu0", "gpu1", "gpu2"], 16
    router = Router(redis, shards, block_size, RoutingConfig())
    rng = random.Random(17)
    redis.hset(LOAD_KEY, mapping={"gpu0": 0, "gpu1": 10**6, "gpu2": 0})  # load is ignored
    got, added = [], {s: 0 for s in shards}
    for i in range(9):
        doc = make_doc(rng, 64 + i, 200 + i, block_size)
        r = route(redis, router, doc.hashes, 70 + i, Policy.ROUND_ROBIN)
        assert r.load_tokens == 70 + i and not r.guarded
        got.append(r.shard)
        added[r.shard] += r.load_tokens
    assert got == shards * 3
    assert loads(redis, shards) == {s: added[s] + (10**6 if s == "gpu1" else 0) for s in shards}


def test_round_robin_ignores_affinity(redis: Redis) -> None:
    shards, block_size = ["gpu0", "gpu1"], 16
    router = Router(redis, shards, block_size, RoutingConfig())
    doc = make_doc(random.Random(19), 64, 300, block_size)
    got = [route(redis, router, doc.hashes, 70, Policy.ROUND_ROBIN) for _ in range(4)]
    assert [r.shard for r in got] == ["gpu0", "gpu1", "gpu0", "gpu1"]
    # the first time on each shard nothing is cached there; then its 4 blocks are
    assert [r.load_tokens for r in got] == [70, 70, 70 - 64, 70 - 64]
    assert all(r.matched_blocks == 4 for r in got[1:])


def test_random_uses_every_shard_and_adds_load(redis: Redis) -> None:
    shards, block_size = ["gpu0", "gpu1", "gpu2"], 16
    router = Router(redis, shards, block_size, RoutingConfig())
    rng = random.Random(23)
    counts = {s: 0 for s in shards}
    total = 0
    for i in range(200):
        doc = make_doc(rng, 40, 1000 + i, block_size)
        r = route(redis, router, doc.hashes, 50, Policy.RANDOM)
        assert r.load_tokens == 50 and not r.guarded
        counts[r.shard] += 1
        total += r.load_tokens
    assert all(counts.values()), counts
    assert sum(loads(redis, shards).values()) == total == 200 * 50


# -- many requests to one call ---------------------------------------------------------------------

def routing_state(redis: Redis) -> dict[bytes, object]:
    """Every key in Redis and its value: the load and epoch hashes, the round-robin counter,
    every prediction."""
    return {key: redis.hgetall(key) if redis.type(key) == b"hash" else redis.get(key)
            for key in redis.scan_iter(match="*")}


@PROPERTY_SETTINGS
@given(work=workloads(), n_shards=st.integers(2, 4), guard_abs=st.integers(0, 2000),
       initial=st.lists(st.integers(0, 3000), min_size=4, max_size=4),
       policy=st.sampled_from([Policy.AFFINITY, Policy.ROUND_ROBIN]), chunk=st.sampled_from([1, 3, 500]),
       chunk_blocks=st.sampled_from([1, 40, 4096]))
def test_many_requests_to_one_call_route_as_one_call_each(
        redis: Redis, monkeypatch: pytest.MonkeyPatch, work: tuple[int, list[Doc], list[tuple[int, int]]],
        n_shards: int, guard_abs: int, initial: list[int], policy: Policy, chunk: int, chunk_blocks: int) -> None:
    """A call routes its requests in order, each seeing the load and predictions the ones before
    it left (a guard this tight fires on loads the call itself added): the same routes and the
    same keys as one call per request."""
    block_size, docs, requests = work
    shards = [f"gpu{i}" for i in range(n_shards)]
    router = Router(redis, shards, block_size, RoutingConfig(guard_abs_tokens=guard_abs, guard_rel=1.1))
    batch = [(docs[d].hashes, docs[d].prompt_tokens(q)) for d, q in requests]
    outcomes = []
    for together in (False, True):
        redis.flushdb()
        redis.hset(LOAD_KEY, mapping=dict(zip(shards, initial)))
        redis.hset(EPOCH_KEY, mapping={s: 1 for s in shards})
        if together:
            monkeypatch.setattr("producer.router.ROUTE_CHUNK", chunk)
            monkeypatch.setattr("producer.router.ROUTE_CHUNK_BLOCKS", chunk_blocks)
            with redis.pipeline(transaction=False) as pipe:
                router.route(pipe, batch, policy)
                replies = pipe.execute()
            sizes = [len(call) for call in replies]
            assert sum(sizes) == len(batch) and all(0 < size <= chunk for size in sizes)
            if chunk_blocks == 1:  # every request has a block at least: one a call
                assert sizes == [1] * len(batch)
            routes = parse_routes(replies)
        else:
            routes = [route(redis, router, hashes, prompt, policy) for hashes, prompt in batch]
        outcomes.append((routes, routing_state(redis)))
    assert outcomes[0] == outcomes[1]
    if policy is Policy.AFFINITY and len({d for d, _ in requests}) < len(requests):
        assert any(r.matched_blocks for r in outcomes[0][0])  # a later question found its document
