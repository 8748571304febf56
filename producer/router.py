"""Prefix-affinity routing that any number of producers share through Redis.

For each request the producer computes chained block hashes of its token ids; one Lua script
then, atomically, finds the longest run of those blocks already sent to a live shard (the
shard's epoch must still match), applies the minimum match and the load guard, picks a shard,
adds the request's uncached prompt tokens to that shard's load, and records every block as
held by that shard. Workers take the load off as jobs finish and bump their shard's epoch
when they start (a restarted engine holds nothing).
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


@dataclass(frozen=True)
class Route:
    """Where one request goes and what the router assumed about it."""

    shard: str
    load_tokens: int  # uncached prompt tokens added to the shard's load
    matched_blocks: int
    guarded: bool  # the load guard overrode the preferred shard


# KEYS: load hash, epoch hash, round-robin counter.
# ARGV: policy, shards (comma-separated), prompt tokens, block size, min blocks, min fraction,
#       guard abs, guard rel, ttl, tie-break, random pick, affinity key prefix, block hashes
#       (8 bytes each, concatenated, in prefix order). Affinity keys are the prefix followed by
#       the 8 raw hash bytes, built here so a request sends 8 bytes a block, not a key name.
_ROUTE_LUA = """
local shards = {}
for s in string.gmatch(ARGV[2], '[^,]+') do shards[#shards + 1] = s end
local n = #shards
local prompt_tokens = tonumber(ARGV[3])
local block_size = tonumber(ARGV[4])
local loads = redis.call('HMGET', KEYS[1], unpack(shards))
local epochs = redis.call('HMGET', KEYS[2], unpack(shards))
local load, epoch, index = {}, {}, {}
for i, s in ipairs(shards) do
  load[s] = tonumber(loads[i]) or 0
  epoch[s] = epochs[i] or '0'
  index[s] = i
end

local hashes = ARGV[13]
local num_blocks = math.floor(#hashes / 8)
local function aff_key(b) return ARGV[12] .. string.sub(hashes, 8 * b - 7, 8 * b) end

local matched, preferred = 0, nil
for b = 1, num_blocks do
  local v = redis.call('GET', aff_key(b))
  if not v then break end
  local sep = string.find(v, '|', 1, true)
  local s, e = string.sub(v, 1, sep - 1), string.sub(v, sep + 1)
  if index[s] == nil or epoch[s] ~= e then break end
  matched, preferred = b, s
end

local start = tonumber(ARGV[10]) % n
local least = shards[start + 1]
for j = 1, n - 1 do
  local s = shards[(start + j) % n + 1]
  if load[s] < load[least] then least = s end
end

local chosen, guarded, policy = least, 0, ARGV[1]
if policy == 'round-robin' then
  chosen = shards[(redis.call('INCR', KEYS[3]) - 1) % n + 1]
elseif policy == 'random' then
  chosen = shards[tonumber(ARGV[11]) % n + 1]
elseif preferred ~= nil and matched >= tonumber(ARGV[5])
    and matched * block_size >= tonumber(ARGV[6]) * prompt_tokens then
  chosen = preferred
  if load[preferred] > load[least] + tonumber(ARGV[7])
      and load[preferred] > tonumber(ARGV[8]) * load[least] then
    chosen, guarded = least, 1
  end
end

local uncached = prompt_tokens
if chosen == preferred then uncached = prompt_tokens - matched * block_size end
redis.call('HINCRBY', KEYS[1], chosen, uncached)
local mark = chosen .. '|' .. epoch[chosen]
for b = 1, num_blocks do redis.call('SET', aff_key(b), mark, 'EX', tonumber(ARGV[9])) end
return {chosen, uncached, matched, guarded}
"""


class Router:
    """Chooses and reserves shards through one Lua script; safe across producers and hosts."""

    def __init__(self, redis: Redis, shards: Sequence[str], block_size: int,
                 config: RoutingConfig | None = None) -> None:
        self.shards, self.block_size = list(shards), block_size
        self.config = config or RoutingConfig()
        self._script = redis.register_script(_ROUTE_LUA)

    def route(self, pipe: Pipeline, hashes: Sequence[bytes], prompt_tokens: int,
              policy: Policy = Policy.AFFINITY) -> None:
        """Queue one routing call on ``pipe``; its reply decodes with :func:`parse_route`."""
        c = self.config
        tie_break = xxhash.xxh32_intdigest(hashes[0]) if hashes else 0
        self._script(
            keys=[keys.LOAD_KEY, keys.EPOCH_KEY, keys.ROUND_ROBIN_KEY],
            args=[policy.value, ",".join(self.shards), prompt_tokens, self.block_size,
                  c.min_match_blocks, repr(c.min_match_fraction), c.guard_abs_tokens,
                  repr(c.guard_rel), c.affinity_ttl_s, tie_break, random.randrange(1 << 30),
                  keys.AFFINITY_PREFIX, b"".join(hashes)],
            client=pipe)


def parse_route(reply: Sequence[object]) -> Route:
    """Decode the script's reply."""
    shard, load_tokens, matched, guarded = reply
    assert isinstance(shard, bytes)
    return Route(shard.decode(), int(load_tokens), int(matched), bool(guarded))  # type: ignore[arg-type]
