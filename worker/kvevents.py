"""What each shard's KV cache really holds, from vLLM's own KV-cache events, kept in Redis.

The router predicts where a prefix lives from where it was sent; that guess goes stale when
vLLM evicts blocks or restarts. Each worker therefore starts its engine with KV-cache events
published on a local ZMQ endpoint and runs a :class:`KvEventsConsumer` thread that

* reads ``BlockStored``, ``BlockRemoved`` and ``AllBlocksCleared`` for its own engine;
* maps vLLM's block hashes to the producers' block keys by recomputing the producers' chained
  hashes from the events' token ids (:class:`BlockMap`), so nothing depends on vLLM's hash
  function or seed;
* applies the changes to its shard's confirmed set in Redis in batches, with its epoch (a
  worker that is no longer the shard's current one writes nothing), and drops the routing
  predictions its confirmations supersede;
* keeps a short-lived "live" key while the publisher answers; when events stop, the key
  expires and routing falls back to prediction for that shard (``prefixq status`` says so).

Events carry sequence numbers; a gap, or a quiet spell, is answered by asking the publisher's
replay endpoint for everything after the last batch seen, which doubles as the liveness probe.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import zmq
from redis import Redis
from redis.exceptions import RedisError

from common import keys
from common.blocks import block_hashes
from worker.threads import name_this_thread

log = logging.getLogger(__name__)

TOPIC = "kv"
END_SEQ = -1  # the replay endpoint's end-of-replay marker


@dataclass(frozen=True)
class Endpoints:
    """Where one engine publishes its events (local IPC sockets, private to this worker)."""

    pub: str
    replay: str
    folder: str = ""  # the private directory holding the sockets, if any

    @classmethod
    def private(cls) -> Endpoints:
        """Fresh endpoints in a directory only this process knows."""
        folder = tempfile.mkdtemp(prefix="prefixq-kv-")
        return cls(pub=f"ipc://{os.path.join(folder, 'pub')}",
                   replay=f"ipc://{os.path.join(folder, 'replay')}", folder=folder)

    def remove(self) -> None:
        """Delete the sockets' directory (once the publisher is gone)."""
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)


@dataclass
class Changes:
    """Confirmed-set changes waiting to be written: producer block keys added and removed."""

    added: set[bytes] = field(default_factory=set)
    removed: set[bytes] = field(default_factory=set)
    cleared: bool = False

    def add(self, key: bytes) -> None:
        self.removed.discard(key)
        self.added.add(key)

    def remove(self, key: bytes) -> None:
        self.added.discard(key)
        self.removed.add(key)

    def clear(self) -> None:
        self.added.clear()
        self.removed.clear()
        self.cleared = True

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.cleared)


class BlockMap:
    """vLLM block hash -> the producers' block key, for the blocks an engine holds.

    A producer key is :func:`common.blocks.block_hashes` of the block's tokens chained on its
    parent's key, so a stored block's key follows from its parent's key and its token ids. The
    same content can sit in more than one vLLM block; a key stays confirmed until every block
    holding it is removed.
    """

    def __init__(self, block_size: int, seed: int) -> None:
        self.block_size, self.seed = block_size, seed
        self._key: dict[Any, bytes] = {}       # vLLM hash -> producer key
        self._count: dict[bytes, int] = {}     # producer key -> blocks holding it
        self.skipped = 0  # blocks whose parent was unknown or whose size differs from ours

    def __len__(self) -> int:
        return len(self._count)

    def stored(self, vllm_hashes: Sequence[Any], parent: Any, token_ids: Sequence[int],
               block_size: int, changes: Changes) -> None:
        """Blocks ``vllm_hashes`` (chained on ``parent``) now hold ``token_ids``."""
        if block_size != self.block_size or len(token_ids) != block_size * len(vllm_hashes):
            self.skipped += len(vllm_hashes)
            return
        if parent is None:
            seed_key = None
        else:
            seed_key = self._key.get(parent)
            if seed_key is None:  # its parent was never seen (or is gone): not reachable
                self.skipped += len(vllm_hashes)
                return
        ours = block_hashes(token_ids, block_size, self.seed, parent=seed_key)
        for vllm_hash, key in zip(vllm_hashes, ours):
            if vllm_hash in self._key:
                continue  # the same block reported twice
            self._key[vllm_hash] = key
            count = self._count.get(key, 0) + 1
            self._count[key] = count
            if count == 1:
                changes.add(key)

    def removed(self, vllm_hashes: Iterable[Any], changes: Changes) -> None:
        """Blocks ``vllm_hashes`` were evicted."""
        for vllm_hash in vllm_hashes:
            key = self._key.pop(vllm_hash, None)
            if key is None:
                continue
            count = self._count[key] - 1
            if count:
                self._count[key] = count
            else:
                del self._count[key]
                changes.remove(key)

    def cleared(self, changes: Changes) -> None:
        """The engine dropped every cached block."""
        self._key.clear()
        self._count.clear()
        changes.clear()


# KEYS: confirmed set, live key, epoch hash, events-mode key.
# ARGV: shard, epoch, live ttl (s; 0: not live, drop the key), cleared (0/1), number added,
#       affinity key prefix, then the added keys, then the removed keys (8 raw bytes each).
# A worker whose epoch is no longer the shard's writes nothing (returns 0). Confirmed blocks
# supersede this shard's predictions for them: its entries are dropped from those affinity
# keys (other shards' stay), so once events confirm a block only the confirmed set speaks for
# it on this shard (and an eviction is seen).
_APPLY_LUA = """
if redis.call('HGET', KEYS[3], ARGV[1]) ~= ARGV[2] then return 0 end
if ARGV[4] == '1' then redis.call('DEL', KEYS[1]) end
local num_added = tonumber(ARGV[5])
local mark = ARGV[1] .. '|' .. ARGV[2]
for i = 7, 6 + num_added do
  redis.call('SADD', KEYS[1], ARGV[i])
  local aff = ARGV[6] .. ARGV[i]
  local rest, found = {}, false  -- this shard's entry goes; other shards' stay
  for entry in string.gmatch(redis.call('GET', aff) or '', '[^,]+') do
    if entry == mark then found = true else rest[#rest + 1] = entry end
  end
  if found and #rest == 0 then redis.call('DEL', aff)
  elseif found then redis.call('SET', aff, table.concat(rest, ','), 'KEEPTTL') end
end
for i = 7 + num_added, #ARGV do redis.call('SREM', KEYS[1], ARGV[i]) end
if ARGV[3] == '0' then redis.call('DEL', KEYS[2])
else redis.call('SET', KEYS[2], ARGV[2], 'EX', tonumber(ARGV[3])) end
redis.call('SET', KEYS[4], ARGV[2])
return 1
"""

MAX_KEYS_PER_CALL = 4096  # bounds one script call's arguments


class KvEventsConsumer:
    """Subscribes to one engine's KV-cache events and keeps its shard's confirmed set current."""

    def __init__(self, redis: Redis, shard: str, epoch: int, endpoints: Endpoints, *,
                 block_size: int, seed: int, flush_interval_s: float = 2.0,
                 probe_interval_s: float = 1.0, live_ttl_s: float = 5.0) -> None:
        """Changes are written every ``flush_interval_s`` at most (each write wakes this thread
        and Redis on cores the engines share; routing's predictions cover the gap), the live key
        refreshed every ``max(flush_interval_s, probe_interval_s)`` and kept for ``live_ttl_s``;
        a publisher quiet for ``probe_interval_s`` is asked for a replay."""
        from vllm.distributed.kv_events import KVEventBatch  # the publisher's own schema
        import msgspec

        self.redis, self.shard, self.epoch, self.endpoints = redis, shard, epoch, endpoints
        self.blocks = BlockMap(block_size, seed)
        self.flush_interval_s, self.probe_interval_s = flush_interval_s, probe_interval_s
        self.refresh_interval_s = max(flush_interval_s, probe_interval_s)
        self.live_ttl_s = max(1, int(live_ttl_s + 0.999))
        if self.live_ttl_s <= self.refresh_interval_s:
            raise ValueError(f"live_ttl_s ({live_ttl_s:g}) must outlast the live key's refresh interval "
                             f"({self.refresh_interval_s:g} s)")
        self._decoder = msgspec.msgpack.Decoder(KVEventBatch)
        self._apply = redis.register_script(_APPLY_LUA)
        self._changes = Changes(cleared=True)  # a new epoch starts with an empty confirmed set
        self._last_seq: int | None = None
        self._next_epoch: tuple[int, threading.Event] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"prefixq-kv-{shard}", daemon=True)
        self.live = False
        self._live_changed = False
        self.batches = 0

    def start(self) -> KvEventsConsumer:
        self._thread.start()
        return self

    def stop(self, *, forget: bool) -> None:
        """Stop consuming; with ``forget`` (a clean exit) the shard's confirmed set is dropped."""
        self._stop.set()
        self._thread.join(timeout=5)
        if forget:
            try:
                with self.redis.pipeline() as pipe:
                    pipe.delete(keys.kv_confirmed_key(self.shard), keys.kv_live_key(self.shard),
                                keys.kv_events_key(self.shard))
                    pipe.execute()
            except RedisError as e:
                log.warning("shard %s: could not drop its confirmed blocks (%s)", self.shard, e)

    def follow_epoch(self, epoch: int, timeout_s: float = 5.0) -> bool:
        """Write under the shard's new ``epoch`` from now on, starting from an empty confirmed
        set (the engine's prefix cache was reset). Returns once that is written (False: not
        within ``timeout_s``, or the consumer is not running)."""
        written = threading.Event()
        self._next_epoch = (epoch, written)
        return self._thread.is_alive() and written.wait(timeout_s)

    # -- the thread -------------------------------------------------------------------------

    def _run(self) -> None:
        name_this_thread()
        ctx = zmq.Context.instance()
        sub = ctx.socket(zmq.SUB)
        sub.setsockopt_string(zmq.SUBSCRIBE, TOPIC)
        sub.connect(self.endpoints.pub)
        replay: zmq.Socket[Any] | None = None
        last_flush = last_event = last_probe = time.monotonic()
        try:
            self._flush()  # the new epoch's empty set, and the "events on" mark
            while not self._stop.is_set():
                if self._next_epoch is not None:
                    (self.epoch, written), self._next_epoch = self._next_epoch, None
                    self._changes.cleared = True  # anything older belongs to the old epoch
                    self._flush()
                    written.set()
                # Every wake-up costs CPU the engines could use. While changes wait for a flush,
                # sleep until it is due and take the events queued meanwhile all at once; else
                # sleep until an event arrives or the next probe is due.
                if self._changes:
                    self._stop.wait(max(0.0, last_flush + self.flush_interval_s - time.monotonic()))
                    ready = bool(sub.poll(0))
                else:
                    ready = bool(sub.poll(int(self.probe_interval_s * 1000)))
                if ready:
                    while True:
                        try:
                            topic, seq_bytes, payload = sub.recv_multipart(zmq.NOBLOCK)
                        except zmq.Again:
                            break
                        seq = int.from_bytes(seq_bytes, "big", signed=True)
                        if self._last_seq is not None and seq > self._last_seq + 1:
                            replay = self._replay(ctx, replay)  # fill the gap first
                        self._take(seq, payload)
                    last_event = time.monotonic()
                    self._set_live(True)
                now = time.monotonic()
                if now - last_event >= self.probe_interval_s and now - last_probe >= self.probe_interval_s:
                    last_probe = now
                    replay = self._replay(ctx, replay)
                if self._changes and now - last_flush >= self.flush_interval_s:
                    last_flush = now
                    self._flush()
                elif self._live_changed or (self.live and now - last_flush >= self.refresh_interval_s):
                    last_flush = now
                    self._flush()  # refreshes the live key
        except Exception:  # the worker goes on; routing falls back to prediction
            log.exception("shard %s: KV events consumer failed; routing falls back to prediction",
                          self.shard)
        finally:
            sub.close(linger=0)
            if replay is not None:
                replay.close(linger=0)

    def _take(self, seq: int, payload: bytes) -> None:
        from vllm.distributed.kv_events import AllBlocksCleared, BlockRemoved, BlockStored

        if self._last_seq is not None and seq <= self._last_seq:
            return  # already applied (a replay overlapping the live stream)
        self._last_seq = seq
        self.batches += 1
        for event in self._decoder.decode(payload).events:
            if isinstance(event, BlockStored):
                self.blocks.stored(event.block_hashes, event.parent_block_hash, event.token_ids,
                                   event.block_size, self._changes)
            elif isinstance(event, BlockRemoved):
                self.blocks.removed(event.block_hashes, self._changes)
            elif isinstance(event, AllBlocksCleared):
                self.blocks.cleared(self._changes)

    def _replay(self, ctx: zmq.Context[Any], sock: zmq.Socket[Any] | None) -> zmq.Socket[Any] | None:
        """Ask for every batch after the last one seen; an answer also proves the publisher is up."""
        if sock is None:
            sock = ctx.socket(zmq.DEALER)
            sock.connect(self.endpoints.replay)
        start = 0 if self._last_seq is None else self._last_seq + 1
        sock.send_multipart([b"", start.to_bytes(8, "big")])
        deadline = time.monotonic() + self.probe_interval_s
        while time.monotonic() < deadline:
            if not sock.poll(max(1, int((deadline - time.monotonic()) * 1000))):
                break
            frames = sock.recv_multipart()
            if len(frames) != 4:
                continue
            _, _, seq_bytes, payload = frames
            seq = int.from_bytes(seq_bytes, "big", signed=True)
            if seq == END_SEQ:
                self._set_live(True)
                return sock
            self._take(seq, payload)
        # No end marker in time: the publisher is gone or stuck. A fresh socket next time, so
        # a late answer to this request cannot be mistaken for the next one's.
        sock.close(linger=0)
        self._set_live(False)
        return None

    def _set_live(self, live: bool) -> None:
        if live != self.live:
            if live:
                log.info("shard %s: KV events live; routing uses confirmed blocks", self.shard)
            else:
                log.warning("shard %s: KV events stopped; routing falls back to prediction", self.shard)
            self._live_changed = True
        self.live = live

    def _flush(self) -> None:
        """Write the pending changes (and, while the publisher answers, refresh the live key)."""
        self._live_changed = False
        changes = self._changes
        added, removed = list(changes.added), list(changes.removed)
        cleared = changes.cleared
        try:
            while True:
                take_added = added[:MAX_KEYS_PER_CALL]
                take_removed = removed[:MAX_KEYS_PER_CALL - len(take_added)]
                ok = self._apply(
                    keys=[keys.kv_confirmed_key(self.shard), keys.kv_live_key(self.shard),
                          keys.EPOCH_KEY, keys.kv_events_key(self.shard)],
                    args=[self.shard, self.epoch, self.live_ttl_s if self.live else 0, int(cleared),
                          len(take_added), keys.AFFINITY_PREFIX, *take_added, *take_removed])
                if not ok:
                    log.warning("shard %s: epoch %d is no longer current; confirmed blocks not written",
                                self.shard, self.epoch)
                    self._changes = Changes()
                    return
                del added[:len(take_added)], removed[:len(take_removed)]
                cleared = False
                if not added and not removed:
                    self._changes = Changes()
                    return
        except RedisError as e:  # what was not written waits for the next flush
            log.warning("shard %s: writing confirmed blocks failed (%s); retrying", self.shard, e)
            changes.added, changes.removed, changes.cleared = set(added), set(removed), cleared
