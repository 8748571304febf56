"""The long-lived worker loop: one event loop, one engine, batches in, results out.

Pulling, admission and result writing overlap: the loop pulls up to ``max_batch`` jobs while
the worker holds fewer than ``max_inflight`` started jobs (in the engine, or finished with
their results not yet stored) and the engine has fewer than ``lookahead_steps`` steps of
prompts waiting (:mod:`worker.admission`), admits every job of a batch at once
(each as its own task), and a writer task stores results as they complete, many per pipeline.
A worker whose own queue is empty while its engine wants more takes whole prefix groups from
the tail of a busier shard's queue (:mod:`worker.stealing`). Redis calls run in two threads
(one may block on an empty queue, the other writes), so the event loop driving the engine never
waits on Redis.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Coroutine, TypeVar

from redis.exceptions import AuthenticationError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from common import keys
from common.config import Settings
from common.errors import EngineDeadError
from common.model import block_hash_seed
from common.schema import Completion
from worker.admission import Lookahead
from worker.commands import RESET_PREFIX_CACHE, CommandListener, reply
from worker.engines import Engine
from worker.gcstats import GcMonitor
from worker.kvevents import KvEventsConsumer
from worker.metrics import WorkerMetrics
from worker.threads import name_this_thread
from worker.recovery import Reaper
from worker.rqbatch import Outcome, ShardQueue, Started
from worker.stealing import Stealer

log = logging.getLogger(__name__)
T = TypeVar("T")

BLOCK_S = 5.0  # how long a pull blocks on an empty queue (a stop wakes it at once)
BURST_BLOCK_S = 1.0  # the same in burst mode, where an empty queue means the end
WATCHDOG_S = 5.0  # how often an idle engine's liveness is checked (a request sees a death at once)
BUSY_BLOCK_S = 1.0  # while its jobs run, a worker that steals looks at other queues this often


class WorkerRunner:
    """Runs one shard's jobs on one engine until stopped (or, in burst mode, until drained)."""

    def __init__(self, settings: Settings, engine: Engine, rq: ShardQueue, model: str,
                 reaper: Reaper | None = None, metrics: WorkerMetrics | None = None) -> None:
        self.settings, self.engine, self.rq, self.model = settings, engine, rq, model
        self.reaper = reaper
        self.metrics = metrics or WorkerMetrics(rq.shard)
        self.gc = GcMonitor(on_pause=self.metrics.gc_pause_s.observe)
        self._running: dict[str, Started] = {}   # every started job until its result is stored
        self._in_engine: set[str] = set()          # the subset still in the engine
        self._done: asyncio.Queue[Outcome] = asyncio.Queue()
        self._can_pull = asyncio.Event()  # set when room may have opened: a result stored, an engine step
        step_tokens = engine.step_tokens
        self.lookahead = Lookahead(round(settings.lookahead_steps * step_tokens)
                                   if settings.lookahead_steps > 0 and step_tokens else None)
        # Taking work from other shards needs an engine that tells when it is short of work.
        self.stealer = Stealer(rq.connection, rq.codec, rq.shard, settings.shards,
                               rq.queue.intermediate_queue_key) \
            if settings.steal and self.lookahead.target_tokens is not None and len(settings.shards) > 1 else None
        self._stop = asyncio.Event()
        self._fatal: BaseException | None = None
        self._kv: KvEventsConsumer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._redis_delay_s = 0.1
        self._pulling = False  # a pull is out in the pull thread (and may be blocked)
        self._pull_thread = ThreadPoolExecutor(1, thread_name_prefix="prefixq-pull", initializer=name_this_thread)
        self._write_thread = ThreadPoolExecutor(1, thread_name_prefix="prefixq-write", initializer=name_this_thread)

    async def run(self, *, burst: bool = False) -> int:
        """Serve until SIGTERM/SIGINT (drain, then exit 0) or engine death (exit 1)."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.request_stop)
        while True:  # Redis may be restarting while this worker starts: wait for it
            try:
                await self._io(self._write_thread, self.rq.announce)
                break
            except (RedisConnectionError, RedisTimeoutError) as e:
                if isinstance(e, AuthenticationError):
                    raise  # a wrong password does not get better by waiting
                await self._backoff(f"registering failed ({e})")
        self._kv = kv_events = self._consume_kv_events()
        self._loop = loop
        commands = CommandListener(self.rq.connection, self.rq.name, self._on_command).start()
        writer = asyncio.create_task(self._write_results())
        writer.add_done_callback(self._on_writer_exit)
        beater = asyncio.create_task(self._heartbeat())
        reaper = asyncio.create_task(self._reap())
        watchdog = asyncio.create_task(self._watch_engine())
        self.engine.on_step(self._engine_stepped)
        self.gc.freeze_and_watch()
        log.info("worker %s ready: shard=%s epoch=%d model=%s engine=%s", self.rq.name,
                 self.rq.shard, self.rq.epoch, self.model, self.engine.name)
        try:
            await self._pull_loop(burst)
            await self._drain()
        finally:
            commands.stop()
            for task in (beater, writer, reaper, watchdog):
                task.cancel()
            await asyncio.gather(writer, beater, reaper, watchdog, return_exceptions=True)
            if kv_events is not None:  # a clean exit takes its confirmed blocks along
                forget = self._fatal is None
                await self._io(self._write_thread, lambda: kv_events.stop(forget=forget))
            if self._fatal is None:
                await self._io(self._write_thread, self.rq.retire)
            self._pull_thread.shutdown(wait=False, cancel_futures=True)
            self._write_thread.shutdown(wait=True)
            self.gc.stop()
            log.info("worker %s stages: %s", self.rq.name, self.metrics.stages.summary())
            if self.engine.step_trace is not None:  # benchmarks only (PREFIXQ_STEP_TRACE)
                log.info("worker %s steps: %s", self.rq.name,
                         {"shard": self.rq.shard, "steps": self.engine.step_trace})
            log.info("worker %s stopped: gc=%s", self.rq.name, self.gc.summary())
        if self._fatal is not None:
            log.error("worker %s: engine died, exiting non-zero: %s", self.rq.name, self._fatal)
            return 1
        return 0

    def _consume_kv_events(self) -> KvEventsConsumer | None:
        """Keep this shard's confirmed blocks in Redis from the engine's KV-cache events."""
        endpoints = self.engine.kv_endpoints
        if endpoints is None:
            return None
        return KvEventsConsumer(self.rq.connection, self.rq.shard, self.rq.epoch, endpoints,
                                block_size=self.settings.block_size,
                                seed=block_hash_seed(self.settings.model)).start()

    def _engine_stepped(self) -> None:
        running = self.engine.running()
        if running is not None:
            self.lookahead.stepped(running)
            self.metrics.engine_steps.inc()
            self.metrics.engine_waiting.set(self.lookahead.num_waiting())
        self._can_pull.set()

    def _on_writer_exit(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            self._die(task.exception())

    def _die(self, error: BaseException | None) -> None:
        """Stop on a fatal error: no more pulls, no draining, exit status 1."""
        self._fatal = error
        self._stop.set()
        self._can_pull.set()  # wake a pull loop waiting for room
        self._end_pull()

    def _on_command(self, payload: dict[str, Any]) -> None:
        """A command from Redis (called in the listener's thread): run it on the event loop."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._command, payload)

    def _command(self, payload: dict[str, Any]) -> None:
        command = payload["command"]
        if command == "shutdown":  # RQ's send_shutdown_command
            log.info("worker %s: shutdown command received", self.rq.name)
            self.request_stop()
        elif command == RESET_PREFIX_CACHE:
            reply_to = payload.get("reply_to")
            if not isinstance(reply_to, str) or not keys.is_reply_key(reply_to):
                reply_to = None  # a worker writes only to reply lists
            self._spawn(self._reset_prefix_cache(reply_to))
        else:
            log.warning("worker %s: command %r is not supported by prefixq workers; ignored",
                        self.rq.name, command)

    async def _reset_prefix_cache(self, reply_to: str | None) -> None:
        """Empty the engine's prefix cache and start a new epoch, so routing forgets what this
        shard held (as if the worker had restarted); reply with the outcome."""
        try:
            ok = await self.engine.reset_prefix_cache()
            if ok:
                epoch = await self._io(self._write_thread, self.rq.new_epoch)
                if self._kv is not None and not await asyncio.to_thread(self._kv.follow_epoch, epoch):
                    log.warning("worker %s: KV events consumer has not moved to epoch %d; routing falls "
                                "back to prediction for this shard until it does", self.rq.name, epoch)
            running = len(self._running)
            log.info("worker %s: prefix cache %s (epoch %d, %d job(s) running)", self.rq.name,
                     "reset" if ok else "not reset: the engine refused", self.rq.epoch, running)
            if reply_to is not None:
                answer = {"worker": self.rq.name, "shard": self.rq.shard, "ok": ok,
                          "epoch": self.rq.epoch, "running": running}
                await self._io(self._write_thread, reply, self.rq.connection, reply_to, answer)
        except Exception:  # the sender sees no reply and says so; the worker goes on
            log.exception("worker %s: resetting the prefix cache failed", self.rq.name)

    def request_stop(self) -> None:
        """Stop pulling; finish what is in flight (SIGTERM's meaning)."""
        if not self._stop.is_set():
            log.info("worker %s: stop requested, draining %d job(s)", self.rq.name, len(self._running))
        self._stop.set()
        self._end_pull()

    def _end_pull(self) -> None:
        if self._pulling:
            self._spawn(self._wake_pull())

    async def _wake_pull(self) -> None:
        """Stopping: end a pull blocked on the empty queue rather than wait out its block. The
        pull may not be blocked yet when the first wake arrives, hence the repeats."""
        while self._pulling:
            try:
                await asyncio.to_thread(self.rq.wake)
            except RedisError:
                return  # the pull fails on its own, or ends when its block runs out
            await asyncio.sleep(0.1)

    async def _io(self, thread: ThreadPoolExecutor, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(thread, fn, *args)

    async def _pull_loop(self, burst: bool) -> None:
        block_s = BURST_BLOCK_S if burst else BLOCK_S
        while not self._stop.is_set():
            room, wanted = self._room()
            if wanted <= 0:
                self._can_pull.clear()
                await self._can_pull.wait()
                continue
            idle = not self._running
            try:
                ids = await self._take(wanted, room, idle, block_s)
                if self._stop.is_set() and ids:
                    await self._io(self._write_thread, self.rq.give_back, ids)
                    break
                started = await self._io(self._pull_thread, self.metrics.stages.time, "start", len,
                                         self.rq.start, ids) if ids else []
            except (RedisConnectionError, RedisTimeoutError) as e:
                # Ids moved but not started stay in the intermediate list; the next start of a
                # worker for this shard (or a reaper, if the shard stays down) puts them back.
                await self._backoff(f"pulling failed ({e})")
                continue
            self._redis_delay_s = 0.1
            if not ids:
                if burst and idle and self._done.empty():
                    break
                continue
            self.metrics.batch_size.observe(len(started))
            for s in started:
                self._admit(s)
            self.metrics.in_flight.set(len(self._in_engine))

    def _room(self) -> tuple[int, int]:
        """How many jobs this worker may start now, and how many it wants (0: none).

        Every job held started counts against ``max_inflight``, in the engine or waiting for
        its result to be stored: with slow writes a fast engine would otherwise let the worker
        start jobs without bound (each one held until its lease runs out if the worker dies).
        While the engine reports what it runs, it wants only as many as bring the prompts it
        has not begun up to the lookahead."""
        room = min(self.settings.max_batch, self.settings.max_inflight - len(self._running))
        wanted = self.lookahead.wanted_tokens()
        if room <= 0 or wanted is None:
            return room, room
        return room, (min(room, self.lookahead.jobs_for(wanted)) if wanted > 0 else 0)

    async def _take(self, wanted: int, room: int, idle: bool, block_s: float) -> list[bytes]:
        """Ids for about ``wanted`` jobs: from this shard's queue, else (stealing) whole groups
        from the tail of a busier shard's, up to a lookahead's worth and ``room`` jobs. An empty
        queue is waited on in the pull thread (BLMOVE), never polled, so the event loop keeps
        driving the engine, no CPU goes to asking Redis again and jobs for this shard are taken
        the moment they arrive. A worker that steals looks at the other shards' queues when
        that wait runs out: every ``BUSY_BLOCK_S`` while its jobs run, every ``block_s`` idle."""
        window_s = self.settings.batch_wait_ms / 1000.0
        if self.stealer is None:
            return await self._pull(wanted, block_s, window_s)
        ids = [] if self.rq.drained else await self._pull(wanted, 0.0, window_s)
        if not ids:
            budget = self.lookahead.target_tokens or 0
            ids = await self._io(self._pull_thread, self.metrics.stages.time, "steal", len,
                                 self.stealer.steal, budget, room)
        if ids:
            return ids
        return await self._pull(wanted, block_s if idle else BUSY_BLOCK_S, window_s)

    async def _pull(self, room: int, block_s: float, window_s: float) -> list[bytes]:
        self._pulling = True  # a stop wakes a blocked pull (see _end_pull)
        try:
            return await self._io(self._pull_thread, self.metrics.stages.time, "pull", len,
                                  self.rq.pull, room, block_s, window_s)
        finally:
            self._pulling = False

    async def _backoff(self, what: str) -> None:
        log.warning("worker %s: %s; retrying in %.1f s", self.rq.name, what, self._redis_delay_s)
        await asyncio.sleep(self._redis_delay_s)
        self._redis_delay_s = min(self._redis_delay_s * 2, 10.0)

    def _admit(self, started: Started) -> None:
        self._running[started.job.id] = started
        if started.request is None or started.error is not None:
            outcome = Outcome(started, error=started.error)
            self._record(outcome, engine_s=None)
            self._done.put_nowait(outcome)
            return
        self._in_engine.add(started.job.id)
        self.lookahead.admitted(started.job.id, _prefill_tokens(started))
        self._spawn(self._run_job(started))

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run ``coro`` as a task the drain at shutdown waits for."""
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run_job(self, started: Started) -> None:
        request = started.request
        assert request is not None
        t0 = time.perf_counter()
        admit_ms = max(0.0, (time.time() - started.started_at) * 1e3)
        self.metrics.prompt_sent(started.prompt)
        try:
            async with asyncio.timeout(started.job.timeout or self.settings.job_timeout_s):
                out = await self.engine.generate(started.request_id, started.prompt, request.sampling)
        except EngineDeadError as e:
            self._die(e)
            return
        except TimeoutError:
            outcome = Outcome(started, error=f"job timed out after {started.job.timeout} s in the engine")
        except Exception as e:  # the job boundary: one bad request fails alone
            outcome = Outcome(started, error=f"{type(e).__name__}: {e}")
        else:
            outcome = Outcome(started, completion=Completion(
                text=out.text, finish_reason=out.finish_reason, prompt_tokens=out.prompt_tokens,
                cached_tokens=out.cached_tokens, completion_tokens=out.completion_tokens,
                shard=self.rq.shard, worker=self.rq.name,
                timings_ms={"queue": _queue_ms(started), "admit": admit_ms,
                            "engine": (time.perf_counter() - t0) * 1e3}))
        finally:
            self._in_engine.discard(started.job.id)
            self.lookahead.left(started.job.id)
            self.metrics.in_flight.set(len(self._in_engine))
            # vLLM reports a step after handing out its outputs: the last job of a burst was
            # still counted as waiting at the engine's last report.
            self.metrics.engine_waiting.set(self.lookahead.num_waiting())
        self._record(outcome, engine_s=time.perf_counter() - t0)
        self._done.put_nowait(outcome)

    def _record(self, outcome: Outcome, engine_s: float | None) -> None:
        c = outcome.completion
        self.metrics.job_done(ok=c is not None, prompt_tokens=c.prompt_tokens if c else 0,
                              cached_tokens=c.cached_tokens if c else 0,
                              completion_tokens=c.completion_tokens if c else 0,
                              queue_wait_s=_queue_ms(outcome.started) / 1000.0, engine_s=engine_s)

    async def _write_results(self) -> None:
        """Store outcomes as they arrive: everything ready goes out in one pipeline."""
        while True:
            batch = [await self._done.get()]
            while not self._done.empty():
                batch.append(self._done.get_nowait())
            await self._store(batch)
            for outcome in batch:
                self._running.pop(outcome.started.job.id, None)
            self._can_pull.set()  # room for more jobs

    async def _store(self, batch: list[Outcome]) -> None:
        """Write a batch of outcomes, retrying with back-off while Redis is unreachable."""
        delay_s = 0.1
        while True:
            try:
                await asyncio.shield(self._io(self._write_thread, self.metrics.stages.time, "finish",
                                              lambda _: len(batch), self.rq.finish, batch))
                return
            except (RedisConnectionError, RedisTimeoutError) as e:
                log.warning("worker %s: storing %d result(s) failed (%s); retrying in %.1f s",
                            self.rq.name, len(batch), e, delay_s)
                await asyncio.sleep(delay_s)
                delay_s = min(delay_s * 2, 10.0)
            except Exception:  # a bug in one outcome must not lose the others, nor the worker
                log.exception("worker %s: storing a batch failed; storing one by one", self.rq.name)
                for outcome in batch:
                    try:
                        await self._io(self._write_thread, self.rq.finish, [outcome])
                    except Exception:  # left started: its lease runs out and it is rerun
                        log.exception("worker %s: cannot store job %s", self.rq.name,
                                      outcome.started.job.id)
                return

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(self.settings.heartbeat_interval_s)
            try:
                await self._io(self._write_thread, self.rq.beat, list(self._running.values()))
            except (RedisConnectionError, RedisTimeoutError) as e:
                log.warning("worker %s: heartbeat failed (%s); next in %.0f s", self.rq.name, e,
                            self.settings.heartbeat_interval_s)
            except Exception:  # a missed beat is retried next interval; losing the loop is worse
                log.exception("worker %s: heartbeat failed", self.rq.name)

    async def _reap(self) -> None:
        """Recover jobs of dead workers (on any shard) every few heartbeats."""
        if self.reaper is None:
            return
        while True:
            await asyncio.sleep(2 * self.settings.heartbeat_interval_s)
            try:
                await self._io(self._write_thread, self.reaper.reap)
            except (RedisConnectionError, RedisTimeoutError) as e:
                log.warning("worker %s: recovering abandoned jobs failed (%s)", self.rq.name, e)
            except Exception:  # retried next interval
                log.exception("worker %s: recovering abandoned jobs failed", self.rq.name)

    async def _watch_engine(self) -> None:
        """End the worker when its engine dies, even if no running request notices."""
        while True:
            await asyncio.sleep(WATCHDOG_S)
            if not self.engine.is_alive():
                self._die(EngineDeadError("the engine's processes exited"))
                return

    async def _drain(self) -> None:
        """Let every admitted job finish and every result be stored (unless the engine died:
        then nothing more will finish, and the started jobs are left to lease expiry)."""
        while (self._tasks or self._running) and self._fatal is None:
            await asyncio.sleep(0.01)
        for task in list(self._tasks):
            task.cancel()


def _prefill_tokens(started: Started) -> int:
    """The prefill work a job brings: the router's estimate of its uncached prompt tokens, else
    its prompt's length (4 characters a token for text)."""
    request = started.request
    if request is not None and request.load_tokens > 0:
        return request.load_tokens
    prompt = started.prompt
    return max(1, len(prompt) // 4 if isinstance(prompt, str) else len(prompt))


def _queue_ms(started: Started) -> float:
    enqueued = started.job.enqueued_at
    return max(0.0, (started.started_at - enqueued.timestamp()) * 1e3) if enqueued else 0.0
