"""Prefix-affinity routing that any number of producers share through Redis.

For each request the producer computes chained block hashes of its token ids; one Lua script
then, atomically, measures how long a prefix of those blocks each shard holds, applies the
minimum match and the load guard, picks a shard, adds the request's uncached prompt tokens to
that shard's load, and predicts that the chosen shard now holds every block. Workers take the
load off as jobs finish and bump their shard's epoch when they start (a restarted engine
holds nothing).

What a shard holds is known two ways: predicted (where each block was last sent) and, where
the shard's worker runs with KV-cache events, confirmed (what vLLM reported stored and not
evicted, see worker/kvevents.py). Confirmed blocks replace the predictions for them; a
prediction on a shard with live events expires after ``predicted_ttl_s``, long enough to cover
the events' delay. A shard whose events stop is routed on prediction alone.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Sequence
from dataclasses import dataclass

import xxhash
from redis import Redis
from redis.client import Pipeline

from common import keys


class Policy(str, enum.Enum):
    """How a submission's requests are spread over shards."""

    AFFINITY = "affinity"
    ROUND_ROBIN = "round-robin"
    RANDOM = "random"


@dataclass(frozen=True)
class RoutingConfig:
    """The router's knobs (see the README for why these defaults)."""

    min_match_blocks: int = 1
    min_match_fraction: float = 0.25
    guard_abs_tokens: int = 4096
    guard_rel: float = 1.5
    affinity_ttl_s: int = 3600
    predicted_ttl_s: int = 300  # on shards whose KV events are live: covers the events' delay


@dataclass(frozen=True)
class Route:
    """Where one request goes and what the router assumed about it."""

    shard: str
    load_tokens: int  # uncached prompt tokens added to the shard's load
    matched_blocks: int  # the preferred shard's match (predicted or confirmed blocks)
    guarded: bool  # the load guard overrode the preferred shard
    confirmed_blocks: int = 0  # leading blocks the chosen shard's KV events confirm it holds


# KEYS: load hash, epoch hash, round-robin counter.
# ARGV: 1 policy, 2 shards (comma-separated), 3 block size, 4 min blocks, 5 min fraction,
#       6 guard abs, 7 guard rel, 8 prediction ttl, 9 key prefix (``prefixq:``), 10 prediction
#       ttl on a shard whose KV events are live; then four per request, in order: prompt tokens,
#       tie-break, random pick, block hashes (8 bytes each, concatenated, in prefix order).
#       Per-block and per-shard key names are built here from the prefix, as common/keys.py
#       names them, so a request sends 8 bytes a block, not key names.
# Returns one {shard, uncached tokens, matched blocks, guarded, confirmed blocks} per request.
#
# The requests are routed one after another, each seeing the load and predictions the ones
# before it left, as separate calls in that order would (but no other producer's request
# comes between them).
#
# A shard holds block b if b is confirmed there (in its confirmed set, while its KV events are
# live for its current epoch) or predicted there (the block was sent there in the shard's
# current epoch). A block's prediction key lists every shard it was sent to ("shard|epoch",
# comma-separated, the latest first): two documents that begin alike put their common blocks
# on both shards, and each document's later questions must still find their whole prefix on
# their own shard. Each shard's match is its longest run of held blocks from the start; the
# longest match is preferred (ties: least load, then the tie-break order).
_ROUTE_LUA = """
local shards = {}
for s in string.gmatch(ARGV[2], '[^,]+') do shards[#shards + 1] = s end
local n = #shards
local block_size = tonumber(ARGV[3])
local policy = ARGV[1]
local min_blocks, min_fraction = tonumber(ARGV[4]), tonumber(ARGV[5])
local guard_abs, guard_rel = tonumber(ARGV[6]), tonumber(ARGV[7])
local predicted_ttl, live_ttl = tonumber(ARGV[8]), tonumber(ARGV[10])
local loads = redis.call('HMGET', KEYS[1], unpack(shards))
local epochs = redis.call('HMGET', KEYS[2], unpack(shards))
local load, epoch, index, live = {}, {}, {}, {}
for i, s in ipairs(shards) do
  load[s] = tonumber(loads[i]) or 0
  epoch[s] = epochs[i] or '0'
  index[s] = i
  live[s] = redis.call('GET', ARGV[9] .. 'kv-live:' .. s) == epoch[s]
end
local aff_prefix, kv_prefix = ARGV[9] .. 'aff:', ARGV[9] .. 'kv:'

local function route(prompt_tokens, tie_break, random_pick, hashes)
  local num_blocks = math.floor(#hashes / 8)
  local function block(b) return string.sub(hashes, 8 * b - 7, 8 * b) end
  local function confirmed(s, b)
    return live[s] and redis.call('SISMEMBER', kv_prefix .. s, block(b)) == 1
  end
  -- the shards (of this request's, in their current epoch) that block b was sent to; read
  -- once per block, by the walk and again by the write below
  local predictions = {}
  local function predicted(b)
    if predictions[b] == nil then
      local on = {}
      local v = redis.call('GET', aff_prefix .. block(b))
      if v then
        for s, e in string.gmatch(v, '([^,|]+)|([^,]+)') do
          if index[s] ~= nil and epoch[s] == e then on[s] = true end
        end
      end
      predictions[b] = on
    end
    return predictions[b]
  end

  -- every shard's match, walked block by block while any shard still holds the prefix
  local match, walking, confirmed_match = {}, {}, {}
  for _, s in ipairs(shards) do match[s], walking[s], confirmed_match[s] = 0, true, 0 end
  local any = true
  for b = 1, num_blocks do
    if not any then break end
    any = false
    local predicted_on = predicted(b)
    for _, s in ipairs(shards) do
      if walking[s] then
        local is_confirmed = confirmed(s, b)
        if is_confirmed or predicted_on[s] then
          match[s], any = b, true
          if is_confirmed and confirmed_match[s] == b - 1 then confirmed_match[s] = b end
        else
          walking[s] = false
        end
      end
    end
  end

  local start = tie_break % n
  local least, preferred = shards[start + 1], nil
  for j = 0, n - 1 do
    local s = shards[(start + j) % n + 1]
    if load[s] < load[least] then least = s end
    if match[s] > 0 and (preferred == nil or match[s] > match[preferred]
        or (match[s] == match[preferred] and load[s] < load[preferred])) then
      preferred = s
    end
  end
  local matched = 0
  if preferred ~= nil then matched = match[preferred] end

  local chosen, guarded = least, 0
  if policy == 'round-robin' then
    chosen = shards[(redis.call('INCR', KEYS[3]) - 1) % n + 1]
  elseif policy == 'random' then
    chosen = shards[random_pick % n + 1]
  elseif preferred ~= nil and matched >= min_blocks
      and matched * block_size >= min_fraction * prompt_tokens then
    chosen = preferred
    if load[preferred] > load[least] + guard_abs and load[preferred] > guard_rel * load[least] then
      chosen, guarded = least, 1
    end
  end

  local uncached = prompt_tokens - match[chosen] * block_size
  redis.call('HINCRBY', KEYS[1], chosen, uncached)
  load[chosen] = load[chosen] + uncached
  -- predict the blocks the chosen shard is not confirmed to hold; once its events confirm
  -- them, the worker drops these entries and only the confirmed set speaks for them
  local mark = chosen .. '|' .. epoch[chosen]
  local ttl = predicted_ttl
  if live[chosen] then ttl = live_ttl end
  for b = 1, num_blocks do
    if b > confirmed_match[chosen] and not confirmed(chosen, b) then
      local marks, on = mark, predicted(b)
      for _, s in ipairs(shards) do
        if on[s] and s ~= chosen then marks = marks .. ',' .. s .. '|' .. epoch[s] end
      end
      redis.call('SET', aff_prefix .. block(b), marks, 'EX', ttl)
    end
  end
  return {chosen, uncached, matched, guarded, confirmed_match[chosen]}
end

local routes = {}
for i = 11, #ARGV, 4 do
  routes[#routes + 1] = route(tonumber(ARGV[i]), tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), ARGV[i + 3])
end
return routes
"""


# How many requests one script call routes: at most this many, and no more blocks than
# ROUTE_CHUNK_BLOCKS between them (but always one). Redis serves no other client while a script
# runs, and each block costs a few key lookups (a call of 4,096 blocks took about 17 ms on
# session 27's machine, one of 1,024 about 5 ms), so that a submission of long documents does
# not hold up the workers' pulls and writes much longer than its pipelined commands would.
ROUTE_CHUNK = 500
ROUTE_CHUNK_BLOCKS = 1024

# The script builds these names from the common prefix; keep them in step with common/keys.py.
_KEY_PREFIX = f"{keys.PREFIX}:"
assert keys.AFFINITY_PREFIX == _KEY_PREFIX + "aff:"
assert keys.kv_confirmed_key("s") == _KEY_PREFIX + "kv:s" and keys.kv_live_key("s") == _KEY_PREFIX + "kv-live:s"


class Router:
    """Chooses and reserves shards through one Lua script; safe across producers and hosts."""

    def __init__(self, redis: Redis, shards: Sequence[str], block_size: int,
                 config: RoutingConfig | None = None) -> None:
        self.shards, self.block_size = list(shards), block_size
        self.config = config or RoutingConfig()
        self._script = redis.register_script(_ROUTE_LUA)

    def route(self, pipe: Pipeline, requests: Sequence[tuple[Sequence[bytes], int]],
              policy: Policy = Policy.AFFINITY) -> None:
        """Queue the routing of ``requests`` (each its block hashes and prompt tokens), in
        order, on ``pipe``: several to a script call (up to :data:`ROUTE_CHUNK` requests and
        :data:`ROUTE_CHUNK_BLOCKS` blocks). The calls' replies decode with :func:`parse_routes`."""
        c = self.config
        head = [policy.value, ",".join(self.shards), self.block_size, c.min_match_blocks,
                repr(c.min_match_fraction), c.guard_abs_tokens, repr(c.guard_rel), c.affinity_ttl_s,
                _KEY_PREFIX, c.predicted_ttl_s]
        args, taken, blocks = list(head), 0, 0
        for hashes, prompt_tokens in requests:
            if taken and (taken == ROUTE_CHUNK or blocks + len(hashes) > ROUTE_CHUNK_BLOCKS):
                self._call(pipe, args)
                args, taken, blocks = list(head), 0, 0
            tie_break = xxhash.xxh32_intdigest(hashes[0]) if hashes else 0
            args += [prompt_tokens, tie_break, random.randrange(1 << 30), b"".join(hashes)]
            taken, blocks = taken + 1, blocks + len(hashes)
        if taken:
            self._call(pipe, args)

    def _call(self, pipe: Pipeline, args: list[object]) -> None:
        self._script(keys=[keys.LOAD_KEY, keys.EPOCH_KEY, keys.ROUND_ROBIN_KEY], args=args, client=pipe)


def parse_routes(replies: Sequence[Sequence[Sequence[object]]]) -> list[Route]:
    """Decode the replies of the calls :meth:`Router.route` queued: one route per request."""
    return [parse_route(reply) for call in replies for reply in call]


def parse_route(reply: Sequence[object]) -> Route:
    """Decode the script's reply for one request."""
    shard, load_tokens, matched, guarded, confirmed = reply
    assert isinstance(shard, bytes)
    return Route(shard.decode(), int(load_tokens), int(matched), bool(guarded),  # type: ignore[arg-type]
                 int(confirmed))  # type: ignore[arg-type]
